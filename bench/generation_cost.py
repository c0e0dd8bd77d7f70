"""Instructions per generated task, counted by valgrind's callgrind: a figure that repeats where a
timed rate does not.

On a shared virtual machine the timed rate of one tree (bench/integrity.py's "Task generation",
bench/generation.py) moves by a quarter within minutes; the instructions a task costs repeat to
about 0.1% from run to run. Use this to tell whether a change to the generator made it cheaper or
dearer, and the timed benches for the rate itself. Each tree is run twice under callgrind, with
``--warm`` tasks (imports, caches) and with ``--warm`` plus ``--tasks`` tasks; the difference
over ``--tasks`` is the figure. ``--variants`` counts each task with one per-miner variant, as
bench/generation.py times them. Trees are checkouts of this project (``git worktree add``): the
generator of each is imported from it, compiled where the tree has a fresh build (``python -m
tasks compile``; ``SUBNET_COMPILED=0`` counts its Python modules). Needs ``valgrind`` on PATH;
a run of 1,000 tasks takes about a minute per tree.

    .venv/bin/python bench/generation_cost.py [--tasks 1000] [--warm 100] [--variants] [--tree PATH ...]
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from subnet.cli import OneLineParser, user_errors
from subnet.config import int_arg

_ROOT = Path(__file__).resolve().parents[1]

#: Run under callgrind: the generator imported from the tree given first, ``warm`` tasks, then
#: ``count`` more (none when 0), the same seeds as the timed benches take; with a variant of
#: each task when the fourth argument is 1.
_PROGRAM = """
import sys
sys.path.insert(0, sys.argv[1])
from tasks import generate, variant
with_variants = sys.argv[4:] == ["1"]
for seed, count in (("heldout-27-warm", int(sys.argv[2])), ("heldout-27-rate-0", int(sys.argv[3]))):
    for task in generate(seed, count):
        if with_variants:
            variant(task, b"5MinerHotkey")
"""

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


class CostError(Exception):
    """A run that gave no count (valgrind missing or failing, a tree that does not import)."""


def instructions(tree: Path, warm: int, count: int, variants: bool = False) -> int:
    """Instructions callgrind counts for one run of ``_PROGRAM``."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-c",
        _PROGRAM,
        str(tree),
        str(warm),
        str(count),
        *(["1"] if variants else []),
    ]
    # One hash seed: set and dict layouts (and so the work) repeat from run to run.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise CostError(f"{tree}: the run under valgrind failed ({last})")
    return int(found.group(1))


def per_task(tree: Path, warm: int, count: int, variants: bool = False) -> float:
    """Instructions per task (with its variant where ``variants``) of ``count`` tasks after
    ``warm`` (the difference of two runs)."""
    return (instructions(tree, warm, count, variants) - instructions(tree, warm, 0, variants)) / count


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int_arg(1), default=1_000, help="tasks counted per tree")
    parser.add_argument("--warm", type=int_arg(1), default=100, help="tasks generated first, in both runs")
    parser.add_argument("--variants", action="store_true", help="count each task with one variant")
    parser.add_argument(
        "--tree",
        action="append",
        type=Path,
        default=None,
        help="a checkout of this project to count (repeatable; default: this one)",
    )
    with user_errors(parser.prog):
        args = parser.parse_args()
        trees = args.tree or [_ROOT]
        for tree in trees:
            if not (tree / "tasks" / "__init__.py").is_file():
                parser.error(f"{tree} is not a checkout of this project (no tasks/__init__.py)")
        if shutil.which("valgrind") is None:
            parser.error("valgrind is not on PATH (apt install valgrind); the timed benches need none")
    what = "task and its variant" if args.variants else "task"
    print(f"task generation cost: instructions per {what} over {args.tasks} tasks after {args.warm}")
    for tree in trees:
        print(f"  working on {tree} ...", file=sys.stderr, flush=True)
        try:
            cost = per_task(tree, args.warm, args.tasks, args.variants)
        except CostError as error:
            print(f"error: {error}", file=sys.stderr)
            raise SystemExit(1) from None
        print(f"  {tree}: {cost / 1e6:.3f} M instructions per {what}")


if __name__ == "__main__":
    main()
