"""Red team: model-free "miners" that attack the task generator instead of understanding requests.

The generator is public, so a cheater can invert it. ``TemplateInverter`` does that for builtin
tasks: it maps each offered tool back to its library spec (the shuffle keeps parameter
descriptions and the tail of the tool description), strips the fixed openers and closers, cuts the
request at the fixed joiners, and matches each piece against every library template, each slot a
regex built from its value generator; the slot texts turn back into reference values. A piece in
which a slot is one of the generator's ``vague`` phrases, or whose best template belongs to a tool
that is not offered, means no call at all. ``DatasetMemoriser`` is the attacker for external
sources: it looks the request text up in the published tasks. ``LexicalMiner``
(bench/redteam_kit/lexical) reads any text, template or phrased, by keywords and value formats
alone. ``NeverCalls``, ``RandomTool`` and ``FormOnly`` (the lexical miner's tools, junk values) are
baselines. ``evaluate_miner`` scores any of them on
the variants a miner would be shown.
Episodes have their own attacker, ``ScriptedAgent`` (bench/redteam_agent.py). The attackers live in
bench/redteam_kit/ (``inverter``, ``lexical``, ``agent``); this script runs them.

    .venv/bin/python bench/redteam.py [--tasks 5000] [--seed 1] [--variant-seed redteam]
    .venv/bin/python bench/redteam.py --miners lexical,template,never --per-category 200 --seed 9 [--phrased]

``--phrased`` first rewords the round with the stand-in phrasing model (bench/phrasing_standin.py).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterable, Sequence
from random import Random
from typing import Any, Protocol

from redteam_kit import load_sibling
from redteam_kit.inverter import Answer, TemplateInverter, _Offered, _properties, match_tool, request_text
from redteam_kit.lexical import LexicalMiner

from scoring import Call, function_of
from scoring.checking import check
from subnet.cli import OneLineParser, user_errors
from subnet.config import int_arg
from tasks import CATEGORIES, Task, generate, variant
from tasks.answers import reference_calls

__all__ = [
    "DatasetMemoriser",
    "FormOnly",
    "LexicalMiner",
    "Miner",
    "NeverCalls",
    "RandomTool",
    "TemplateInverter",
    "evaluate_miner",
    "match_tool",
    "request_text",
]


class Miner(Protocol):
    """Anything that answers a request: ``[(function name as offered, arguments)]``, [] for no call."""

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer: ...


# --- Baselines and the memoriser -------------------------------------------------------------


class NeverCalls:
    """Refuses everything: right on the no-call categories only."""

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer:
        return []


_JUNK: dict[str, Any] = {
    "string": "x",
    "integer": 1,
    "number": 1.0,
    "boolean": True,
    "array": [],
    "object": {},
}


class RandomTool:
    """Calls a random offered tool with junk of the right type in every required parameter."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = Random(seed)

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer:
        if not tools:
            return []
        function = function_of(tools[int(self._rng.random() * len(tools))])
        properties = _properties(function)
        required = (function.get("parameters") or {}).get("required") or []
        arguments = {name: _JUNK.get(str(properties.get(name, {}).get("type")), "x") for name in required}
        return [(str(function.get("name", "")), arguments)]


class FormOnly:
    """The lexical miner's tools and no-call decisions with junk of the right type in every
    required parameter: what an answer's form earns with no value right (the scorer pays whole
    calls only, so nothing on a call task)."""

    def __init__(self) -> None:
        self._lexical = LexicalMiner()

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer:
        functions = {str(function_of(tool).get("name", "")): function_of(tool) for tool in tools}
        junk = []
        for name, _ in self._lexical.answer(messages, tools):
            function = functions.get(name, {})
            properties = _properties(function)
            required = (function.get("parameters") or {}).get("required") or []
            junk.append((name, {p: _JUNK.get(str(properties.get(p, {}).get("type")), "x") for p in required}))
        return junk


