"""What the miner's decoding modes earn on the subnet's tasks: valid answers and mean score by category.

    .venv/bin/python bench/guided_calls.py                           # the localnet's three demo miners
    .venv/bin/python bench/guided_calls.py --configs json:grounded,json:forced --seeds 1,2,3 --n 48
    taskset -c 1 .venv/bin/python bench/guided_calls.py --threads 1  # pinned, as in docs/miner.md

Each configuration is ``format:guided`` (formats: hermes, pythonic, json, codeact; guided: off, on,
forced, grounded; see ``--model.guided`` in docs/miner.md). For every seed, ``--n`` tasks are drawn
with an equal share of each category (``tasks.generate``), each given a miner's surface
(``tasks.variant``), sent through the real transformers backend with tool_choice "auto" and greedy
decoding, and scored with ``scoring.check`` as a validator scores them. The table gives, per
configuration and seed, valid answers / asked and the mean score in each category, then the mean
score over all tasks and the wall time. Nothing is cached between configurations: each one loads
its own backend.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring.checking import check
from scoring.formats import generic_formats
from scoring.schema import function_of
from subnet.cli import OneLineParser, UsageError, user_errors
from subnet.config import add_flag
from subnet.miner.guided import GuidedMode

CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "missing_param")
FORMATS = generic_formats()  # the formats any instruct model can be prompted into
GUIDED_MODES = tuple(mode.value for mode in GuidedMode)
DEFAULT_CONFIGS = "json:grounded,hermes:off,hermes:forced"  # the localnet's demo miners


@dataclass(frozen=True)
class Config:
    format: str
    guided: str

    @property
    def label(self) -> str:
        return self.format if self.guided == "off" else f"{self.format}+{self.guided}"


@dataclass
class Tally:
    valid: int = 0
    asked: int = 0
    score: float = 0.0

    def add(self, valid: bool, score: float) -> None:
        self.valid += int(valid)
        self.asked += 1
        self.score += score

    def cell(self) -> str:
        return f"{self.valid}/{self.asked} ({self.score / self.asked:.2f})" if self.asked else "-"


@dataclass
class Outcome:
    config: Config
    seed: int
    by_category: dict[str, Tally] = field(default_factory=dict)
    seconds: float = 0.0
    failed: int = 0  # requests the backend could not answer (scored 0)

    @property
    def mean(self) -> float:
        asked = sum(t.asked for t in self.by_category.values())
        return sum(t.score for t in self.by_category.values()) / asked if asked else 0.0


def parse_configs(text: str) -> list[Config]:
    configs = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        fmt, _, guided = item.partition(":")
        guided = guided or "off"
        if fmt not in FORMATS or guided not in GUIDED_MODES:
            raise UsageError(
                f"--configs: {item!r} is not format:guided (formats {', '.join(FORMATS)}; "
                f"guided {', '.join(GUIDED_MODES)})"
            )
        configs.append(Config(fmt, guided))
    if not configs:
        raise UsageError("--configs: give at least one format:guided")
    return configs


def parse_seeds(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"--seeds: {text!r} is not a comma-separated list of integers") from None
    if not seeds:
        raise UsageError("--seeds: give at least one seed")
    return seeds


def draw_tasks(seed: int, n: int) -> list[Any]:
    import tasks

    drawn = tasks.generate(seed, n, mix={category: 1 / len(CATEGORIES) for category in CATEGORIES})
    variant_seed = (seed * 1_000_003 + 7) % 2**63  # the surface docs/miner.md's table was measured on
    return [tasks.variant(task, variant_seed) for task in drawn]


async def measure(
    config: Config, seeds: Sequence[int], n: int, max_new_tokens: int, model_path: str
) -> list[Outcome]:
    from subnet.miner import GenerationRequest, ModelOptions
    from subnet.miner.base import ModelError
    from subnet.miner.transformers_backend import TransformersBackend

    backend = TransformersBackend(
        ModelOptions(
            path=model_path,
            format=config.format,
            guided=config.guided,
            max_new_tokens=max_new_tokens,
            max_batch=8,
        )
    )
    await backend.start()
    outcomes = []
    try:
        for seed in seeds:
            outcome = Outcome(config, seed, {category: Tally() for category in CATEGORIES})
            started = time.perf_counter()

            async def one(task: Any) -> tuple[Any, Any]:
                request = GenerationRequest(
                    messages=list(task.messages),
                    tools=list(task.tools),
                    tool_choice="auto",
                    max_tokens=max_new_tokens,
                    temperature=0.0,
                )
                try:
                    result = await backend.generate(request)
                except ModelError as exc:  # scored as a validator scores a failed answer: 0
                    print(f"  {config.label}: task {task.id} failed: {exc}", file=sys.stderr)
                    return task, None
                message = {"role": "assistant", "content": result.content, "tool_calls": result.tool_calls}
                functions = [function_of(tool) for tool in task.tools]
                return task, check(message, functions, task.expected, task.scoring_category)

            for task, verdict in await asyncio.gather(*(one(task) for task in draw_tasks(seed, n))):
                tally = outcome.by_category.setdefault(str(task.category), Tally())
                if verdict is None:
                    tally.add(False, 0.0)
                    outcome.failed += 1
                else:
                    tally.add(bool(verdict.valid), float(verdict.score))
            outcome.seconds = time.perf_counter() - started
            outcomes.append(outcome)
            print(
                f"  {config.label} seed {seed}: mean {outcome.mean:.3f}, {outcome.failed} failed"
                f" ({outcome.seconds:.0f} s)",
                file=sys.stderr,
            )
    finally:
        await backend.close()
    return outcomes


def render(outcomes: Sequence[Outcome]) -> str:
    header = ["config", "seed", *CATEGORIES, "mean", "failed", "time"]
    rows = [
        [
            o.config.label,
            str(o.seed),
            *(o.by_category[c].cell() for c in CATEGORIES),
            f"{o.mean:.3f}",
            str(o.failed),
            f"{o.seconds:.0f}s",
        ]
        for o in outcomes
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--configs", default=DEFAULT_CONFIGS, help=f"format:guided list (default {DEFAULT_CONFIGS})"
    )
    parser.add_argument("--seeds", default="1", help="task seeds, e.g. 1,2,3")
    parser.add_argument("--n", type=int, default=48, help="tasks per seed (an equal share per category)")
    add_flag(parser, "model.max_new_tokens", dest="max_new_tokens", default=48, note="Default here: 48.")
    parser.add_argument("--model-path", default="demo", help="model folder, or 'demo' (SmolLM2-135M)")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    with user_errors(parser.prog):
        args = parser.parse_args(argv)
    try:
        configs = parse_configs(args.configs)
        seeds = parse_seeds(args.seeds)
        if args.n < len(CATEGORIES) or args.threads < 0:
            raise UsageError(f"--n must be at least {len(CATEGORIES)}, --threads >= 0")
    except UsageError as exc:
        print(f"guided_calls: {exc}", file=sys.stderr)
        return 2
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    outcomes: list[Outcome] = []
    for config in configs:
        outcomes += asyncio.run(measure(config, seeds, args.n, args.max_new_tokens, args.model_path))
    print(
        f"{args.n} tasks per seed, tool_choice auto, greedy, max_new_tokens {args.max_new_tokens}; "
        "cells: valid/asked (mean score)"
    )
    print(render(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
