"""Calendar and email: creating, listing and cancelling events; sending and searching email;
out-of-office replies.
"""

from __future__ import annotations

from tasks.library.common import DAY, EMAIL, NOTE, choices, enum_opt, ident, opt, req
from tasks.library.ranges import date_range
from tasks.spec import ToolSpec
from tasks.value_generators import ClockTime, Composed, Flag, Integer, ListOf, Quoted, Record

_MEETING = Quoted(
    (
        "Quarterly planning",
        "Dentist",
        "1:1 with Sam",
        "Design review",
        "Budget sync",
        "Team lunch",
        "Interview loop",
        "Gym session",
        "Parent-teacher meeting",
        "Launch retro",
        "Vendor call",
    ),
    ("", " (remote)", " - prep", " round 2"),
)
_REMINDER = Record(
    (
        ("minutes_before", Integer(5, 120, "{} minutes", 5)),
        ("method", choices(("email", "email"), ("popup", ("pop-up", "notification")))),
    ),
    "remind me by {method} {minutes_before} before",
)
_TOPIC = Composed(
    (
        (
            "invoice",
            "contract",
            "offsite",
            "budget",
            "visa",
            "lease",
            "onboarding",
            "quarterly report",
            "refund",
            "flight change",
            "security audit",
            "hiring plan",
        ),
        ("", " draft", " update", " renewal", " approval", " deadline"),
    ),
    "{0}{1}",
    quote=True,
)

# A leave: its last day 1..30 days after its first (an end never before its start).
_AWAY = date_range(1, 30, vague=("the first day I'm away", "the day I'm back"))

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "create_event",
        "calendar_email",
        "Adds an event to the user's calendar.",
        (
            req("title", "string", "Event title.", _MEETING),
            req("date", "string", "Day of the event, YYYY-MM-DD.", DAY),
            req("start_time", "string", "Start time, HH:MM, 24-hour clock.", ClockTime()),
            opt(
                "duration_minutes",
                "integer",
                "Length in minutes.",
                Integer(15, 240, "{} minutes", 15),
                default=60,
            ),
            opt(
                "attendees",
                "array",
                "Email addresses of the people to invite.",
                ListOf(EMAIL, 1, 3),
                items={"type": "string"},
            ),
            opt(
                "reminder",
                "dict",
                "When and how to remind the user.",
                _REMINDER,
                properties={
                    "minutes_before": {"type": "integer", "description": "Minutes before the start."},
                    "method": {"type": "string", "enum": ["email", "popup"], "description": "Channel."},
                },
                required=["minutes_before", "method"],
            ),
        ),
        (
            "put {title} on my calendar for {date} at {start_time}",
            "block {duration_minutes} on {date} from {start_time} for {title}",
            "set up {title} on {date}, {start_time}, and invite {attendees}",
            "pencil in {title} for {date} at {start_time} and {reminder}",
        ),
        conflicts=("reminder",),
    ),
    ToolSpec(
        "list_events",
        "calendar_email",
        "Lists the events on the user's calendar for one day.",
        (
            req("date", "string", "The day, YYYY-MM-DD.", DAY),
            enum_opt(
                "calendar",
                "Which calendar.",
                choices(("work", "work"), ("personal", "personal"), ("family", ("family", "shared family"))),
            ),
        ),
        (
            "am I free on {date}?",
            "show me my {calendar} schedule for {date}",
            "anything booked on {date}?",
            "what does my {date} look like, {calendar} stuff only",
        ),
    ),
    ToolSpec(
        "cancel_event",
        "calendar_email",
        "Deletes an event from the calendar by its id.",
        (
            req(
                "event_id",
                "string",
                "Event identifier, e.g. EVT-12345.",
                ident("EVT-", 5, ("that meeting", "my next appointment")),
            ),
            opt(
                "notify_attendees",
                "boolean",
                "Tell the invitees.",
                Flag(("and let everyone know",), ("without telling anyone", "quietly")),
                default=True,
            ),
        ),
        (
            "scrap {event_id}, something came up",
            "take {event_id} off my calendar {notify_attendees}",
            "{event_id} isn't happening anymore, drop it",
            "call off {event_id} {notify_attendees}",
        ),
    ),
    ToolSpec(
        "send_email",
        "calendar_email",
        "Sends an email to an address.",
        (
            req("to", "string", "Recipient email address.", EMAIL),
            req(
                "subject",
                "string",
                "Subject line.",
                Quoted(
                    (
                        "Quick question",
                        "Invoice attached",
                        "Tomorrow's agenda",
                        "Welcome aboard",
                        "Follow-up",
                        "Contract draft",
                        "Trip details",
                        "Weekly update",
                    )
                ),
            ),
            req("body", "string", "Message text.", NOTE),
            opt("cc", "array", "Addresses to copy.", ListOf(EMAIL, 1, 2), items={"type": "string"}),
        ),
        (
            "write to {to} with the subject {subject} saying {body}",
            "shoot {to} a note, subject {subject}: {body}",
            "mail {to} (subject {subject}) and tell them {body}, copy {cc}",
            "drop {to} a line titled {subject} that says {body}",
        ),
        conflicts=("send_text",),
    ),
    ToolSpec(
        "search_emails",
        "calendar_email",
        "Searches the user's mailbox.",
        (
            req("query", "string", "Words to look for.", _TOPIC),
            opt("sender", "string", "Only mail from this address.", EMAIL),
            opt(
                "unread_only",
                "boolean",
                "Only unread mail.",
                Flag(("that I haven't opened yet",)),
                default=False,
            ),
            opt("after", "string", "Only mail after this day, YYYY-MM-DD.", DAY),
        ),
        (
            "dig up the mails about {query}",
            "find anything from {sender} mentioning {query}",
            "any messages on {query} {unread_only}?",
            "look through my inbox for {query} since {after}",
        ),
    ),
    ToolSpec(
        "set_out_of_office",
        "calendar_email",
        "Turns on an automatic email reply for a period.",
        (
            req("start_date", "string", "First day away, YYYY-MM-DD.", _AWAY[0]),
            req("end_date", "string", "Last day away, YYYY-MM-DD.", _AWAY[1]),
            req(
                "message",
                "string",
                "Auto-reply text.",
                Quoted(
                    (
                        "I'm away with limited access to email",
                        "On leave, back soon",
                        "Travelling, replies delayed",
                        "Out for a conference",
                    ),
                    ("", ". For urgent matters call the office", ". Thanks!"),
                ),
            ),
        ),
        (
            "I'm off from {start_date} to {end_date}, set an auto-reply saying {message}",
            "vacation {start_date} through {end_date} - answer my mail with {message}",
            "while I'm gone ({start_date} to {end_date}) have my inbox respond {message}",
            "away {start_date}-{end_date}; people who write should get {message}",
        ),
        conflicts=("away_notice",),
    ),
)

__all__ = ["TOOLS"]
