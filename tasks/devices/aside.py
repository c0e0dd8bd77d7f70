"""A value stated as a fact about someone else, and the request refers to that fact by its event.

"My sister flies in on May 12, 2026 and flies home on May 19, 2026 ... a table for two the day
she lands": the dates stand in sentences about another person's plans, in no frame that marks
them as taken back or as the request's own, and the request names the event rather than the
value (with other words than the fact: "lands" for "flies in"). The same sentences, with the
referred event left undated, make a missing_param request (``tasks.devices.unsaid``): a value of
the right type is written, but not the one asked for. So neither "a value of the slot's type is
there -> call" nor "values in context sentences are never arguments" holds.

The tables (``EVENTS``) are shared with ``tasks.devices.unsaid``: per kind of value, events that
can be dated (or placed, or named) about a subject, each with the sentence that states it and
the ways a request refers to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from random import Random
from typing import Any

from tasks.devices import Fact, Scene, Worked
from tasks.devices._words import filled, phrase
from tasks.library.common import EMAIL, PERSON, PHONE, Handle, Place
from tasks.library.ranges import DateEnd
from tasks.spec import Param
from tasks.value_generators import ClockTime, Composed, Date, Drawn, Mention, date_drawn

__all__ = [
    "DEVICE",
    "EVENTS",
    "SAME_EVENT_ONLY",
    "SUBJECTS",
    "Event",
    "about",
    "claim",
    "event_kind",
    "fact",
    "reference",
]

#: Whose plans the sentences are about (singular: the frames say "flies", "is staying").
# Apart from the people the choice devices name by role ("my landlord", "my neighbour", "is the
# client": tasks.devices.attributed): a request with both would say the subject twice, and a
# rewording that dropped a withheld value's allusion would still name its subject.
SUBJECTS = (
    "my sister",
    "the caretaker",
    "the new tenant",
    "my flatmate",
    "the auditor",
    "my cousin",
    "the architect",
    "my manager",
    "the inspector",
    "my aunt",
    "the contractor",
    "the surveyor",
    "my business partner",
    "the photographer",
)


@dataclass(frozen=True, slots=True)
class Event:
    """Something about a subject that a value of one kind states."""

    #: The sentence stating it: "{subj}" and "{x}" (the value as said).
    states: tuple[str, ...]
    #: How a request refers to it without the value ("{subj}"); the words differ from the fact's.
    refers: tuple[str, ...]
    #: Key words a rewording must keep of the reference (one form per ``refers`` entry).
    keeps: tuple[str, ...]


# Events of one kind are distinct things (no two could be the same day said two ways), so a
# request referring to one that the context leaves undated has no value for it.
_DATES = (
    Event(("{subj} flies in on {x}",), ("the day {subj} lands",), ("lands",)),
    Event(("{subj} moves in on {x}",), ("the day {subj} gets the keys",), ("gets the keys",)),
    Event(("{subj} starts the new job on {x}",), ("the first day of {subj}'s new job",), ("first day",)),
    Event(("{subj} goes on leave on {x}",), ("the day {subj}'s leave begins",), ("leave begins",)),
    Event(("{subj} has jury duty on {x}",), ("the day of {subj}'s jury service",), ("jury",)),
    Event(("{subj} has the final fitting on {x}",), ("the day of {subj}'s last fitting",), ("last fitting",)),
    Event(("{subj} has surgery on {x}",), ("the day of {subj}'s operation",), ("operation",)),
    Event(("{subj} graduates on {x}",), ("{subj}'s graduation day",), ("graduation",)),
)
_TIMES = (
    Event(("{subj}'s train gets in at {x}",), ("the time {subj}'s train arrives",), ("train arrives",)),
    Event(("{subj}'s shift ends at {x}",), ("the time {subj} clocks off",), ("clocks off",)),
    Event(("{subj}'s shift starts at {x}",), ("the time {subj} clocks on",), ("clocks on",)),
    Event(("{subj}'s flight lands at {x}",), ("the time {subj}'s plane touches down",), ("touches down",)),
    Event(("{subj}'s class lets out at {x}",), ("the time {subj} is out of class",), ("out of class",)),
)
_PLACES = (
    Event(("{subj} is staying in {x} this month",), ("the city where {subj} is put up",), ("put up",)),
    Event(("{subj} is relocating to {x}",), ("the city {subj} is moving to",), ("moving to",)),
    Event(("{subj} grew up in {x}",), ("{subj}'s hometown",), ("hometown",)),
    Event(("{subj} works out of {x}",), ("the city {subj}'s office is in",), ("office",)),
)
_PEOPLE = (
    Event(("{x} does the books for {subj}",), ("{subj}'s accountant",), ("accountant",)),
    Event(("{x} handles the legal side for {subj}",), ("{subj}'s lawyer",), ("lawyer",)),
    Event(("{x} designed the website for {subj}",), ("{subj}'s web designer",), ("designer",)),
    Event(("{x} cleans for {subj} on Fridays",), ("{subj}'s cleaner",), ("cleaner",)),
)
# References differ from every other kind's (a person's "accountant" is not an inbox).
_EMAILS = (
    Event(("{subj}'s bookkeeper writes from {x}",), ("{subj}'s bookkeeper's inbox",), ("bookkeeper",)),
    Event(("{subj}'s lawyer emails from {x}",), ("the inbox of {subj}'s solicitor",), ("solicitor",)),
    Event(("{subj}'s assistant uses {x}",), ("{subj}'s assistant's mailbox",), ("assistant",)),
    Event(("{subj}'s agent answers at {x}",), ("{subj}'s agent's inbox",), ("agent",)),
)
_PHONES = (
    Event(("{subj}'s office line is {x}",), ("{subj}'s work number",), ("work",)),
    Event(("{subj}'s mobile is {x}",), ("{subj}'s cell",), ("cell",)),
    Event(("{subj}'s front desk picks up on {x}",), ("{subj}'s reception",), ("reception",)),
)


# Ids, paths, handles: what someone did with one. Two of these acts could be one ("asked about"
# is also "mentioned"), so a withheld one differs from the stated one by its subject only
# (``SAME_EVENT_ONLY``).
_THINGS = (
    Event(("{subj} flagged {x} this morning",), ("the one {subj} flagged",), ("flagged",)),
    Event(("{subj} sent over {x}",), ("the one {subj} sent over",), ("sent over",)),
    Event(("{subj} was asking about {x}",), ("the one {subj} asked about",), ("asked about",)),
)
#: Kinds whose events may coincide: facts and references differ by subject, never by event.
SAME_EVENT_ONLY = frozenset({"thing"})


@cache
def _kinds() -> dict[str, tuple[Event, ...]]:
    return {
        "date": _DATES,
        "time": _TIMES,
        "place": _PLACES,
        "person": _PEOPLE,
        "email": _EMAILS,
        "phone": _PHONES,
        "thing": _THINGS,
    }


#: Kind -> its events.
EVENTS = _kinds


def event_kind(param: Param, calendar: bool = False) -> str | None:
    """The kind of events that state ``param``'s values, None when none do. ``calendar``: also
    the ends of a date range (``tasks.library.ranges.DateEnd``), which only a withheld value
    may take (a worked-out end could fall before its start)."""

    gen = param.gen
    if param.type not in ("string", ""):
        return None
    if isinstance(gen, Date) or (calendar and isinstance(gen, DateEnd)):
        return "date"
    if isinstance(gen, ClockTime):
        return "time"
    if isinstance(gen, Place):
        return "place"
    if gen is PERSON:
        return "person"
    if gen is EMAIL:
        return "email"
    if gen is PHONE:
        return "phone"
    if isinstance(gen, Handle) or (isinstance(gen, Composed) and not gen.quote):
        return "thing"
    return None


def draw_value(kind: str, param: Param, rng: Random, scene: Scene) -> Drawn:
    """A value of the kind: a date within two months of today, else the parameter's own draw."""
    if kind == "date":
        return date_drawn(scene.today_offset + 1 + int(rng.random() * 60), rng)
    drawn: Drawn = param.gen.draw(rng)
    return drawn


