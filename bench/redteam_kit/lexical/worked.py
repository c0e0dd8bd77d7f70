"""Values a device states worked out again: relative dates, references, labels, arithmetic, anchors, clock
words.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from typing import Any

from tasks.devices._words import NUMBER_WORDS, ORDINALS

from .finders import _QUOTED_RE, _WEEKDAYS, _alt, _dates

#: Counts in words: the devices' own number words (public), and the generator's "a", "a couple of".
_NUMBER_WORDS = {word: index for index, word in enumerate(NUMBER_WORDS)} | {
    "a": 1,
    "an": 1,
    "a couple of": 2,
    "couple of": 2,
}


# the generator's own ordinal words (public), and the days past the 28th it never says
_ORDINAL_WORDS = {word: index for index, word in enumerate(ORDINALS) if index} | {
    "twenty-ninth": 29,
    "thirtieth": 30,
    "thirty-first": 31,
}


_COUNT = rf"(\d+|{_alt(_NUMBER_WORDS)})"


_DAY_NAMES = _alt(_WEEKDAYS)


_RELATIVE = re.compile(
    rf"\b(?:(?P<after>the day after tomorrow|day after tomorrow)|(?P<tomorrow>tomorrow)|(?P<today>today)"
    rf"|(?:in\s+{_COUNT}\s+(?P<unit1>days?|weeks?))|(?:{_COUNT}\s+(?P<unit2>days?|weeks?)\s+from\s+(?:now|today))"
    rf"|(?:(?:the\s+)?(?P<after_next>{_DAY_NAMES})\s+after\s+next)"
    rf"|(?:this\s+coming\s+(?P<coming1>{_DAY_NAMES}))|(?:this\s+(?P<coming2>{_DAY_NAMES})(?:\s+coming)?)"
    rf"|(?:(?:on\s+)?next\s+(?P<next>{_DAY_NAMES}))|(?:coming\s+(?P<coming3>{_DAY_NAMES}))"
    rf"|(?:(?:the\s+)?(?P<ord1>{_alt(_ORDINAL_WORDS)})\s+(?:of\s+)?next\s+month)"
    rf"|(?:next\s+month\s+on\s+the\s+(?P<ord2>{_alt(_ORDINAL_WORDS)})))\b",
    re.IGNORECASE,
)


_TODAY = re.compile(r"\btoday is\b", re.IGNORECASE)


def _sub_unquoted(regex: re.Pattern[str], replace: Callable[[re.Match[str]], str], text: str) -> str:
    """``regex.sub`` outside quoted text (a quoted value is said verbatim and stays so)."""
    quoted = [(m.start(), m.end()) for m in _QUOTED_RE.finditer(text)]
    return regex.sub(
        lambda found: found.group() if any(a <= found.start() < b for a, b in quoted) else replace(found),
        text,
    )


def _today(messages: Sequence[dict[str, Any]]) -> dt.date | None:
    """The conversation's today, when a system line states it ("Today is Friday, March 13, 2026.")."""
    for message in messages:
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            text = str(message["content"])
            if _TODAY.search(text):
                found = _dates(text)
                if found:
                    return dt.date.fromisoformat(found[0].value)
    return None


def _count(said: str) -> int:
    return int(said) if said.isdigit() else _NUMBER_WORDS[said.lower()]


def _resolved_dates(text: str, today: dt.date) -> str:
    """The request with every date said relative to today written out (ISO), so that the date
    finders read it as any other date."""

    def day(found: re.Match[str]) -> str:
        group = {k: v for k, v in found.groupdict().items() if v}
        shift = 0
        if "after" in group:
            shift = 2
        elif "tomorrow" in group:
            shift = 1
        elif "unit1" in group or "unit2" in group:
            unit = group.get("unit1") or group.get("unit2") or ""
            said = next(v for v in found.groups() if v and (v.isdigit() or v.lower() in _NUMBER_WORDS))
            shift = _count(said) * (7 if unit.lower().startswith("week") else 1)
        elif any(k in group for k in ("after_next", "coming1", "coming2", "coming3", "next")):
            name = next(
                group[k] for k in ("after_next", "coming1", "coming2", "coming3", "next") if k in group
            )
            target = _WEEKDAYS.index(name.capitalize())
            shift = (target - today.weekday()) % 7 or 7
            if "after_next" in group:
                shift += 7
        elif "ord1" in group or "ord2" in group:
            number = _ORDINAL_WORDS[(group.get("ord1") or group.get("ord2") or "").lower()]
            year, month = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
            try:
                return dt.date(year, month, number).isoformat()
            except ValueError:
                return found.group()
        return (today + dt.timedelta(days=shift)).isoformat()

    return _sub_unquoted(_RELATIVE, day, text)


# References through relations stated in context ("my sister Ana lives in Porto ... near my sister").
_REL = r"((?:[a-z]+ )?[a-z]+)"


