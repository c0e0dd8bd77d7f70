"""Value generators: how a parameter's value is drawn, said by a person, and accepted.

Each generator draws from an explicitly seeded ``random.Random`` and returns a ``Drawn``:
the words a person would use for the value and every value a correct call may carry
(BFCL possible-answer form, the reference value first). ``vague`` lists phrases that name
the value without giving it ("my hometown", "my boss"); the missing_param category uses
them to write requests that cannot be answered without asking back.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from functools import cache
from random import Random
from typing import Any, Protocol

from tasks.rand import below, between

__all__ = [
    "Drawn",
    "Mention",
    "ValueGen",
    "date_accepted",
    "date_accepted_forms",
    "date_drawn",
]

#: One value a request states, as a rewording must keep it: (kind, the spoken forms that keep it).
#: Kinds: "text" (said as written), "quoted" (verbatim), "number", "date", "time", "flag" (a
#: phrase whose key words must stay), "absent" (the opposite of a flag: none of its forms may appear).
Mention = tuple[str, tuple[str, ...]]


# Not frozen: one is made per drawn value, and a frozen dataclass takes 2.5x as long to build.
# Treat it as immutable.
@dataclass(slots=True)
class Drawn:
    """One drawn value: what the person says and what a correct call may contain.

    ``mentions`` are the values the words state and the forms that keep each one (see
    ``Mention``); None means the text itself, said as written. The phrasing stage reads them
    to check that a reworded request still states every value.
    """

    text: str
    accepted: tuple[Any, ...]
    mentions: tuple[Mention, ...] | None = None

    def stated(self) -> tuple[Mention, ...]:
        """The mentions, the text itself when none were given."""
        return self.mentions if self.mentions is not None else (("text", (self.text,)),)


def _forms(*groups: tuple[Any, ...] | list[Any]) -> tuple[str, ...]:
    """Distinct non-empty strings of the groups, in order (non-strings are skipped)."""
    seen: dict[str, None] = {}
    for group in groups:
        for item in group:
            if isinstance(item, str) and item:
                seen.setdefault(item, None)
    return tuple(seen)


class ValueGen(Protocol):
    """Anything that can draw a value for a parameter."""

    @property
    def vague(self) -> tuple[str, ...]: ...

    def draw(self, rng: Random) -> Drawn: ...


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a ``Pick``: the ways to say it and the values that are right for it."""

    says: tuple[str, ...]
    accepted: tuple[Any, ...]


def option(*accepted: Any, say: str | tuple[str, ...] | None = None) -> Option:
    """An option whose first accepted value is the reference; ``say`` defaults to it."""
    if say is None:
        says: tuple[str, ...] = (str(accepted[0]),)
    elif isinstance(say, str):
        says = (say,)
    else:
        says = say
    return Option(says, tuple(accepted))


@dataclass(frozen=True, slots=True)
class Pick:
    """A choice among fixed options (enums, named things)."""

    options: tuple[Option, ...]
    vague: tuple[str, ...] = ()

    def draw(self, rng: Random) -> Drawn:
        options = self.options
        chosen = options[int(rng.random() * len(options))]
        says = chosen.says
        text = says[0] if len(says) == 1 else says[int(rng.random() * len(says))]
        return Drawn(text, chosen.accepted, (("text", _option_forms(chosen)),))


@cache
def _option_forms(chosen: Option) -> tuple[str, ...]:
    """Every way to state an option: its spoken forms, then its accepted string values that are
    not short words of their own ("in" for inches, "m" for meters would be found in any text)."""
    return _forms(
        chosen.says, [value for value in chosen.accepted if isinstance(value, str) and len(value) > 2]
    )


def words(*items: str, vague: tuple[str, ...] = ()) -> Pick:
    """A pick among plain strings that are said as written."""
    return Pick(tuple(option(item) for item in items), vague)


@dataclass(frozen=True, slots=True)
class Quoted:
    """Free text the person quotes verbatim, so the exact string is the right value."""

    bodies: tuple[str, ...]
    tails: tuple[str, ...] = ("",)
    vague: tuple[str, ...] = ()

    def draw(self, rng: Random) -> Drawn:
        random = rng.random
        bodies = self.bodies
        tails = self.tails
        body = bodies[int(random() * len(bodies))] + tails[int(random() * len(tails))]
        return Drawn(f'"{body}"', (body,), (("quoted", (body,)),))