def about(event: Event, subject: str) -> str:
    """What a fact is about, as its first reference says it ("the day my sister lands")."""
    return event.refers[0].format(subj=subject)


def fact(event: Event, subject: str, drawn: Drawn, role: str, rng: Random) -> Fact:
    """The sentence stating ``drawn`` as the event of ``subject``."""
    frame = event.states[int(rng.random() * len(event.states))]
    said = filled(frame, subj=subject, x=drawn.text)
    mentions: tuple[Mention, ...] = (*drawn.stated(), ("text", (subject,)))
    return Fact(said, mentions, role, f"{subject}: {about(event, subject)}")


def claim(scene: Scene, *abouts: str) -> bool:
    """Reserve what new facts (or a withheld value's reference) are about for this task: False,
    reserving nothing, where one is already taken (a second fact about it would contradict the
    first, or state a withheld value)."""
    if any(said in scene.references for said in abouts) or len(set(abouts)) < len(abouts):
        return False
    scene.references.extend(abouts)
    return True


def reference(event: Event, subject: str, rng: Random) -> tuple[str, tuple[Mention, ...]]:
    """How a request refers to ``subject``'s ``event``, and what a rewording must keep of it."""
    index = int(rng.random() * len(event.refers))
    said = event.refers[index].format(subj=subject)
    return said, (("text", (subject,)), phrase(event.keeps[index]))