_VALUE = (
    r"(\+\d{1,3}(?: \d{2,4}){2,4}"
    r"|\d+ [A-Z][a-z]+ (?:[A-Z][a-z]+ )?(?:Street|Road|Avenue|Lane|Way|Drive|Boulevard|Court|Place)"
    r"|[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*, [A-Z][A-Za-z]+(?: [A-Z][a-z]+)*"
    r"|[A-Z][a-z]+(?:-[A-Z][a-z]+)? [A-Z][a-z]+"
    r"|[a-z0-9._-]+@[a-z0-9.-]+\.[a-z]{2,}|@[a-z][\w.-]*)"
)


_FACTS = (  # (regex, group of the relation, group of the name or 0, group of the value)
    (re.compile(rf"\bmy {_REL} ([A-Z][a-z]+) lives in {_VALUE}"), 1, 2, 3),
    (re.compile(rf"\b([A-Z][a-z]+), my {_REL}, is based in {_VALUE}"), 2, 1, 3),
    (re.compile(rf"\bmy {_REL}(?:'s (?:address|number|phone|email))? is {_VALUE}"), 1, 0, 2),
    (re.compile(rf"{_VALUE} is my {_REL}\b"), 2, 0, 1),
    (re.compile(rf"\byou can reach my {_REL} at {_VALUE}"), 1, 0, 2),
    (re.compile(rf"\bmy {_REL} picks up on {_VALUE}"), 1, 0, 2),
)


_LABEL_ID = r"([A-Z]{2,4}-[A-Z0-9]{3,})"


_OBJECT = r"((?:[a-z]+ )?[a-z]+)"


_LABELS = (
    (re.compile(rf"{_LABEL_ID} (?:goes with|is|belongs to) the {_OBJECT}\b"), 2, 1),
    (re.compile(rf"\bthe {_OBJECT} is {_LABEL_ID}"), 1, 2),
)


def _resolved_labels(text: str) -> str:
    """Things named by what they go with ("CAR-0052 goes with the navy suitcase ... the one with
    the navy suitcase", "the orange drone one") written out as their ids."""
    labels: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    for regex, thing, ident_group in _LABELS:
        for m in regex.finditer(text):
            labels.setdefault(m[thing], m[ident_group])
            spans.append(m.span())
    if not labels:
        return text
    chars = list(text)
    for start, end in sorted(spans, reverse=True):
        chars[start:end] = "(noted)"
    things = _alt(labels)
    reference = re.compile(rf"\bthe one with the (?P<a>{things})\b|\bthe (?P<b>{things}) one\b")
    return _sub_unquoted(reference, lambda m: labels[m["a"] or m["b"]], "".join(chars))


def _resolved_references(text: str) -> str:
    """The request with each value named through a relation ("the city my sister lives in",
    "Ana's city", "my accountant") written out, and the stated relations' values taken out of
    the context sentences (so that neither they nor a decoy relation's value reads as an argument)."""
    by_relation: dict[str, str] = {}
    by_name: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    for regex, rel, name, value in _FACTS:
        for m in regex.finditer(text):
            by_relation.setdefault(m[rel], m[value])
            if name:
                by_name.setdefault(m[name], m[value])
            spans.append(m.span())
    if not by_relation:
        return text
    chars = list(text)
    for start, end in sorted(spans, reverse=True):
        chars[start:end] = "(noted)"
    text = "".join(chars)
    relations = _alt(by_relation)
    names = _alt(by_name) if by_name else "(?!x)x"
    reference = re.compile(
        rf"\b(?:where my (?P<r1>{relations}) lives|the (?:city|town|place) my (?P<r2>{relations}) lives in"
        rf"|(?P<n1>{names})'s (?:city|town|place)"
        rf"|my (?P<r3>{relations})(?:'s (?:address|number|phone|email))?)\b"
    )

    def said(m: re.Match[str]) -> str:
        rel = m["r1"] or m["r2"] or m["r3"]
        return by_relation[rel] if rel else by_name[m["n1"]]

    return _sub_unquoted(reference, said, text)


# Amounts and counts worked out from stated figures ("a third of $609", "12.50 plus 3.25",
# "split four ways", "me and three friends").
_AMOUNT = r"(?<![\w^.])\$?(\d+(?:\.\d+)?)(?![\w^]|\.\d)"


_WORD_NUMBER = rf"\b({_alt(_NUMBER_WORDS)})\b"  # template text says its counts in digits


_PARTS = {
    "half": 2,
    "a half": 2,
    "a third": 3,
    "third": 3,
    "a quarter": 4,
    "quarter": 4,
    "a fifth": 5,
    "fifth": 5,
}


