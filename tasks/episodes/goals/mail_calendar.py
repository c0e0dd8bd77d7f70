"""The mailbox and calendar's parts: mails found by what they are about ("whoever sent the mail
about the invoice"), days said relative to today ("the day after tomorrow", "this coming
Thursday"), slots found by comparing the day's events (the first free hour, whatever overlaps the
dentist), corrections ("actually, make it Friday instead") and conditions on the calendar and the
inbox."""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from typing import Any

from tasks.episodes.environments.mail_calendar import (
    _EPOCH,
    _REPLIES,
    MailCalendar,
    _clock,
    _iso,
    _minutes,
    _said_date,
    _said_time,
)
from tasks.episodes.goals import Abandon, Context, Part, Probe, Withhold, condition, goal
from tasks.episodes.scenario import quoted, stated
from tasks.rand import between, choose

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NUMBERS = ("", "", "", "three", "four", "five", "six", "seven", "eight", "nine")
_NEW_TITLES = ("Dentist", "Team lunch", "Quarterly planning", "Coffee with a mentor", "Vendor demo", "Yoga")


def _mail(ctx: Context) -> MailCalendar:
    env = ctx.env
    assert isinstance(env, MailCalendar)
    return env


def _relative(env: MailCalendar, ctx: Context) -> tuple[int, str, list[dict[str, Any]]]:
    """A day after today said relative to it: (offset, words, stated values). Today's date is said
    once in the conversation (the miner has no clock but the user's word)."""
    rng = ctx.rng
    roll = between(rng, 0, 4)
    weekday = (_EPOCH + _dt.timedelta(days=env.today)).weekday()
    if roll == 0:
        days, words = 1, "tomorrow"
    elif roll == 1:
        days, words = 2, "the day after tomorrow"
    elif roll == 2:
        days = between(rng, 3, 9)
        words = f"in {_NUMBERS[days]} days"
    elif roll == 3:
        days, words = 7, "a week from today"
    else:
        days = between(rng, 1, 7)
        words = f"this coming {_WEEKDAYS[(weekday + days) % 7]}"
    values = [stated("when", "which day, relative to today", words)]
    if "today" not in ctx.known:
        ctx.known["today"] = True
        said, value = _said_date(_iso(env.today), rng)
        words += f" (today is {_WEEKDAYS[weekday]}, {said})"
        values.append(value | {"slot": "today", "about": "today's date"})
    return env.today + days, words, values


def _free(env: MailCalendar, day: str, start: int, length: int) -> bool:
    for event in env.events:
        if (
            event["date"] == day
            and _minutes(event["start"], "s") < start + length
            and start < _minutes(event["end"], "e")
        ):
            return False
    return True


def _contact_mails(env: MailCalendar) -> list[dict[str, Any]]:
    emails = {c["email"] for c in env.contacts}
    return [m for m in env.inbox if m["from"] in emails]


@goal("mail_calendar", 1.2, withholds=True)
def reply_latest(ctx: Context) -> Part | None:
    env, rng = _mail(ctx), ctx.rng
    mails = _contact_mails(env)
    if not mails:
        return None
    who = choose(rng, mails)["from_name"]
    mail = next(m for m in env.inbox if m["from_name"] == who)
    body = choose(rng, _REPLIES)
    ctx.run("search_mail", query="", sender=who)
    ctx.run("reply", mail_id=mail["id"], body=body)
    slot = ctx.slot("body")
    body_value = quoted(slot, "text of the reply", body)
    held = {"slot": slot, "about": "text of the reply", "said": "my answer", "forbidden": [body]}
    return Part(
        f'reply to the latest mail from {who} saying "{body}"',
        [stated("sender", "whose mail to answer", who), body_value],
        purpose="answer a colleague",
        withhold=Withhold(
            f"reply to the latest mail from {who} with my answer", held, f'Say "{body}".', [body_value]
        ),
    )


def _about(env: MailCalendar, ctx: Context) -> tuple[str, dict[str, Any]] | None:
    """A topic and the newest mail a search for it finds, where that mail is from a contact."""
    mails = _contact_mails(env)
    if not mails:
        return None
    topic = choose(ctx.rng, mails)["subject"].removeprefix("Re: ")
    found = ctx.run("search_mail", query=topic)["results"]
    emails = {c["email"] for c in env.contacts}
    if not found or found[0]["from"] not in emails:
        return None
    return topic, found[0]


