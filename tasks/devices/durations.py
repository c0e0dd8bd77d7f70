"""A quantity said in another unit than the tool wants ("an hour and a half" for minutes).

Applies to whole-number parameters said in minutes, hours, seconds, days or meters; each unit
has its table of other-unit phrasings with exact conversions. The converted number may not
appear in the request.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Scene, Worked
from tasks.devices._words import number_word, phrase
from tasks.spec import Param
from tasks.value_generators import Integer

# say of the parameter -> (value in that unit, the ways to say it in another unit).
_TABLES: dict[str, tuple[tuple[int, tuple[str, ...]], ...]] = {
    "{} minutes": (
        (15, ("a quarter of an hour", "quarter of an hour")),
        (30, ("half an hour", "half of an hour")),
        (45, ("three quarters of an hour", "three-quarters of an hour")),
        (60, ("an hour", "one hour")),
        (75, ("an hour and a quarter", "one and a quarter hours")),
        (90, ("an hour and a half", "one and a half hours")),
        (120, ("two hours", "a couple of hours")),
        (150, ("two and a half hours", "two hours and a half")),
        (180, ("three hours", "three full hours")),
        (240, ("four hours", "four full hours")),
    ),
    "{} hours": (
        (12, ("half a day", "half of a day")),
        (24, ("a whole day", "one full day")),
        (36, ("a day and a half", "one and a half days")),
        (48, ("two days", "two full days")),
        (72, ("three days", "three full days")),
    ),
    "{} seconds": (
        (30, ("half a minute", "half of a minute")),
        (60, ("a minute", "one minute")),
        (90, ("a minute and a half", "one and a half minutes")),
        (120, ("two minutes", "a couple of minutes")),
        (180, ("three minutes", "three full minutes")),
        (300, ("five minutes", "five full minutes")),
    ),
    "{} days": (
        (7, ("a week", "one week")),
        (14, ("two weeks", "a fortnight")),
        (21, ("three weeks", "three full weeks")),
        (28, ("four weeks", "four full weeks")),
    ),
    "{} meters": (
        (500, ("half a kilometer", "half a kilometre")),
        (1000, ("a kilometer", "one kilometre")),
        (1500, ("a kilometer and a half", "one and a half kilometres")),
        (2000, ("two kilometers", "two kilometres")),
        (3000, ("three kilometers", "three kilometres")),
    ),
}


@dataclass(frozen=True, slots=True)
class Durations:
    name: str = "durations"
    weight: float = 1.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        gen = param.gen
        return isinstance(gen, Integer) and gen.say in _TABLES and param.type == "integer"

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        gen = param.gen
        assert isinstance(gen, Integer)
        rows = _TABLES[gen.say]
        value, says = rows[int(rng.random() * len(rows))]
        said = says[int(rng.random() * len(says))]
        unit = gen.say.replace("{} ", "")
        derived = (str(value), f"{number_word(value)} {unit}") if value <= 20 else (str(value),)
        return Worked(said, (value,), (phrase(*says),), derived)


DEVICE = Durations()
