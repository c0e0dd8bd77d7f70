"""Devices: ways a request states a value so that only understanding recovers it.

A template states each value as written ("on March 20, 2026", "90 minutes"); code that knows
the public value pools can pull such values out by type. A device states one value so that it
has to be worked out instead (a date relative to the conversation's today, a duration in another
unit, a sum or a share of stated amounts, a person or place named through a relation given in
context), or adds context with values of the same type that are not arguments (decoys).

Each device is one module of this package exposing ``DEVICE`` (see ``Device``); ``_MODULES``
lists them and ``DEVICES`` is the registry the generator draws from (by ``weight`` among those
that fit a parameter), so adding a device is adding a module and its name here.

``instantiate`` (tasks.builtin) applies devices only inside ``scene_scope``: the generator opens
one per task, so that every request of a task shares one today (said in a system line, never in
the request). Outside a scope nothing changes (episodes, tests of the plain templates).
"""

from __future__ import annotations

import datetime as _dt
import importlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from random import Random
from types import MappingProxyType
from typing import Any, Protocol

from tasks.spec import Param
from tasks.value_generators import _EPOCH, _MONTHS, Mention  # the dates values say: one calendar

__all__ = [
    "DEVICES",
    "SEPARATOR",
    "Device",
    "Fact",
    "Scene",
    "Worked",
    "current_scene",
    "devices_for",
    "overlaps",
    "scene_scope",
    "work",
]

#: Device modules, in registry order (the order is part of the generator's output).
_MODULES = (
    "relative_date",
    "anchored_date",
    "clock_words",
    "durations",
    "quantity_words",
    "arithmetic",
    "headcount",
    "reference",
    "labelled",
    "attributed",
    "sequence",
    "eliminated",
    "compared",
    "revised",
    "decoy",
    "aside",
    "unsaid",
)

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


#: Joins texts into one: values and templates hold no control characters, so "a form inside any of
#: the texts" is one substring search of the joined text, not one test per pair.
SEPARATOR = "\x00"


def overlaps(forms: Sequence[str], said: Sequence[str], said_text: str, forms_text: str) -> bool:
    """``any(a in b or b in a for a in forms for b in said)`` (``said_text``: ``said`` joined by
    ``SEPARATOR``, ``forms_text``: ``forms`` joined by it), with no Python frame per test: a new
    value's forms meet every text a task writes, in each draw."""
    return any(map(said_text.__contains__, forms)) or any(map(forms_text.__contains__, said))


