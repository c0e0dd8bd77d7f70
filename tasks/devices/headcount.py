"""A number of people counted from who is named ("me, my partner and our three kids")."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Scene, Worked
from tasks.devices._words import number_word, phrase
from tasks.spec import Param
from tasks.value_generators import Integer

# (people besides the ones counted by the words, the words with {} for a count).
_GROUPS = (
    (1, "me and {} friends", "{} friends"),
    (1, "myself plus {} colleagues", "{} colleagues"),
    (2, "me, my partner and our {} kids", "{} kids"),
    (2, "my wife, me and {} of our neighbours", "{} of our neighbours"),
    (1, "me and my {} cousins", "{} cousins"),
    (2, "the two of us plus {} guests of ours", "{} guests of ours"),
)
_SAYS = {"for {} people": "for {}", "{} guests": "{}", "{} ways": "between {}"}


@dataclass(frozen=True, slots=True)
class Headcount:
    name: str = "headcount"
    weight: float = 1.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        return isinstance(param.gen, Integer) and param.gen.say in _SAYS and param.type == "integer"

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        gen = param.gen
        assert isinstance(gen, Integer)
        base, words, key = _GROUPS[int(rng.random() * len(_GROUPS))]
        others = 2 + int(rng.random() * 3)
        value = base + others
        group = words.format(number_word(others))
        said = _SAYS[gen.say].format(group)
        derived = (str(value), f"{number_word(value)} people", f"{number_word(value)} of us")
        return Worked(said, (value,), (phrase(group, key.format(number_word(others))),), derived)


DEVICE = Headcount()
