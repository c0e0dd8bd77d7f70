"""Library tools: calendar and email, messaging, files and developer operations (coding agent)."""

from __future__ import annotations

from tasks.library.common import (
    DIRECTORY,
    EMAIL,
    HANDLE,
    PERSON,
    PHONE,
    SOURCE_PATH,
    TEST_PATH,
    CronSchedule,
    choices,
    enum_opt,
    enum_req,
    ident,
    opt,
    req,
)
from tasks.spec import ToolSpec
from tasks.values import ClockTime, Composed, Date, Flag, Integer, ListOf, Quoted, Record, words

_DAY = Date()
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
_NOTE = Quoted(
    (
        "running 10 minutes late",
        "call me when you land",
        "the build is green again",
        "lunch at noon?",
        "can you review my PR today",
        "meeting moved to 3pm",
        "don't forget the keys",
        "server is back up",
        "I'll bring the slides",
        "happy birthday!",
    ),
    ("", " - thanks", ", see you soon", " :)"),
)
_EMOJI = words(":palm_tree:", ":house:", ":coffee:", ":calendar:", ":red_circle:", ":headphones:")

CALENDAR_EMAIL = (
    ToolSpec(
        "create_event",
        "calendar_email",
        "Adds an event to the user's calendar.",
        (
            req("title", "string", "Event title.", _MEETING),
            req("date", "string", "Day of the event, YYYY-MM-DD.", _DAY),
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
            req("date", "string", "The day, YYYY-MM-DD.", _DAY),
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
            req("body", "string", "Message text.", _NOTE),
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
            opt("after", "string", "Only mail after this day, YYYY-MM-DD.", _DAY),
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
            req("start_date", "string", "First day away, YYYY-MM-DD.", _DAY),
            req("end_date", "string", "Last day away, YYYY-MM-DD.", _DAY),
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

MESSAGING = (
    ToolSpec(
        "send_sms",
        "messaging",
        "Sends a text message to a phone number.",
        (
            req("phone_number", "string", "Number in international format.", PHONE),
            req("message", "string", "Text of the message.", _NOTE),
        ),
        (
            "text {phone_number}: {message}",
            "send a quick text to {phone_number} saying {message}",
            "let the number {phone_number} know {message} by text",
            "fire off an SMS, {message}, to {phone_number}",
        ),
        conflicts=("send_text",),
    ),
    ToolSpec(
        "create_group_chat",
        "messaging",
        "Creates a group conversation with several people.",
        (
            req(
                "name",
                "string",
                "Name of the group.",
                Quoted(
                    ("Book club", "Ski trip", "Project Falcon", "Family", "Roommates", "Soccer Sundays"),
                    ("", " 2026", " crew"),
                ),
            ),
            req(
                "members",
                "array",
                "Full names of the people to add.",
                ListOf(PERSON, 2, 4),
                items={"type": "string"},
            ),
        ),
        (
            "start a group called {name} with {members}",
            "make a new chat, {name}, and add {members}",
            "I want {members} in one conversation named {name}",
            "spin up {name} as a group thread for {members}",
        ),
    ),
    ToolSpec(
        "set_status",
        "messaging",
        "Sets the user's presence status in the chat app.",
        (
            req(
                "status_text",
                "string",
                "Status text.",
                Quoted(
                    (
                        "In meetings all day",
                        "Out sick",
                        "Heads down, no calls",
                        "On vacation",
                        "Commuting",
                        "Working from home",
                    ),
                    ("", " until 5", " - ping if urgent"),
                ),
            ),
            opt("emoji", "string", "Emoji code shown with the status.", _EMOJI),
            opt(
                "clear_after_minutes",
                "integer",
                "Clear the status after this many minutes.",
                Integer(30, 480, "{} minutes", 30),
            ),
        ),
        (
            "show people {status_text} next to my name",
            "update what my profile says to {status_text} with {emoji}",
            "let folks know {status_text}, and clear it after {clear_after_minutes}",
            "change my presence message to {status_text}",
        ),
        conflicts=("away_notice",),
    ),
    ToolSpec(
        "mute_conversation",
        "messaging",
        "Silences notifications from one conversation for a while.",
        (
            req(
                "conversation",
                "string",
                "Name of the conversation.",
                Quoted(
                    ("Book club", "Ski trip", "Project Falcon", "Family", "Roommates", "Marketing"),
                    ("", " 2026", " crew"),
                ),
            ),
            req("hours", "integer", "How long to stay quiet.", Integer(1, 72, "{} hours")),
        ),
        (
            "shush {conversation} for {hours}",
            "I don't want pings from {conversation} for the next {hours}",
            "silence {conversation} for {hours}, it's too noisy",
            "no alerts from {conversation} for {hours} please",
        ),
    ),
)

_SHELL = Quoted(
    (
        "ls -la",
        "df -h",
        "docker ps",
        "npm install",
        "make build",
        "du -sh node_modules",
        "git status",
        "kubectl get pods",
        "pip list --outdated",
        "uptime",
        "cargo build --release",
        "go vet ./...",
    ),
)
_MEMORY_KEY = Composed(
    (
        ("preferred", "default", "staging", "backup", "team", "release"),
        ("editor", "branch", "region", "reviewer", "port", "timezone", "database"),
    ),
    "{0}_{1}",
    quote=True,
    vague=("that setting", "the thing I told you"),
)
_CODE_BEFORE = Composed(
    (
        ("timeout", "retries", "max_workers", "batch_size", "port", "cache_ttl"),
        tuple(str(n) for n in (3, 5, 10, 30, 60, 100, 8080)),
    ),
    "{0} = {1}",
    quote=True,
    vague=("that line", "the bad line"),
)
_CODE_AFTER = Composed(
    (
        ("timeout", "retries", "max_workers", "batch_size", "port", "cache_ttl"),
        tuple(str(n) for n in (2, 4, 20, 45, 90, 200, 9090)),
    ),
    "{0} = {1}",
    quote=True,
    vague=("the right value", "what it should be"),
)
_REF = Composed(
    (
        (
            "main",
            "develop",
            "feature/login",
            "feature/search",
            "bugfix/retry",
            "release/2.4",
            "HEAD~1",
            "HEAD~3",
            "v1.8.0",
            "origin/main",
        ),
    ),
    "{0}",
    vague=("the branch we discussed", "that commit"),
)

DEVELOPER = (
    ToolSpec(
        "read_file",
        "developer",
        "Returns the contents of a file in the workspace.",
        (
            req("path", "string", "File path relative to the workspace root.", SOURCE_PATH),
            opt("start_line", "integer", "First line to return.", Integer(1, 200)),
            opt("end_line", "integer", "Last line to return.", Integer(201, 600)),
        ),
        (
            "show me what's in {path}",
            "print lines {start_line} to {end_line} of {path}",
            "what does {path} contain?",
            "open up {path} so I can see the code",
        ),
        conflicts=("shell_cat",),
    ),
    ToolSpec(
        "list_files",
        "developer",
        "Lists the files in a workspace directory.",
        (
            req("directory", "string", "Directory relative to the workspace root.", DIRECTORY),
            opt(
                "pattern",
                "string",
                "Glob the names must match.",
                words("*.py", "*.ts", "*.md", "*.yaml", "*.go"),
            ),
            opt(
                "recursive",
                "boolean",
                "Descend into sub-directories.",
                Flag(("including subfolders",), ("just the top level",)),
                default=False,
            ),
        ),
        (
            "what's inside {directory}?",
            "which {pattern} files live in {directory}",
            "show everything under {directory} {recursive}",
            "give me an inventory of {directory}",
        ),
        conflicts=("shell_ls",),
    ),
    ToolSpec(
        "run_shell",
        "developer",
        "Executes a shell command in the workspace and returns its output.",
        (
            req("command", "string", "The command line.", _SHELL),
            opt("cwd", "string", "Working directory.", DIRECTORY),
            opt(
                "timeout_seconds",
                "integer",
                "Kill the command after this long.",
                Integer(10, 600, "{} seconds", 10),
                default=60,
            ),
        ),
        (
            "execute {command} in {cwd}",
            "fire off {command} in the terminal",
            "do {command} for me and give up after {timeout_seconds}",
            "in {cwd}, type {command} and tell me what comes back",
        ),
        conflicts=("shell_ls", "shell_cat", "shell_test", "shell_git", "shell_edit"),
    ),
    ToolSpec(
        "run_tests",
        "developer",
        "Runs the automated test suite for a path and reports failures.",
        (
            req("path", "string", "Test file or directory.", TEST_PATH),
            opt(
                "keyword",
                "string",
                "Only tests whose names contain this.",
                words("retry", "timeout", "auth", "unicode", "empty_input", "pagination"),
            ),
            opt(
                "fail_fast",
                "boolean",
                "Stop at the first failure.",
                Flag(("and stop at the first failure",)),
                default=False,
            ),
        ),
        (
            "check whether {path} passes",
            "kick off the checks in {path}, only the ones matching {keyword}",
            "does {path} still go green? {fail_fast}",
            "verify nothing's broken in {path}",
        ),
        conflicts=("shell_test",),
    ),
    ToolSpec(
        "apply_patch",
        "developer",
        "Edits a file by replacing one exact snippet with another.",
        (
            req("file_path", "string", "File to edit.", SOURCE_PATH),
            req("old_text", "string", "Exact text to replace.", _CODE_BEFORE),
            req("new_text", "string", "Replacement text.", _CODE_AFTER),
        ),
        (
            "in {file_path}, swap {old_text} for {new_text}",
            "change {old_text} to {new_text} inside {file_path}",
            "fix {file_path}: {old_text} should read {new_text}",
            "edit {file_path} so that {old_text} becomes {new_text}",
        ),
        conflicts=("shell_edit",),
    ),
    ToolSpec(
        "git_diff",
        "developer",
        "Shows uncommitted changes compared with a git revision.",
        (
            req("ref", "string", "Branch, tag or commit to compare against.", _REF),
            opt("path", "string", "Limit to this path.", SOURCE_PATH),
            opt("staged", "boolean", "Only staged changes.", Flag(("only the staged stuff",)), default=False),
        ),
        (
            "what did I change since {ref}?",
            "how does my working copy differ from {ref} in {path}",
            "compare {ref} with what I have, {staged}",
            "show me my edits relative to {ref}",
        ),
        conflicts=("shell_git",),
    ),
    ToolSpec(
        "remember",
        "developer",
        "Stores a fact in the agent's long-term memory under a key.",
        (
            req("key", "string", "Name to store the fact under.", _MEMORY_KEY),
            req(
                "value",
                "any",
                "The fact to keep.",
                Quoted(("vim", "eu-west-1", "Priya", "5432", "UTC+2", "release/2.4", "postgres-replica")),
            ),
        ),
        (
            "don't forget: {key} is {value}",
            "store this for later, {key} -> {value}",
            "jot down that {key} equals {value}",
            "make a note that my {key} is {value}",
        ),
    ),
    ToolSpec(
        "retrieve_memory",
        "developer",
        "Looks up a fact the agent stored earlier.",
        (req("key", "string", "Name the fact was stored under.", _MEMORY_KEY),),
        (
            "what did I tell you my {key} was?",
            "look up the note {key}",
            "pull {key} back out of your notes",
            "what's stored under {key}?",
        ),
    ),
    ToolSpec(
        "cron_create",
        "developer",
        "Creates a recurring scheduled job from a cron expression.",
        (
            req("schedule", "string", "Cron expression: minute hour day month weekday.", CronSchedule()),
            req("command", "string", "Command to run.", _SHELL),
            opt(
                "description",
                "string",
                "What the job is for.",
                Quoted(("nightly cleanup", "disk report", "dependency check", "backup")),
            ),
        ),
        (
            "{schedule}, have {command} happen",
            "set up a recurring job that does {command} {schedule}",
            "I want {command} to go off automatically {schedule}",
            "repeat {command} {schedule}, call it {description}",
        ),
    ),
    ToolSpec(
        "message_send",
        "developer",
        "Sends a chat message to a user handle in the team workspace.",
        (
            req("recipient", "string", "User handle, e.g. @maria.", HANDLE),
            req("text", "string", "Message text.", _NOTE),
        ),
        (
            "ping {recipient} with {text}",
            "let {recipient} know {text}",
            "drop {recipient} a DM: {text}",
            "tell {recipient} over chat {text}",
        ),
        conflicts=("send_text",),
    ),
    ToolSpec(
        "clarify",
        "developer",
        "Asks the user a question before continuing; use when a request is unclear.",
        (
            req(
                "question",
                "string",
                "The question to ask.",
                Quoted(
                    (
                        "Which branch should I deploy?",
                        "Do you want the tests updated too?",
                        "Should I keep the old API?",
                        "Which environment is this for?",
                        "Can I delete the temp files?",
                    )
                ),
            ),
        ),
        (
            "before you touch anything, put this to me: {question}",
            "check with me first by asking {question}",
            "pop a question up for me: {question}",
            "I want to confirm something, ask me {question}",
        ),
        conflicts=("meta",),
    ),
    ToolSpec(
        "escalate",
        "developer",
        "Hands the current problem to a human team with a reason and severity.",
        (
            req(
                "reason",
                "string",
                "Why a human is needed.",
                Quoted(
                    (
                        "production database is unreachable",
                        "customer data may have leaked",
                        "payment webhook failing",
                        "certificate expires tonight",
                        "on-call pager is silent",
                    )
                ),
            ),
            enum_req(
                "severity",
                "How urgent it is.",
                choices(
                    ("low", ("low", "minor")),
                    ("medium", ("medium", "moderate")),
                    ("high", ("high", "serious")),
                    ("critical", ("critical", "sev-1")),
                ),
            ),
            opt("team", "string", "Team to hand it to.", words("sre", "security", "payments", "platform")),
        ),
        (
            "this is beyond us - get a human on it: {reason}, it's {severity}",
            "raise the alarm with the {team} folks, {reason}, {severity} priority",
            "I need people involved, {reason}; mark it {severity}",
            "hand this off to the humans ({severity}): {reason}",
        ),
        conflicts=("meta",),
    ),
)

__all__ = ["CALENDAR_EMAIL", "DEVELOPER", "MESSAGING"]
