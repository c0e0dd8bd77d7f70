"""A count or a percentage said in words ("half a dozen", "three quarters"): the number the tool
wants has to be worked out and may not be written."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Scene, Worked
from tasks.devices._words import number_word, phrase
from tasks.spec import Param
from tasks.value_generators import Integer

_COUNTS = (
    (12, ("a dozen", "one dozen")),
    (6, ("half a dozen", "a half dozen")),
    (24, ("two dozen", "a couple of dozen")),
    (2, ("a pair", "one pair")),
    (4, ("two pairs", "a couple of pairs")),
)
_PERCENTS = (
    (25, ("a quarter", "one quarter")),
    (50, ("half", "one half")),
    (75, ("three quarters", "three-quarters")),
    (10, ("a tenth", "one tenth")),
    (20, ("a fifth", "one fifth")),
)


@dataclass(frozen=True, slots=True)
class QuantityWords:
    name: str = "quantity_words"
    weight: float = 1.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        gen = param.gen
        if not isinstance(gen, Integer) or param.type != "integer":
            return False
        if gen.say == "{}%":
            return gen.high >= 75
        about = param.description.lower()
        return gen.say == "{}" and ("how many" in about or param.name == "quantity")

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        gen = param.gen
        assert isinstance(gen, Integer)
        rows = _PERCENTS if gen.say == "{}%" else _COUNTS
        value, says = rows[int(rng.random() * len(rows))]
        said = says[int(rng.random() * len(says))]
        derived = (str(value), f"{number_word(value)} percent") if gen.say == "{}%" else (str(value),)
        return Worked(said, (value,), (phrase(*says),), derived)


DEVICE = QuantityWords()
