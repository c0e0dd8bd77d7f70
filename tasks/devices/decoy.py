"""Context with another value of the same type that is not an argument ("not Lyon, that was the
old plan"), so that every value of a type in the text is no longer an argument of that type."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Fact, Scene, Worked
from tasks.devices._words import filled
from tasks.library.common import EmailAddress, Handle, PersonName, Place
from tasks.spec import Param
from tasks.value_generators import ClockTime, Composed, Date, Decimal, Integer, Pick, Quoted

_ANY = (
    "not {x}, that was the old plan",
    "forget {x}, I changed my mind",
    "{x} was last time, this is a different one",
    "I first thought {x}, but scratch that",
    "ignore {x} from my earlier message",
    "my colleague went with {x}, that's not what I want",
    "{x} came up yesterday but it's off the table",
    "earlier someone suggested {x}; no",
)
_DATE = (
    "I'm busy on {x}",
    "{x} is already taken for me",
    "I'm away on {x}, by the way",
    "the last time was on {x}",
)
_CLOCK = ("I have a call at {x}", "{x} won't work for me", "the old slot was {x}")
_KINDS: tuple[type, ...] = (Date, ClockTime, Pick, Composed, Integer, Decimal, Quoted)


def _kinds() -> tuple[type, ...]:

    return (*_KINDS, Place, PersonName, EmailAddress, Handle)


@dataclass(frozen=True, slots=True)
class Decoy:
    name: str = "decoy"
    weight: float = 1.0
    role: str = "decoy"

    def fits(self, param: Param) -> bool:
        gen = param.gen
        if isinstance(gen, Pick) and (param.enum is not None or len(gen.options) < 3):
            # An enum's words ("dollars", "standard") are also plain words of other requests.
            return False
        if isinstance(gen, (Integer, Decimal)) and gen.say == "{}" and gen.low < 10:
            # A bare one-digit number ("2") reads like any digit of the request ("x^2").
            return False
        return isinstance(gen, _kinds()) and param.type != "boolean"

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        gen = param.gen
        drawn = gen.draw(rng)
        frames: tuple[str, ...] = _ANY
        if isinstance(gen, Date):
            frames = _DATE + _ANY[:3]
        elif isinstance(gen, ClockTime):
            frames = _CLOCK + _ANY[:3]
        frame = frames[int(rng.random() * len(frames))]
        about = f"not the {param.description.rstrip('.').lower()}"
        fact = Fact(filled(frame, x=drawn.text), drawn.stated(), "decoy", about)
        return Worked("", drawn.accepted, drawn.stated(), (), (fact,))


DEVICE = Decoy()