@goal("mail_calendar")
def reply_about(ctx: Context) -> Part | None:
    """Answer "whoever sent the latest mail about X": the mail is found by its topic."""
    env, rng = _mail(ctx), ctx.rng
    drawn = _about(env, ctx)
    if drawn is None:
        return None
    topic, mail = drawn
    body = choose(rng, _REPLIES)
    ctx.run("reply", mail_id=mail["id"], body=body)
    values = [quoted("topic", "what the mail is about", topic), quoted("body", "text of the reply", body)]
    return Part(f'answer the latest mail about "{topic}" with "{body}"', values, purpose="answer a thread")


@goal("mail_calendar", 0.6)
def read_code(ctx: Context) -> Part | None:
    env, rng = _mail(ctx), ctx.rng
    coded = [m for m in env.inbox if m["subject"].endswith("verification code")]
    if not coded:
        return None
    service = choose(rng, coded)["from_name"]
    mail = next(m for m in coded if m["from_name"] == service)
    ctx.run("search_mail", query="code", sender=service)
    ctx.run("read_mail", mail_id=mail["id"])
    code = re.findall(r"\d{6}", mail["body"])[0]
    values = [stated("sender", "which service sent the code", service)]
    return Part(f"tell me the code in the latest mail from {service}", values, [code], "log in")


@goal("mail_calendar", 1.3)
def book_relative(ctx: Context) -> Part | None:
    """An event on a day said relative to today; a later turn may move it ("make it X instead")."""
    env, rng = _mail(ctx), ctx.rng
    offset, words, values = _relative(env, ctx)
    title = choose(rng, _NEW_TITLES)
    start = 60 * between(rng, 8, 17) + 30 * between(rng, 0, 1)
    length = choose(rng, (30, 60, 90))
    said_start, start_value = _said_time(start, rng, "start")
    said_end, end_value = _said_time(start + length, rng, "end")
    event = ctx.run(
        "create_event", title=title, date=_iso(offset), start=_clock(start), end=_clock(start + length)
    )
    values = [quoted("title", "event title", title), *values, start_value, end_value]
    text = f'put "{title}" on my calendar {words} from {said_start} to {said_end}'

    def correct(ctx: Context) -> Part | None:
        moved, again, again_values = _relative(env, ctx)
        if moved == offset:
            return None
        ctx.run("move_event", event_id=event["id"], date=_iso(moved), start=_clock(start))
        return Part(f"actually, make that {again} instead, same time", again_values, purpose="move it")

    return Part(text, values, purpose="plan something", correction=correct)


@goal("mail_calendar")
def first_free(ctx: Context) -> Part | None:
    """The first free slot from a time on a day: read the day's events and compare."""
    env, rng = _mail(ctx), ctx.rng
    busy = [e for e in env.events if e["date"] >= _iso(env.today)]
    if not busy:
        return None
    day = choose(rng, busy)["date"]
    length = choose(rng, (30, 60))
    start = 60 * between(rng, 8, 14)
    slot = next((m for m in range(start, 20 * 60, 30) if _free(env, day, m, length)), None)
    if slot is None:
        return None
    title = choose(rng, _NEW_TITLES)
    said_day, day_value = _said_date(day, rng)
    said_from, from_value = _said_time(start, rng, "from")
    ctx.run("list_events", date=day)
    ctx.run("create_event", title=title, date=day, start=_clock(slot), end=_clock(slot + length))
    values = [quoted("title", "event title", title), day_value, from_value]
    values.append(stated("length", "how long", f"{length}-minute", str(length), kind="number"))
    text = (
        f'book a {length}-minute "{title}" on {said_day} at the first half hour from {said_from} on '
        "when I'm free"
    )
    return Part(text, values, purpose="find a free slot")


