"""Benchmark of task generation: tasks plus one per-miner variant generated per second on one
core (target: at least 2,000/s, since the generator states values through devices; version 2,
which had none, made 4,300-5,900/s here), and how often a task repeats across rounds.

Throughput is measured in this process pinned to one CPU (where the OS allows it), per wall
second and per CPU second (the latter is robust to other load on the machine), twice: with
Python's cyclic garbage collector as usual (a library caller, `python -m tasks export`), and as
a validator round runs it (`subnet.validator.rounds.long_lived_objects_frozen`: the heap that
existed before the round frozen while the round runs; here, around every round of
``--round-size`` tasks). Repeats are
counted over ``--rounds`` rounds of ``--round-size`` tasks with HMAC-derived round seeds, as
the validator derives them: exact repeats of (normalised request text, tool names), and of the
request text alone.

The generator runs compiled where a fresh build exists (``python -m tasks compile``, see
tasks.compiled) and as Python modules otherwise or with ``SUBNET_COMPILED=0``; the output says
which. The 2,000/s target is met by the compiled generator: the Python modules, which do four
to six times version 2's work per task, make about 1,100-1,700/s here (docs/phrasing.md).

    .venv/bin/python bench/generation.py [--tasks 20000] [--warm 5000] [--rounds 100]
        [--round-size 64] [--cpu N]
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import time

from subnet.cli import OneLineParser, user_errors
from subnet.config import int_arg
from subnet.validator.rounds import long_lived_objects_frozen
from tasks import compiled, derive_miner_seed, derive_round_seed, generate, variant

_SECRET = b"bench-secret"
_BLOCK = "0x" + "5e" * 32


def _pin_to_one_core(core: int | None) -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity)"
    allowed = os.sched_getaffinity(0)
    chosen = min(allowed) if core is None else core
    if chosen not in allowed:
        print(f"error: CPU {chosen} is not available (allowed: {sorted(allowed)})", file=sys.stderr)
        raise SystemExit(2)
    os.sched_setaffinity(0, {chosen})
    return f"pinned to CPU {chosen}"


def _normalised(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def warm_up(count: int) -> None:
    """``count`` tasks with a variant each, untimed: the per-tool caches (plans, rewritten texts)
    fill as a validator's do over its first rounds; after 100 tasks a task costs ~20% more
    instructions than once 10,000 have been made (bench/generation_cost.py --warm)."""
    miner = b"warm-up-miner"
    for start in range(0, count, 1000):
        for task in generate(b"warm-up-%d" % start, min(1000, count - start)):
            variant(task, miner)


def throughput(
    total: int, round_size: int, repeats: int, as_in_a_round: bool = False
) -> tuple[list[float], list[float]]:
    """(wall rates, CPU rates) of tasks-plus-one-variant per second, one per repeat;
    ``as_in_a_round``: each round under the validator's collector regime."""
    wall_rates: list[float] = []
    cpu_rates: list[float] = []
    for repeat in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        done = 0
        round_number = 0
        while done < total:
            round_seed = derive_round_seed(_SECRET, 1, _BLOCK, repeat * 1_000_000 + round_number)
            miner_seed = derive_miner_seed(round_seed, "5MinerHotkey")
            if as_in_a_round:
                with long_lived_objects_frozen():
                    for task in generate(round_seed, round_size):
                        variant(task, miner_seed)
            else:
                for task in generate(round_seed, round_size):
                    variant(task, miner_seed)
            done += round_size
            round_number += 1
        wall_rates.append(done / (time.perf_counter() - wall))
        cpu_rates.append(done / (time.process_time() - cpu))
    return wall_rates, cpu_rates


def reference_loop_us() -> float:
    """Microseconds for ``sum(range(1000))`` (best of 5): how fast this core runs Python right now."""
    import timeit

    return min(timeit.repeat("sum(range(1000))", number=2000, repeat=5)) / 2000 * 1e6


def repeats(rounds: int, round_size: int) -> tuple[int, int, int]:
    """(tasks, exact repeats of (text, tool names), repeats of the text alone)."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    texts: set[str] = set()
    exact = text_only = total = 0
    for round_number in range(rounds):
        for task in generate(derive_round_seed(_SECRET, 1, _BLOCK, round_number), round_size):
            text = _normalised(task.request)
            key = (text, tuple(task.tool_names))
            exact += key in seen
            text_only += text in texts
            seen.add(key)
            texts.add(text)
            total += 1
    return total, exact, text_only


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tasks", type=int_arg(1), default=20_000, help="tasks (each with one variant) per repeat"
    )
    parser.add_argument("--repeats", type=int_arg(1), default=3, help="throughput repeats (median reported)")
    parser.add_argument(
        "--warm",
        type=int_arg(0),
        default=5_000,
        help="untimed tasks (with variants) first: caches as in a running validator",
    )
    parser.add_argument("--rounds", type=int_arg(1), default=100, help="rounds for the repeat count")
    parser.add_argument("--round-size", type=int_arg(1), default=64, help="tasks per round")
    parser.add_argument(
        "--cpu", type=int_arg(0), default=None, help="CPU to pin to (default: the lowest allowed)"
    )
    with user_errors(parser.prog):
        args = parser.parse_args()

    pinning = _pin_to_one_core(args.cpu)
    reference = reference_loop_us()
    print(
        f"task generation, {pinning}, {args.tasks} tasks + 1 variant each, {args.repeats} repeats, "
        f"after {args.warm} untimed"
    )
    print(f"  core speed: sum(range(1000)) takes {reference:.1f} us (lower: a faster or less loaded core)")
    print(f"  generator: {compiled.state().reason}")
    warm_up(args.warm)
    regimes = {"collector as usual": False, "as in a validator round (heap frozen)": True}
    for label, as_in_a_round in regimes.items():
        wall_rates, cpu_rates = throughput(args.tasks, args.round_size, args.repeats, as_in_a_round)
        print(f"  {label}:")
        print(
            f"    per wall second: median {statistics.median(wall_rates):,.0f}/s "
            f"(min {min(wall_rates):,.0f}, max {max(wall_rates):,.0f})"
        )
        print(
            f"    per CPU second:  median {statistics.median(cpu_rates):,.0f}/s "
            f"(min {min(cpu_rates):,.0f}, max {max(cpu_rates):,.0f})   target >= 2,000/s"
        )
    total, exact, text_only = repeats(args.rounds, args.round_size)
    print(f"repeats over {args.rounds} rounds of {args.round_size} ({total} tasks)")
    print(
        f"  exact repeats of (normalised request, tool names): {exact} = {exact / total:.3%}   target < 0.1%"
    )
    print(f"  repeats of the normalised request text alone:      {text_only} = {text_only / total:.3%}")


if __name__ == "__main__":
    main()
