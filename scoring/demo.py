"""``python -m scoring demo``: the scorer's verdicts on built-in sample outputs.

One valid output per format (as each model family writes it), then one output per common mistake,
so that a miner sees what each error type means and what partial credit it earns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scoring.checking import check
from scoring.model import Call, Verdict
from scoring.rendering import FORMATS, render

WEATHER = {
    "name": "get_weather",
    "description": "Current weather in a city.",
    "parameters": {
        "type": "dict",
        "properties": {
            "city": {"type": "string", "description": "City, and country or state"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "description": "Forecast length"},
        },
        "required": ["city", "days"],
    },
}
WEATHER_ANSWER = [{"get_weather": {"city": ["Paris, France", "Paris"], "unit": ["", "celsius"], "days": [3]}}]
PARIS = Call("get_weather", {"city": "Paris, France", "days": 3})
TOKYO = Call("get_weather", {"city": "Tokyo", "days": 1})
PARALLEL_ANSWER = (*WEATHER_ANSWER, {"get_weather": {"city": ["Tokyo"], "unit": [""], "days": [1]}})


@dataclass(frozen=True)
class Sample:
    """One sample output and the task it answers."""

    label: str
    output: Any
    category: str = "simple"
    answer: tuple[dict[str, Any], ...] = tuple(WEATHER_ANSWER)


def samples() -> list[Sample]:
    valid = [Sample(f"valid, {fmt} format", render([PARIS], fmt)) for fmt in FORMATS]
    mistakes = [
        Sample("wrong function name", '[get_forecast(city="Paris", days=3)]'),
        Sample("missing required parameter", '[get_weather(city="Paris")]'),
        Sample("unexpected parameter", '[get_weather(city="Paris", days=3, lang="fr")]'),
        Sample("wrong type (string for integer)", '[get_weather(city="Paris", days="3")]'),
        Sample("wrong value", '[get_weather(city="Lyon", days=3)]'),
        Sample("wrong count (two calls for one)", render([PARIS, PARIS], "pythonic")),
        Sample("no call at all (prose)", "It is probably sunny in Paris."),
        Sample(
            "parallel, swapped order (fine)",
            render([TOKYO, PARIS], "json"),
            "parallel",
            tuple(PARALLEL_ANSWER),
        ),
        Sample("parallel, one call missing", render([TOKYO], "hermes"), "parallel", tuple(PARALLEL_ANSWER)),
        Sample("irrelevance, declined (fine)", "None of my tools can book a table.", "irrelevance", ()),
        Sample("irrelevance, called anyway", render([PARIS], "busybeaver"), "irrelevance", ()),
    ]
    return valid + mistakes


def run_demo(show: Callable[[Verdict], str]) -> None:
    """Print each sample, its category and the verdict as ``show`` formats it."""
    for sample in samples():
        verdict = check(sample.output, [WEATHER], list(sample.answer), sample.category)
        text = sample.output if isinstance(sample.output, str) else json.dumps(sample.output)
        print(f"== {sample.label} [{sample.category}]")
        print("   output: " + text.replace("\n", "\n           "))
        print("   " + show(verdict).replace("\n", "\n   "))
        print()