def _normalised(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def _conversation_key(messages: Sequence[dict[str, Any]]) -> str:
    """The conversation's text, normalised: the lookup key of a memorised task."""
    return _normalised(" ".join(str(m.get("content") or "") for m in messages if m.get("role") != "system"))


class DatasetMemoriser:
    """Answers published tasks from memory: the request text looked up, the remembered reference
    calls carried over to the offered (renamed) tools by description; unknown text: no call."""

    def __init__(self, public_tasks: Iterable[Task]) -> None:
        self._memory: dict[str, list[tuple[list[dict[str, Any]], Answer]]] = {}
        for task in public_tasks:
            entry = ([function_of(tool) for tool in task.tools], reference_calls(task.expected))
            self._memory.setdefault(_conversation_key(task.messages), []).append(entry)

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer:
        shown = [function_of(tool) for tool in tools]
        for functions, calls in self._memory.get(_conversation_key(messages), []):
            renamed: dict[str, _Offered] = {}
            for original in functions:
                for function in shown:
                    params = match_tool(original, function)
                    if params is not None:
                        renamed[str(original.get("name", ""))] = _Offered(
                            str(function.get("name", "")), params
                        )
                        break
            if all(name in renamed for name, _ in calls):
                return [
                    (renamed[name].name, {renamed[name].params.get(k, k): v for k, v in arguments.items()})
                    for name, arguments in calls
                ]
        return []


# --- Evaluation ------------------------------------------------------------------------------


def evaluate_miner(
    miner: Miner, tasks_list: Iterable[Task], variant_seed: bytes | str | int
) -> dict[str, tuple[int, int]]:
    """Category -> (valid answers, tasks): each task shown as a miner's variant and judged by
    ``scoring.check``; a task the checker refuses (ValueError) counts as invalid."""
    tally: dict[str, list[int]] = {}
    for task in tasks_list:
        shown = variant(task, variant_seed)
        calls = [Call(name, arguments) for name, arguments in miner.answer(shown.messages, shown.tools)]
        functions = [function_of(tool) for tool in shown.tools]
        try:
            valid = check(calls, functions, shown.expected, shown.scoring_category).valid
        except ValueError:
            valid = False
        counts = tally.setdefault(task.category, [0, 0])
        counts[0] += int(valid)
        counts[1] += 1
    return {category: (valid, total) for category, (valid, total) in tally.items()}


_MINERS: dict[str, Callable[[], Miner]] = {
    "lexical": LexicalMiner,
    "template": TemplateInverter,
    "never": NeverCalls,
    "random": RandomTool,
    "form": FormOnly,
}


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int_arg(1), default=5_000, help="builtin tasks to attack")
    parser.add_argument("--per-category", type=int_arg(0), default=0, help="N tasks of each category instead")
    parser.add_argument("--seed", default="1", help="round seed of the tasks")
    parser.add_argument("--variant-seed", default="redteam", help="miner seed of the variants shown")
    parser.add_argument("--miners", default="template,never,random", help=f"any of {', '.join(_MINERS)}")
    parser.add_argument("--phrased", action="store_true", help="reword the round with the stand-in model")
    with user_errors(parser.prog):
        args = parser.parse_args()
    unknown = [name for name in args.miners.split(",") if name not in _MINERS]
    if unknown:
        parser.error(f"unknown miners: {', '.join(unknown)} (known: {', '.join(_MINERS)})")
    if args.per_category:
        mix = {category: 1.0 for category in CATEGORIES}
        tasks_list = generate(args.seed, args.per_category * len(CATEGORIES), mix=mix)
    else:
        tasks_list = generate(args.seed, args.tasks)
    if args.phrased:
        integrity = load_sibling("integrity")
        tasks_list = list(asyncio.run(integrity.phrase_with_standin(tasks_list, args.seed)).tasks)
    for label in args.miners.split(","):
        miner = _MINERS[label]()
        started = time.perf_counter()
        results = evaluate_miner(miner, tasks_list, args.variant_seed)
        per_task_ms = 1000 * (time.perf_counter() - started) / len(tasks_list)
        print(f"{type(miner).__name__} ({per_task_ms:.2f} ms/task with variant and check):")
        for category in CATEGORIES:
            valid, total = results.get(category, (0, 0))
            print(f"  {category:<18} {valid:>5}/{total:<5} {valid / total if total else 0:7.1%}")


if __name__ == "__main__":
    main()