@dataclass(slots=True)
class Scene:
    """The conversation around one task: what the system line states (today)."""

    #: Days after 2026-01-01.
    today_offset: int
    #: Reference values the task's requests state so far, and its decoys' values: a decoy never
    #: equals a stated value, nor a stated value a decoy, across all requests of the task.
    stated: list[Any] = field(default_factory=list)
    decoys: list[Any] = field(default_factory=list)
    #: What the task's facts about people are about ("the day my sister lands"), stated or only
    #: referred to: two facts never say the same thing, and a withheld value is never stated.
    references: list[str] = field(default_factory=list)
    #: The first names the choice devices tie candidates to: a later candidate never reads like one
    #: ("Priya" as a quoted value beside a person Priya), nor a later person like a stated value.
    people: list[str] = field(default_factory=list)
    #: The words the task's requests write so far, lower case: the text forms (over two characters)
    #: of their values, decoys and context sentences ("australian dollars" of a candidate): a later
    #: value or decoy never reads inside one of them, nor one of them inside it (``echoes``).
    said: list[str] = field(default_factory=list)
    #: Who or what the task's facts tie to one person or one date, and the kind of device that
    #: did ("is covering the bill": "role"; "my sister": "relation" or "subject"; "the book club":
    #: "event"): two people with one role make "the person paying" of another request ambiguous,
    #: two dates for one event "the day after the book club" (``hold``).
    holders: dict[str, str] = field(default_factory=dict)
    #: The most values one request of the task states through devices (the category's
    #: ``Category.worked``): three where the task makes one request, two where several requests
    #: share the length a rewording may hold.
    worked: int = 2
    #: ``stated``, ``decoys`` and ``people`` as ``texts`` gives them (their string values over two
    #: characters, lower-cased), each with how many of its list's items it has read: kept up as the
    #: lists grow (they only grow), not made again for every draw of every device.
    _lowered: tuple[list[str], list[str], list[str]] = field(
        default_factory=lambda: ([], [], []), repr=False, compare=False
    )
    _read: list[int] = field(default_factory=lambda: [0, 0, 0], repr=False, compare=False)
    #: The values of ``stated`` and ``decoys`` a set can hold (text and numbers), with how many of
    #: each list's items it has read (``taken``).
    _taken: set[Any] = field(default_factory=set, repr=False, compare=False)
    _taken_read: list[int] = field(default_factory=lambda: [0, 0], repr=False, compare=False)

    def taken(self) -> set[Any]:
        """A new set of the text and number values the task states or holds as decoys."""
        taken = self._taken
        read = self._taken_read
        for index, values in enumerate((self.stated, self.decoys)):
            if read[index] != len(values):
                if read[index] > len(values):  # a list cut short: read both again
                    taken.clear()
                    read[0] = read[1] = 0
                    return self.taken()
                taken.update(value for value in values[read[index] :] if isinstance(value, (str, int, float)))
                read[index] = len(values)
        return taken.copy()

    def texts(self, people: bool = False) -> list[str]:
        """A new list of the task's stated values and decoys that are text over two characters,
        lower-cased (and its people's names with ``people``), then ``said``: what a new value or
        name must not read inside, nor be read inside of."""
        sources = (self.stated, self.decoys, self.people)
        lowered = self._lowered
        read = self._read
        for index in range(3 if people else 2):
            values = sources[index]
            if read[index] != len(values):
                if read[index] > len(values):  # a list cut short: read it again
                    lowered[index].clear()
                    read[index] = 0
                lowered[index].extend(
                    value.lower()
                    for value in values[read[index] :]
                    if isinstance(value, str) and len(value) > 2
                )
                read[index] = len(values)
        if people:
            return [*lowered[0], *lowered[1], *lowered[2], *self.said]
        return [*lowered[0], *lowered[1], *self.said]

    def hold(self, kind: str, *who: str, shared: bool = False) -> bool:
        """Tie each of ``who`` to one person of this task, for devices of ``kind``: False, holding
        nothing, where one is held by another kind, or by this one and ``shared`` is False (a role
        or a relation names one person; the same subject may have several events of its own)."""
        for phrase in who:
            held = self.holders.get(phrase)
            if held is not None and (held != kind or not shared):
                return False
        if len(set(who)) < len(who) and not shared:
            return False
        for phrase in who:
            self.holders[phrase] = kind
        return True

    def hear(self, mentions: tuple[Mention, ...]) -> None:
        """Note the text forms of ``mentions`` as written by the task (see ``said``)."""
        self.said += [
            form.lower() for kind, forms in mentions if kind == "text" for form in forms if len(form) > 2
        ]

    def unused(self, *drawn: tuple[Any, ...]) -> bool:
        """Whether none of the accepted values is one the task already states or holds as a decoy
        (a device drawing its own values checks them: a value that another device's decoy states
        would be stated twice, once as a non-argument)."""
        taken = (*self.stated, *self.decoys)
        return not any(value in taken for accepted in drawn for value in accepted if value != "")

    def echoes(self, mentions: tuple[Mention, ...]) -> bool:
        """Whether a form of ``mentions`` reads inside a text the task states or holds as a decoy,
        or one of those inside it ("Colddale" beside another request's "Glen Colddale", "dollars"
        beside another request's candidate "Australian dollars"): a rewording that dropped one
        would still seem to state it, and verification could not claim them apart."""
        said = self.texts()
        if not said:
            return False
        forms = [form.lower() for _, forms in mentions for form in forms if len(form) > 2]
        return overlaps(forms, said, SEPARATOR.join(said), SEPARATOR.join(forms))

    @property
    def today(self) -> _dt.date:
        return _dt.date.fromordinal(_EPOCH + self.today_offset)

    def system_line(self) -> str:
        day = self.today
        return f"Today is {_WEEKDAYS[day.weekday()]}, {_MONTHS[day.month - 1]} {day.day}, {day.year}."

    @classmethod
    def draw(cls, rng: Random) -> Scene:
        # Today within the first 20 months, so that dates worked out from it stay in 2026-2027.
        return cls(int(rng.random() * 600))


