"""Where the lexical miner wins: its valid rate per category and per device of the request.

Every builtin task records in its intent which device stated each value (``values[].device``)
and which context sentences are decoys. This bench groups the lexical miner's verdicts by them:
per category, the tasks with no worked value and no decoy ("plain"), with a decoy only, and per
device (a task with two devices counts under both), with the BFCL error types of its misses. The
generator's authors read it to aim: a row where the miner still wins is a structure it can parse.

    PYTHONPATH=$PWD .venv/bin/python bench/redteam_devices.py --per-category 200 --seed heldout-27
    ... --phrased    # the same round phrased by the stand-in model
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Sequence

from redteam_kit import load_sibling
from redteam_kit.lexical import LexicalMiner

from scoring import Call, function_of
from scoring.checking import check
from subnet.cli import OneLineParser, user_errors
from subnet.config import int_arg
from tasks import CATEGORIES, Task, generate, variant

__all__ = ["device_keys", "device_table"]


def device_keys(task: Task) -> list[str]:
    """The rows a task counts under: its values' devices, "decoy" when context holds one, or
    "plain" when neither (a request type matching alone may answer)."""
    keys: set[str] = set()
    for ask in (task.intent or {}).get("asks", []):
        keys.update(value["device"] for value in ask.get("values", []) if value.get("device"))
        if any(fact.get("role") == "decoy" for fact in ask.get("context", [])):
            keys.add("decoy")
    return sorted(keys) or ["plain"]


def device_table(miner: object, task_list: Sequence[Task], variant_seed: str = "integrity") -> list[str]:
    """Markdown rows: category, device, tasks, the miner's valid %, its misses' error types."""
    rows: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    errors: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for task in task_list:
        shown = variant(task, variant_seed)
        answer = miner.answer(shown.messages, shown.tools)  # type: ignore[attr-defined]
        calls = [Call(name, arguments) for name, arguments in answer]
        functions = [function_of(tool) for tool in shown.tools]
        try:
            verdict = check(calls, functions, shown.expected, shown.scoring_category)
            valid, error = verdict.valid, verdict.error_type or ""
        except ValueError as problem:
            valid, error = False, type(problem).__name__
        for key in device_keys(task):
            entry = rows[(task.category, key)]
            entry[0] += int(valid)
            entry[1] += 1
            if not valid:
                errors[(task.category, key)][error.split(":")[0] or "?"] += 1
    lines = ["| category | device | tasks | lexical valid | misses by error type |", "|---|---|---|---|---|"]
    for category in CATEGORIES:
        for (cat, key), (won, total) in sorted(
            rows.items(), key=lambda item: (item[0][1] != "plain", item[0])
        ):
            if cat != category:
                continue
            misses = ", ".join(f"{name} {count}" for name, count in errors[(cat, key)].most_common(3))
            lines.append(f"| {category} | {key} | {total} | {100 * won / total:.0f}% | {misses} |")
    return lines


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-category", type=int_arg(1), default=200, help="tasks of every category")
    parser.add_argument("--seed", default="heldout-27", help="round seed")
    parser.add_argument("--phrased", action="store_true", help="phrase the round with the stand-in model")
    with user_errors(parser.prog):
        args = parser.parse_args()
    integrity = load_sibling("integrity")
    tasks = generate(args.seed, args.per_category * len(CATEGORIES), mix=dict.fromkeys(CATEGORIES, 1.0))
    if args.phrased:
        tasks = asyncio.run(integrity.phrase_with_standin(tasks, args.seed)).tasks
    label = "phrased by the stand-in model" if args.phrased else "template text"
    print(f"Lexical miner per device, {label}, {args.per_category} per category, seed {args.seed}:")
    print("\n".join(device_table(LexicalMiner(), tasks)))


if __name__ == "__main__":
    main()