_ARITHMETIC = (
    (
        re.compile(rf"\b({_alt(_PARTS)}) of {_AMOUNT}", re.IGNORECASE),
        lambda m: float(m[2]) / _PARTS[m[1].lower()],
    ),
    (
        re.compile(rf"{_AMOUNT},? split {_WORD_NUMBER} ways", re.IGNORECASE),
        lambda m: float(m[1]) / _count(m[2]),
    ),
    (
        re.compile(rf"\b{_WORD_NUMBER} (?:times|lots of) {_AMOUNT}", re.IGNORECASE),
        lambda m: _count(m[1]) * float(m[2]),
    ),
    (
        re.compile(rf"{_AMOUNT} (?:plus|and another) {_AMOUNT}", re.IGNORECASE),
        lambda m: float(m[1]) + float(m[2]),
    ),
    (re.compile(rf"{_AMOUNT} (?:minus|less) {_AMOUNT}", re.IGNORECASE), lambda m: float(m[1]) - float(m[2])),
)


_HEADCOUNT = re.compile(
    rf"\b(?:(?P<one>me and|myself plus|me and my) {_WORD_NUMBER} (?:friends|colleagues|cousins)"
    rf"|(?P<two>me, my partner and our|my wife, me and|the two of us plus) {_WORD_NUMBER}"
    r" (?:kids|of our neighbours|guests of ours))\b",
    re.IGNORECASE,
)


def _worked_out(text: str) -> str:
    """The request with sums, shares, products and head counts written out as their numbers."""
    for regex, compute in _ARITHMETIC:

        def value(m: re.Match[str], compute: Callable[[re.Match[str]], float] = compute) -> str:
            result = round(compute(m), 2)
            return (
                f"{result:.2f}"
                if "." in m.group()
                else (str(int(result)) if result == int(result) else str(result))
            )

        text = _sub_unquoted(regex, value, text)

    def people(m: re.Match[str]) -> str:
        said = next(v for v in m.groups() if v and (v.isdigit() or v.lower() in _NUMBER_WORDS))
        return str(_count(said) + (1 if m["one"] else 2))

    return _sub_unquoted(_HEADCOUNT, people, text)


# Dates anchored on an event stated in context ("the car service got moved to 2026-04-09 ...
# the day following the car service"), and times of day in words ("half past seven in the evening").
_EVENT = r"((?:the|my) [a-z' ]{2,40}?)"


_EVENT_FACT = re.compile(rf"{_EVENT} (?:is on|falls on|got moved to|is) (\d{{4}}-\d{{2}}-\d{{2}})")


_ANCHORED = re.compile(
    r"\b(?:on\s+)?(?P<shift>the day after|the day following|the day before|the day ahead of"
    rf"|a week after|one week after|{_WORD_NUMBER} days (?:after|past))"
    r"\s+(?P<event>(?:the|my) [a-z' ]{2,40}?)"
    r"(?=[^a-z' ]|$)",
    re.IGNORECASE,
)


_CLOCK_WORDS = re.compile(
    rf"\b(?:(?P<lead>(?:a )?quarter past|half past|(?:a )?quarter to) )?(?P<hour>{_WORD_NUMBER}|\d{{1,2}})"
    r"(?: o'clock)? in the (?P<period>morning|afternoon|evening)|\b(?P<noon>noon|midday)\b",
    re.IGNORECASE,
)


def _resolved_anchors(text: str) -> str:
    """Event-anchored dates and worded times of day written out (ISO date, HH:MM)."""
    events: dict[str, dt.date] = {}
    spans: list[tuple[int, int]] = []
    for m in _EVENT_FACT.finditer(text):
        events.setdefault(m[1].lower().removeprefix("on ").strip(), dt.date.fromisoformat(m[2]))
        spans.append(m.span())

    def anchored(m: re.Match[str]) -> str:
        event = m["event"].lower().strip()
        day = next(
            (d for name, d in events.items() if event.startswith(name) or name.startswith(event)), None
        )
        if day is None:
            return m.group()
        shift = m["shift"].lower()
        if shift.startswith(("the day after", "the day following")):
            days = 1
        elif shift.startswith(("the day before", "the day ahead")):
            days = -1
        elif "week" in shift:
            days = 7
        else:
            days = _count(shift.split()[0])
        return (day + dt.timedelta(days=days)).isoformat() + m["event"][len(m["event"].rstrip()) :]

    if events:
        chars = list(text)
        for start, end in sorted(spans, reverse=True):
            chars[start:end] = "(noted)"
        text = _sub_unquoted(_ANCHORED, anchored, "".join(chars))

    def clock(m: re.Match[str]) -> str:
        if m["noon"]:
            return "12:00"
        hour = _count(m["hour"]) if not m["hour"].isdigit() else int(m["hour"])
        lead = (m["lead"] or "").lower().removeprefix("a ")
        minute = {"quarter past": 15, "half past": 30, "quarter to": 45}.get(lead, 0)
        if lead == "quarter to":
            hour -= 1
        if m["period"].lower() in ("afternoon", "evening") and hour < 12:
            hour += 12
        return f"{hour:02d}:{minute:02d}"

    return _sub_unquoted(_CLOCK_WORDS, clock, text)