@goal("mail_calendar")
def cancel_overlapping(ctx: Context) -> Part | None:
    """Cancel whatever overlaps a named event: the one other event of its day that overlaps it."""
    env, rng = _mail(ctx), ctx.rng
    pairs = []
    for event in env.events:
        same = [e for e in env.events if e["date"] == event["date"] and e is not event]
        if sum(e["title"] == event["title"] for e in same):
            continue
        lapping = [e for e in same if e["start"] < event["end"] and event["start"] < e["end"]]
        if len(lapping) == 1:
            pairs.append((event, lapping[0]))
    if not pairs:
        return None
    named, other = choose(rng, pairs)
    said_day, day_value = _said_date(named["date"], rng)
    ctx.run("list_events", date=named["date"])
    ctx.run("cancel_event", event_id=other["id"])
    values = [quoted("title", "the event to keep", named["title"]), day_value]
    return Part(f'cancel whatever overlaps "{named["title"]}" on {said_day}', values, purpose="clear a clash")


@goal("mail_calendar")
def move_with(ctx: Context) -> Part | None:
    """Move the one meeting with a person on a day; a later turn may change the time again."""
    env, rng = _mail(ctx), ctx.rng
    meetings = Counter((e["date"], email) for e in env.events for email in set(e["attendees"]))
    options = [(e, email) for e in env.events for email in e["attendees"] if meetings[e["date"], email] == 1]
    if not options:
        return None
    event, email = choose(rng, options)
    who = next(c["name"] for c in env.contacts if c["email"] == email)
    length = _minutes(event["end"], "e") - _minutes(event["start"], "s")
    start = choose(rng, [m for m in range(8 * 60, 17 * 60, 30) if _clock(m) != event["start"]])
    said_day, day_value = _said_date(event["date"], rng)
    said_time, time_value = _said_time(start, rng, "start")
    ctx.run("list_events", date=event["date"])
    ctx.run("move_event", event_id=event["id"], date=event["date"], start=_clock(start))
    values = [stated("attendee", "who the meeting is with", who), day_value, time_value]

    def correct(ctx: Context) -> Part | None:
        later = start + 30 * between(ctx.rng, 1, 4)
        if later + length >= 22 * 60:
            return None
        said, value = _said_time(later, ctx.rng, "start")
        ctx.run("move_event", event_id=event["id"], date=event["date"], start=_clock(later))
        return Part(f"actually, make it {said} instead", [value], purpose="fix the time")

    text = f"move my meeting with {who} on {said_day} to {said_time}"
    return Part(text, values, purpose="reschedule", correction=correct)


@goal("mail_calendar")
def agenda(ctx: Context) -> Part | None:
    env = _mail(ctx)
    offset, words, values = _relative(env, ctx)
    titles = [e["title"] for e in ctx.run("list_events", date=_iso(offset))["events"]]
    if not titles:
        return None
    return Part(f"tell me what I have on {words}", values, titles, "know the day's plan")


@goal("mail_calendar")
def invite_about(ctx: Context) -> Part | None:
    """Invite whoever wrote the latest mail about a topic: their address is read off the search."""
    env, rng = _mail(ctx), ctx.rng
    drawn = _about(env, ctx)
    if drawn is None:
        return None
    topic, mail = drawn
    offset, words, values = _relative(env, ctx)
    start = 60 * between(rng, 9, 16)
    said_start, start_value = _said_time(start, rng, "start")
    said_end, end_value = _said_time(start + 60, rng, "end")
    title = f"Talk about {topic}"
    ctx.run(
        "create_event",
        title=title,
        date=_iso(offset),
        start=_clock(start),
        end=_clock(start + 60),
        attendees=[mail["from"]],
    )
    values = [
        quoted("topic", "what the mail is about", topic),
        quoted("title", "event title", title),
        *values,
    ]
    values += [start_value, end_value]
    text = (
        f'invite whoever sent the latest mail about "{topic}" to a meeting called "{title}" {words} '
        f"from {said_start} to {said_end}"
    )
    return Part(text, values, purpose="meet about a thread")


# -- conditions ---------------------------------------------------------------------------