# Not frozen (built per request). Treat as immutable.
@dataclass(slots=True)
class Fact:
    """A sentence of context the request must keep: a fact needed to work a value out
    (``role`` "fact") or a value of the same type that is not an argument (``role`` "decoy")."""

    said: str
    mentions: tuple[Mention, ...]
    role: str
    about: str = ""


@dataclass(slots=True)
class Worked:
    """One value as a device states it.

    ``text`` fills the template's placeholder; ``accepted`` are the values a correct call may
    carry (reference first); ``mentions`` must stay in any rewording; ``derived`` are forms of the
    worked-out value that must not be written (then nothing is left to work out); ``context`` are
    sentences added around the request.
    """

    text: str
    accepted: tuple[Any, ...]
    mentions: tuple[Mention, ...]
    derived: tuple[str, ...] = ()
    context: tuple[Fact, ...] = ()


class Device(Protocol):
    """One way of stating a value that needs understanding."""

    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> float: ...

    #: "value": states the parameter's value; "decoy": adds context around a value drawn as usual;
    #: "withheld": alludes to a withheld value (missing_param) beside a stated one of its type.
    @property
    def role(self) -> str: ...

    def fits(self, param: Param) -> bool: ...

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        """The value stated this way, or None when this draw cannot (the caller draws as usual)."""
        ...


@cache
def _registry() -> Mapping[str, Device]:
    loaded: dict[str, Device] = {}
    for module_name in _MODULES:
        device: Device = importlib.import_module(f"tasks.devices.{module_name}").DEVICE
        loaded[device.name] = device
    return MappingProxyType(loaded)


class _Registry(Mapping[str, Device]):
    """``DEVICES``: loads the device modules on first use (no work at import time)."""

    def __getitem__(self, name: str) -> Device:
        return _registry()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_registry())

    def __len__(self) -> int:
        return len(_registry())


DEVICES: Mapping[str, Device] = _Registry()


@cache
def devices_for(param: Param, role: str) -> tuple[Device, ...]:
    """The devices of one role that fit a parameter, in registry order."""
    return tuple(device for device in _registry().values() if device.role == role and device.fits(param))


@cache
def _fitting(param: Param, role: str) -> tuple[tuple[Device, ...], float]:
    """``devices_for`` and the sum of their weights, once per parameter and role."""
    fitting = devices_for(param, role)
    return fitting, sum(device.weight for device in fitting)


def pick_device(param: Param, role: str, rng: Random) -> Device | None:
    """One fitting device of a role, drawn by weight; None when none fits."""
    fitting, total = _fitting(param, role)
    if not fitting:
        return None
    if len(fitting) == 1:
        return fitting[0]
    point = rng.random() * total
    for device in fitting:
        point -= device.weight
        if point < 0:
            return device
    return fitting[-1]


def work(name: str, param: Param, rng: Random, scene: Scene) -> Worked | None:
    """State ``param``'s value with the named device (for callers outside the generator, such
    as episodes' user turns); None when the device does not fit or this draw cannot."""
    device = _registry()[name]
    if not device.fits(param):
        return None
    return device.work(param, rng, scene)


_CURRENT = threading.local()


def current_scene() -> Scene | None:
    """The scene of the task being built on this thread, None outside ``scene_scope``."""
    scene: Scene | None = getattr(_CURRENT, "scene", None)
    return scene


@contextmanager
def scene_scope(rng: Random, worked: int = 2) -> Iterator[Scene]:
    """Open the scene of one task (drawn from ``rng``): ``instantiate`` applies devices inside,
    at most ``worked`` of them stating a value in each request (``Scene.worked``)."""
    scene = Scene.draw(rng)
    scene.worked = worked
    previous = getattr(_CURRENT, "scene", None)
    _CURRENT.scene = scene
    try:
        yield scene
    finally:
        _CURRENT.scene = previous