def two(rng: Random, count: int) -> tuple[int, int]:
    """Two different indexes below ``count``."""
    first = int(rng.random() * count)
    return first, (first + 1 + int(rng.random() * (count - 1))) % count


def distinct(a: Drawn, b: Drawn) -> bool:
    """Whether two drawn values read differently (no accepted form in common)."""
    accepted: set[Any] = set(a.accepted)
    return not any(form in accepted for form in b.accepted)


@dataclass(frozen=True, slots=True)
class Aside:
    name: str = "aside"
    weight: float = 2.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        return event_kind(param) is not None

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        kind = event_kind(param)
        if kind is None:
            return None
        events = _kinds()[kind]
        random = rng.random
        asked, other = two(rng, len(events))
        first, second = two(rng, len(SUBJECTS))
        subject = SUBJECTS[first]
        value = draw_value(kind, param, rng, scene)
        if not scene.unused(value.accepted):
            return None
        facts = [fact(events[asked], subject, value, "fact", rng)]
        # Most of the time a second fact with another value of the type (the same subject's other
        # event, or the same event of someone else): the reference, not the type or the
        # position, tells which is meant.
        if random() < 0.7:
            decoy = draw_value(kind, param, rng, scene)
            if not distinct(value, decoy) or not scene.unused(decoy.accepted):
                return None
            if kind in SAME_EVENT_ONLY:
                facts.append(fact(events[asked], SUBJECTS[second], decoy, "decoy", rng))
            else:
                facts.append(fact(events[other], subject, decoy, "decoy", rng))
            if random() < 0.5:
                facts.reverse()
        subjects = {entry.about.split(": ", 1)[0] for entry in facts}
        if not scene.hold("subject", *subjects, shared=True):
            return None  # a relation another device gave a name ("my sister Ana lives in ...")
        if not claim(scene, *(entry.about.split(": ", 1)[1] for entry in facts)):
            return None
        said, mentions = reference(events[asked], subject, rng)
        if len(facts) > 1:
            # Held at once: the request's other devices must not state the decoy as their value.
            scene.decoys.extend(decoy.accepted)
        return Worked(said, value.accepted, mentions, (), tuple(facts))


DEVICE = Aside()