@condition("mail_calendar")
def free_at(ctx: Context) -> Probe | None:
    env, rng = _mail(ctx), ctx.rng
    busy = [e for e in env.events if e["date"] >= _iso(env.today)]
    if not busy:
        return None
    event = choose(rng, busy)
    at = _minutes(event["start"], "s") + choose(rng, (-60, -30, 0, 0, 30))
    if not 6 * 60 <= at <= 21 * 60:
        return None
    said_day, day_value = _said_date(event["date"], rng)
    said_at, at_value = _said_time(at, rng, "at")
    ctx.run("list_events", date=event["date"])
    holds = _free(env, event["date"], at, 1)
    return Probe(f"I have nothing on {said_day} at {said_at}", [day_value, at_value], holds)


@condition("mail_calendar")
def unread_from(ctx: Context) -> Probe | None:
    env, rng = _mail(ctx), ctx.rng
    if not env.contacts:
        return None
    who = choose(rng, env.contacts)
    found = ctx.run("search_mail", query="", sender=who["name"], unread_only=True)["total"]
    values = [stated("sender", "who may have written", who["name"])]
    return Probe(f"there's a mail from {who['name']} I haven't read yet", values, found > 0)


@goal("mail_calendar")
def mail_contact(ctx: Context) -> Part | None:
    """A new mail to a person named: their address is read off a mail they sent."""
    env, rng = _mail(ctx), ctx.rng
    mails = _contact_mails(env)
    if not mails:
        return None
    mail = choose(rng, mails)
    who = mail["from_name"]
    subject, body = choose(rng, _SUBJECTS), choose(rng, _REPLIES)
    ctx.run("search_mail", query="", sender=who)
    ctx.run("send_mail", to=[mail["from"]], subject=subject, body=body)
    values = [stated("recipient", "who to write to", who), quoted("subject", "subject line", subject)]
    values.append(quoted("body", "text of the mail", body))
    return Part(
        f'write to {who} with the subject "{subject}" saying "{body}"', values, purpose="write to someone"
    )


_SUBJECTS = ("Quick question", "Following up", "Next steps", "Heads-up", "Thanks")


@goal("mail_calendar")
def cancel_earliest(ctx: Context) -> Part | None:
    """Cancel the earliest event of a day: the day's list read, the first one picked."""
    env, rng = _mail(ctx), ctx.rng
    if not env.events:
        return None
    day = choose(rng, env.events)["date"]
    events = ctx.run("list_events", date=day)["events"]
    if not events or (len(events) > 1 and events[0]["start"] == events[1]["start"]):
        raise Abandon("no single earliest event")
    said_day, day_value = _said_date(day, rng)
    ctx.run("cancel_event", event_id=events[0]["id"])
    return Part(f"cancel the first thing on my calendar on {said_day}", [day_value], purpose="free a morning")


@goal("mail_calendar")
def push_last_later(ctx: Context) -> Part | None:
    """Move the day's last event later by a stated number of minutes (its new start worked out)."""
    env, rng = _mail(ctx), ctx.rng
    if not env.events:
        return None
    day = choose(rng, env.events)["date"]
    events = ctx.run("list_events", date=day)["events"]
    if not events:
        raise Abandon("an empty day")
    last = max(events, key=lambda e: (e["start"], e["id"]))
    if sum(e["start"] == last["start"] for e in events) > 1:
        raise Abandon("no single last event")
    shift = choose(rng, (30, 45, 60, 90))
    start = _minutes(last["start"], "s") + shift
    if start + _minutes(last["end"], "e") - _minutes(last["start"], "s") >= 23 * 60:
        raise Abandon("too late")
    said_day, day_value = _said_date(day, rng)
    ctx.run("move_event", event_id=last["id"], date=day, start=_clock(start))
    value = stated("shift", "how much later", f"{shift} minutes", kind="text")
    text = f"push the last event on {said_day} back by {shift} minutes"
    return Part(text, [day_value, value], purpose="make room at the end of a day")


@condition("mail_calendar")
def has_titled(ctx: Context) -> Probe | None:
    env, rng = _mail(ctx), ctx.rng
    if not env.events:
        return None
    event = choose(rng, env.events)
    title = choose(rng, (event["title"], choose(rng, [e["title"] for e in env.events])))
    said_day, day_value = _said_date(event["date"], rng)
    titles = [e["title"] for e in ctx.run("list_events", date=event["date"])["events"]]
    values = [quoted("title", "an event's title", title), day_value]
    return Probe(f'I already have "{title}" on {said_day}', values, title in titles)