@dataclass(frozen=True, slots=True)
class Composed:
    """Text built from independent parts (paths, queries, product names): many combinations."""

    parts: tuple[tuple[str, ...], ...]
    pattern: str
    quote: bool = False
    vague: tuple[str, ...] = ()

    def draw(self, rng: Random) -> Drawn:
        random = rng.random
        chosen = [part[int(random() * len(part))] for part in self.parts]
        value = self.pattern.format(*chosen)
        return Drawn(
            f'"{value}"' if self.quote else value, (value,), (("quoted" if self.quote else "text", (value,)),)
        )


@dataclass(frozen=True, slots=True)
class Integer:
    """A whole number in [low, high], said through ``say`` (e.g. "{} minutes")."""

    low: int
    high: int
    say: str = "{}"
    step: int = 1
    vague: tuple[str, ...] = ()

    def draw(self, rng: Random) -> Drawn:
        value = self.low + self.step * int(rng.random() * ((self.high - self.low) // self.step + 1))
        return Drawn(self.say.format(value), (value,), (("number", (str(value),)),))


@dataclass(frozen=True, slots=True)
class Decimal:
    """A float in [low, high] rounded to ``places``; always a float, never an int."""

    low: float
    high: float
    places: int = 2
    say: str = "{}"
    vague: tuple[str, ...] = ()

    def draw(self, rng: Random) -> Drawn:
        value = float(round(rng.uniform(self.low, self.high), self.places))
        shown = f"{value:.{self.places}f}" if self.places else str(int(value))
        return Drawn(self.say.format(shown), (value,), (("number", _forms((shown, str(value)))),))


_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_EPOCH = _dt.date(2026, 1, 1).toordinal()
_DATE_SPAN = 730


@cache
def _date_forms(offset: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(ways to say, accepted values) of the date ``offset`` days after the epoch, built once."""
    day = _dt.date.fromordinal(_EPOCH + offset)
    month = _MONTHS[day.month - 1]
    iso = day.isoformat()
    spoken = (
        f"{month} {day.day}, {day.year}",
        f"{day.day} {month} {day.year}",
        iso,
        f"{month[:3]} {day.day} {day.year}",
    )
    accepted = (
        iso,
        f"{day.month:02d}/{day.day:02d}/{day.year}",
        f"{month} {day.day}, {day.year}",
        f"{month[:3]} {day.day}, {day.year}",
        f"{day.day} {month} {day.year}",
    )
    return spoken, accepted


@dataclass(frozen=True, slots=True)
class Date:
    """A calendar date in the next two years, said in one of several ways, accepted in several."""

    vague: tuple[str, ...] = ("the day we talked about", "that date", "the usual day")

    def draw(self, rng: Random) -> Drawn:
        offset = int(rng.random() * _DATE_SPAN)
        spoken, accepted = _date_forms(offset)
        return Drawn(spoken[int(rng.random() * len(spoken))], accepted, _date_mentions(offset))


@cache
def _date_mentions(offset: int) -> tuple[Mention, ...]:
    spoken, accepted = _date_forms(offset)
    return (("date", _forms(spoken, accepted)),)


def date_accepted(offset: int) -> tuple[str, ...]:
    """The values a call may carry for the date ``offset`` days after 2026-01-01 (ISO first)."""
    return _date_forms(offset)[1]


def date_accepted_forms(offset: int) -> tuple[str, ...]:
    """Every way the date ``offset`` days after 2026-01-01 is written (spoken and accepted)."""
    return _date_mentions(offset)[0][1]


def date_drawn(offset: int, rng: Random) -> Drawn:
    """The date ``offset`` days after 2026-01-01, said in one of its forms."""
    spoken, accepted = _date_forms(offset)
    return Drawn(spoken[int(rng.random() * len(spoken))], accepted, _date_mentions(offset))


@cache
def _clock_forms(hour: int, minute: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(ways to say, accepted values) of a time of day, built once."""
    twelve = hour % 12 or 12
    suffix = "am" if hour < 12 else "pm"
    spoken = (f"{twelve}:{minute:02d} {suffix}", f"{hour:02d}:{minute:02d}")
    accepted = (
        f"{hour:02d}:{minute:02d}",
        f"{hour:02d}:{minute:02d}:00",
        f"{twelve}:{minute:02d} {suffix.upper()}",
        f"{twelve}:{minute:02d} {suffix}",
    )
    return spoken, accepted


@dataclass(frozen=True, slots=True)
class ClockTime:
    """A time of day on the quarter hour between 06:00 and 21:45."""

    vague: tuple[str, ...] = ("the usual time", "our regular time")

    def draw(self, rng: Random) -> Drawn:
        random = rng.random
        hour = 6 + int(random() * 16)
        minute = 15 * int(random() * 4)
        spoken, accepted = _clock_forms(hour, minute)
        return Drawn(spoken[int(random() * 2)], accepted, clock_mentions(hour, minute))


@cache
def clock_mentions(hour: int, minute: int) -> tuple[Mention, ...]:
    """The ways a rewording may state a time of day."""
    spoken, accepted = _clock_forms(hour, minute)
    return (("time", _forms(spoken, accepted)),)


@dataclass(frozen=True, slots=True)
class Flag:
    """A boolean the person states; ``says_true`` / ``says_false`` are their words for it."""

    says_true: tuple[str, ...]
    says_false: tuple[str, ...] = ()
    vague: tuple[str, ...] = ()

    def draw(self, rng: Random) -> Drawn:
        if self.says_false and rng.random() < 0.5:
            said = self.says_false[below(rng, len(self.says_false))]
            return Drawn(said, (False,), (("flag", self.says_false), ("absent", self.says_true)))
        said = self.says_true[below(rng, len(self.says_true))]
        opposite: tuple[Mention, ...] = (("absent", self.says_false),) if self.says_false else ()
        return Drawn(said, (True,), (("flag", self.says_true), *opposite))


def _join(texts: list[str]) -> str:
    if len(texts) == 1:
        return texts[0]
    return ", ".join(texts[:-1]) + " and " + texts[-1]


@dataclass(frozen=True, slots=True)
class ListOf:
    """An array of distinct scalar values; the reference list keeps the order they were said in."""

    item: ValueGen
    low: int = 2
    high: int = 3
    vague: tuple[str, ...] = ()

    def draw(self, rng: Random) -> Drawn:
        count = between(rng, self.low, self.high)
        texts: list[str] = []
        values: list[Any] = []
        mentions: list[Mention] = []
        for _ in range(count * 4):
            drawn = self.item.draw(rng)
            if drawn.accepted[0] in values:
                continue
            texts.append(drawn.text)
            values.append(drawn.accepted[0])
            mentions.extend(drawn.stated())
            if len(values) == count:
                break
        return Drawn(_join(texts), (values,), tuple(mentions))


@dataclass(frozen=True, slots=True)
class Record:
    """A nested object: each field drawn by its own generator, said through ``say``.

    The accepted value is a BFCL dict answer: every key maps to its list of acceptable values.
    """

    fields: tuple[tuple[str, ValueGen], ...]
    say: str
    vague: tuple[str, ...] = ()

    def draw_fields(self, rng: Random) -> tuple[dict[str, str], dict[str, list[Any]], list[Mention]]:
        texts: dict[str, str] = {}
        answer: dict[str, list[Any]] = {}
        mentions: list[Mention] = []
        for key, gen in self.fields:
            drawn = gen.draw(rng)
            texts[key] = drawn.text
            answer[key] = list(drawn.accepted)
            mentions.extend(drawn.stated())
        return texts, answer, mentions

    def draw(self, rng: Random) -> Drawn:
        texts, answer, mentions = self.draw_fields(rng)
        return Drawn(self.say.format_map(texts), (answer,), tuple(mentions))


@dataclass(frozen=True, slots=True)
class Records:
    """An array of nested objects (e.g. order lines); the accepted value is one list of dict answers."""

    record: Record
    low: int = 1
    high: int = 3
    vague: tuple[str, ...] = field(default=())

    def draw(self, rng: Random) -> Drawn:
        texts: list[str] = []
        answers: list[dict[str, list[Any]]] = []
        mentions: list[Mention] = []
        for _ in range(between(rng, self.low, self.high)):
            said, answer, stated = self.record.draw_fields(rng)
            texts.append(self.record.say.format_map(said))
            answers.append(answer)
            mentions.extend(stated)
        return Drawn(_join(texts), (answers,), tuple(mentions))
