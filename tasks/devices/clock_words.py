"""A time of day said in words ("half past seven in the evening", "a quarter to nine in the
morning"): the 24-hour clock value the tool wants has to be worked out and may not be written."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Scene, Worked
from tasks.devices._words import number_word, phrase
from tasks.spec import Param
from tasks.value_generators import ClockTime, clock_mentions


def _period(hour: int) -> str:
    if hour < 12:
        return "in the morning"
    return "in the afternoon" if hour < 18 else "in the evening"


@dataclass(frozen=True, slots=True)
class ClockWords:
    name: str = "clock_words"
    weight: float = 1.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        return isinstance(param.gen, ClockTime)

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        random = rng.random
        hour = 7 + int(random() * 15)
        minute = 15 * int(random() * 4)
        if hour == 12 and minute == 0:
            said: tuple[str, ...] = ("noon", "midday")
        else:
            named = hour + 1 if minute == 45 else hour
            word = number_word(named % 12 or 12)
            period = _period(hour)
            lead = {0: f"{word} o'clock", 15: f"a quarter past {word}", 30: f"half past {word}"}.get(
                minute, f"a quarter to {word}"
            )
            said = (f"{lead} {period}", f"{lead} {period}".replace("a quarter", "quarter"))
        derived = tuple(form for _, forms in clock_mentions(hour, minute) for form in forms)
        return Worked(
            said[int(random() * len(said))], (f"{hour:02d}:{minute:02d}",), (phrase(*said),), derived
        )


DEVICE = ClockWords()
