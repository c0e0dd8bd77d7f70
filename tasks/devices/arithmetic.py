"""An amount worked out from stated figures ("a quarter of 120.00", "three times 12.50").

Applies to money-like decimals (two places or whole units). The figures are stated, the result
is not: it may not appear in the request. Everything is computed in whole cents, so the
accepted float is exactly the value a person would get.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Scene, Worked
from tasks.devices._words import number_word, phrase
from tasks.spec import Param
from tasks.value_generators import Decimal, Mention

_FRACTIONS = {
    2: ("half of", "half"),
    3: ("a third of", "third"),
    4: ("a quarter of", "quarter"),
    5: ("a fifth of", "fifth"),
}


def _shown(units: int, places: int) -> str:
    return f"{units // 100}.{units % 100:02d}" if places == 2 else str(units)


def _number(units: int, places: int, say: str) -> tuple[str, Mention]:
    shown = _shown(units, places)
    value = units / 100 if places == 2 else float(units)
    forms = (shown,) if str(value) == shown else (shown, str(value))
    return say.format(shown), ("number", forms)


@dataclass(frozen=True, slots=True)
class Arithmetic:
    name: str = "arithmetic"
    weight: float = 1.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        gen = param.gen
        return (
            isinstance(gen, Decimal)
            and param.type == "float"
            and gen.places in (0, 2)
            and gen.low >= 1
            and gen.say in ("{}", "${}")
        )

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        gen = param.gen
        assert isinstance(gen, Decimal)
        scale = 100 if gen.places == 2 else 1
        low, high = int(gen.low * scale), int(gen.high * scale)
        random = rng.random
        kind = int(random() * 4)
        if kind == 0:
            ways = 2 + int(random() * 4)
            result = low + int(random() * max(1, high // ways - low))
            total_text, total = _number(result * ways, gen.places, gen.say)
            lead, key = _FRACTIONS[ways]
            if random() < 0.5:
                said, op = f"{lead} {total_text}", phrase(lead, key)
            else:
                word = number_word(ways)
                said, op = f"{total_text} split {word} ways", phrase(f"split {word} ways", f"{word} ways")
            mentions: tuple[Mention, ...] = (total, op)
        elif kind == 1:
            times = 2 + int(random() * 5)
            each = low + int(random() * max(1, high // times - low))
            result = each * times
            each_text, each_mention = _number(each, gen.places, gen.say)
            word = number_word(times)
            if random() < 0.5:
                said, op = f"{word} times {each_text}", phrase(f"{word} times")
            else:
                said, op = f"{word} lots of {each_text}", phrase(f"{word} lots", f"{word} times")
            mentions = (each_mention, op)
        else:
            first = low + int(random() * max(1, (high - low) // 2))
            second = max(1, int(random() * first * 0.6))
            if kind == 2:
                result = first + second
                words = ("{} plus {}", "{} and another {}")
                op = phrase("plus", "another")
            else:
                first, second = first + second, second
                result = first - second
                words = ("{} minus {}", "{} less {}")
                op = phrase("minus", "less")
            first_text, first_mention = _number(first, gen.places, gen.say)
            second_text, second_mention = _number(second, gen.places, gen.say)
            if first_text == second_text:
                return None
            said = words[int(random() * 2)].format(first_text, second_text)
            mentions = (first_mention, second_mention, op)
        shown = _shown(result, gen.places)
        value = result / 100 if gen.places == 2 else float(result)
        derived = tuple(dict.fromkeys((shown, str(value), str(int(value)) if value == int(value) else shown)))
        return Worked(said, (value,), mentions, derived)


DEVICE = Arithmetic()
