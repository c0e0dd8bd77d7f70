"""A date said relative to the conversation's today ("the Friday after next", "in ten days").

Today is stated only in the task's system line, so the date has to be worked out; none of its
written forms may appear in the request.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from random import Random

from tasks.devices import Scene, Worked
from tasks.devices._words import ORDINALS, date_derived, number_word, phrase
from tasks.spec import Param
from tasks.value_generators import Date, Mention, date_accepted

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_EPOCH = _dt.date(2026, 1, 1).toordinal()


def _relative(rng: Random, scene: Scene) -> tuple[int, str, Mention]:
    """(days after the epoch, the words, the mention that keeps them)."""
    today = scene.today_offset
    kind = int(rng.random() * 7)
    if kind == 0:
        if rng.random() < 0.5:
            return today + 1, "tomorrow", phrase("tomorrow")
        return today + 2, "the day after tomorrow", phrase("the day after tomorrow", "day after tomorrow")
    if kind == 1:
        days = 3 + int(rng.random() * 18)
        word = number_word(days)
        said: tuple[str, ...] = (f"in {word} days", f"{word} days from now", f"{word} days from today")
        return today + days, said[int(rng.random() * 3)], phrase(*said)
    if kind == 2:
        weeks = 1 + int(rng.random() * 4)
        word = "a" if weeks == 1 else number_word(weeks)
        unit = "week" if weeks == 1 else "weeks"
        said = (f"{word} {unit} from today", f"in {word} {unit}", f"{word} {unit} from now")
        return today + 7 * weeks, said[int(rng.random() * 3)], phrase(*said)
    weekday_today = scene.today.weekday()
    if kind in (3, 4):
        target = int(rng.random() * 7)
        ahead = (target - weekday_today) % 7 or 7
        name = _WEEKDAYS[target]
        said = (f"this coming {name}", f"this {name} coming")
        return today + ahead, said[int(rng.random() * 2)], phrase(*said)
    if kind == 5:
        target = int(rng.random() * 7)
        ahead = ((target - weekday_today) % 7 or 7) + 7
        name = _WEEKDAYS[target]
        said = (f"the {name} after next", f"{name} after next")
        return today + ahead, said[0], phrase(*said)
    day = 1 + int(rng.random() * 28)
    current = scene.today
    year, month = (current.year + 1, 1) if current.month == 12 else (current.year, current.month + 1)
    offset = _dt.date(year, month, day).toordinal() - _EPOCH
    ordinal = ORDINALS[day]
    said = (f"the {ordinal} of next month", f"next month on the {ordinal}", f"the {ordinal} next month")
    return offset, said[int(rng.random() * 3)], phrase(*said)


@dataclass(frozen=True, slots=True)
class RelativeDate:
    name: str = "relative_date"
    weight: float = 1.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        return isinstance(param.gen, Date)

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        offset, said, mention = _relative(rng, scene)
        return Worked(said, date_accepted(offset), (mention,), date_derived(offset))


DEVICE = RelativeDate()
