"""Integrity of the scores: what model-free cheaters earn on template text, and on phrased text.

Four miners answer the same tasks, each task shown as that miner's variant and judged by
``scoring.check``: one that never calls, one that calls a random tool, the red team's
template inverter (bench/redteam.py: no model, only the public generator code), and an oracle
that answers each task's reference calls (the honest miner that understood the request: what
it keeps shows that every phrased task still has a correct gold answer). First on the template
text, then on the same round phrased by the stand-in model (bench/phrasing_standin.py, rules the
red team cannot see), with the phrasing stage's figures: throughput, retries, drops and
rejections per reason. External sources get the dataset memoriser, before and after phrasing.

Episodes get their own section (``--episodes N``, ``episode_section``): the scripted agent of
bench/redteam_agent.py and the do-nothing baselines (never calls, "I cannot help", read every
tool then stop), valid % and mean score per category and environment, on template turns and on
turns phrased by the stand-in model.

``--demo N`` also phrases N tasks with the demo model (SmolLM2-135M, on this CPU): it phrases
badly, and the counts show the stage rejecting, retrying and dropping rather than showing it.

    .venv/bin/python bench/integrity.py [--tasks 2000] [--seed 1] [--external] [--demo 0]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

# Run as a script, this file's folder comes first on sys.path and its name would hide the package.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

from scoring import Call, check, function_of  # noqa: E402
from subnet.config import PhrasingSettings, WeightsSettings, int_arg  # noqa: E402
from subnet.phrasing import build_engine  # noqa: E402
from subnet.validator.phrasing import policy_from  # noqa: E402
from tasks import CATEGORIES, Task, generate, redraw, variant  # noqa: E402
from tasks.answers import reference_calls  # noqa: E402
from tasks.phrasing import Phrased, PhrasingStats, phrase  # noqa: E402

__all__ = [
    "Figures",
    "Oracle",
    "episode_section",
    "judge_miner",
    "load_sibling",
    "phrase_with_standin",
    "round_table",
]

CALL_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple")


def load_sibling(name: str) -> ModuleType:
    """bench/<name>.py as a module (bench/ is not a package, and its names shadow the packages')."""
    module_name = f"bench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
    return module


class Oracle:
    """Answers every task right from its reference calls: the miner that understood the request.

    It reads the gold answer of the variant it is shown, so what it loses on phrased text is
    exactly what phrasing broke (nothing, when every phrased task keeps a correct gold answer).
    """

    def __init__(self) -> None:
        self.expected: list[dict[str, Any]] = []

    def answer(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> list[tuple[str, dict[str, Any]]]:
        return reference_calls(self.expected)


@dataclass
class Figures:
    """One miner's figures on one task set: per category (valid, total, score sum)."""

    by_category: dict[str, list[float]] = field(default_factory=dict)
    seconds: float = 0.0

    def add(self, category: str, valid: bool, score: float) -> None:
        entry = self.by_category.setdefault(category, [0, 0, 0.0])
        entry[0] += int(valid)
        entry[1] += 1
        entry[2] += score

    def rate(self, category: str) -> float:
        valid, total, _ = self.by_category.get(category, [0, 0, 0.0])
        return valid / total if total else 0.0

    def call_rate(self) -> float:
        """The valid share over the four call categories together."""
        valid = sum(self.by_category.get(c, [0, 0, 0.0])[0] for c in CALL_CATEGORIES)
        total = sum(self.by_category.get(c, [0, 0, 0.0])[1] for c in CALL_CATEGORIES)
        return valid / total if total else 0.0

    @property
    def round_score(self) -> float:
        """The mean task score (what a round adds to the miner's moving average)."""
        total = sum(entry[1] for entry in self.by_category.values())
        return sum(entry[2] for entry in self.by_category.values()) / total if total else 0.0


def judge_miner(miner: Any, task_list: Iterable[Task], variant_seed: bytes | str | int) -> Figures:
    """Show each task to the miner as its variant and judge the answer as the validator does."""
    figures = Figures()
    started = time.perf_counter()
    for task in task_list:
        shown = variant(task, variant_seed)
        if isinstance(miner, Oracle):
            miner.expected = shown.expected
        calls = [Call(name, arguments) for name, arguments in miner.answer(shown.messages, shown.tools)]
        functions = [function_of(tool) for tool in shown.tools]
        try:
            verdict = check(calls, functions, shown.expected, shown.scoring_category)
            figures.add(task.category, verdict.valid, verdict.score)
        except ValueError:
            figures.add(task.category, False, 0.0)
    figures.seconds = time.perf_counter() - started
    return figures


async def phrase_with_standin(
    task_list: Sequence[Task], seed: bytes | str, mode: str = "private", sources: Any = None, **settings: Any
) -> Phrased:
    """The tasks phrased by the stand-in model, served on loopback for the call."""
    standin = load_sibling("phrasing_standin")
    server = await standin.StandinServer(mode).start()
    phrasing = PhrasingSettings(engine="openai", url=server.url, model="standin", **settings)
    engine = build_engine(phrasing)
    await engine.start()
    try:
        return await phrase(
            list(task_list),
            engine,
            seed,
            policy=policy_from(phrasing),
            redraw=lambda task, s: redraw(task, s, sources),
        )
    finally:
        await engine.close()
        await server.stop()


def round_table(figures: dict[str, Figures], floor: float) -> list[str]:
    """A markdown table: valid rate per category, round score, weight share above the floor."""
    above = {name: max(0.0, f.round_score - floor) for name, f in figures.items()}
    total = sum(above.values())
    header = "| miner | " + " | ".join(CATEGORIES) + " | round score | weight share |"
    lines = [header, "|" + "---|" * (len(CATEGORIES) + 3)]
    for name, f in figures.items():
        rates = " | ".join(f"{100 * f.rate(category):.1f}%" for category in CATEGORIES)
        share = above[name] / total if total else 0.0
        lines.append(f"| {name} | {rates} | {f.round_score:.3f} | {100 * share:.0f}% |")
    return lines


def _stats_lines(stats: PhrasingStats) -> list[str]:
    attempts = stats.phrased + sum(stats.rejected.values())
    lines = [
        f"  {stats.summary()}",
        f"  throughput: {stats.slots / max(stats.wall_s, 1e-9):.0f} task slots/s"
        f" ({attempts} rewordings asked, {attempts / max(stats.wall_s, 1e-9):.0f}/s)",
    ]
    for reason, count in sorted(stats.rejected.items(), key=lambda item: -item[1]):
        lines.append(
            f"  rejected {reason:<22} {count:>5}  ({100 * count / max(attempts, 1):.1f}% of rewordings)"
        )
    return lines


def _miners(redteam: ModuleType) -> dict[str, Any]:
    return {
        "never calls": redteam.NeverCalls(),
        "random tool": redteam.RandomTool(seed=1),
        "template inverter (no model)": redteam.TemplateInverter(),
        "oracle (understood the request)": Oracle(),
    }


def _external(args: argparse.Namespace, redteam: ModuleType) -> None:
    from tasks import Source, load_xlam
    from tasks.sources import load_bfcl_dir

    fixtures = Path(__file__).resolve().parents[1] / "tests" / "tasks" / "fixtures"
    pool = (*load_bfcl_dir(fixtures / "bfcl"), *load_xlam(fixtures / "xlam.json"))
    sources = [Source("external", 1.0, tuple(pool))]
    external = generate(args.seed, min(args.tasks, 400), sources=sources)
    memoriser = redteam.DatasetMemoriser(pool)
    phrased = asyncio.run(phrase_with_standin(external, args.seed, sources=sources))
    before = judge_miner(memoriser, external, "integrity")
    after = judge_miner(memoriser, phrased.tasks, "integrity")
    oracle = judge_miner(Oracle(), phrased.tasks, "integrity")
    print(f"\nExternal pool (test fixtures: {len(pool)} public tasks, {len(external)} drawn):")
    for label, figures in (
        ("dataset memoriser on public text ", before),
        ("dataset memoriser on phrased text", after),
        ("oracle on phrased text           ", oracle),
    ):
        print(
            f"  {label}  call tasks valid {100 * figures.call_rate():5.1f}%,"
            f" all tasks {100 * _valid_share(figures):5.1f}%, round score {figures.round_score:.3f}"
        )
    print("\n".join(_stats_lines(phrased.stats)))


def _valid_share(figures: Figures) -> float:
    valid = sum(entry[0] for entry in figures.by_category.values())
    total = sum(entry[1] for entry in figures.by_category.values())
    return valid / total if total else 0.0


def _demo(count: int, seed: str) -> None:
    settings = PhrasingSettings(
        engine="transformers", path="demo", device="cpu", concurrency=8, timeout=600.0
    )
    engine = build_engine(settings)

    async def run() -> Phrased:
        await engine.start()
        try:
            return await phrase(
                generate(seed, count),
                engine,
                seed,
                policy=policy_from(settings),
                redraw=lambda t, s: redraw(t, s),
            )
        finally:
            await engine.close()

    phrased = asyncio.run(run())
    print(f"\nDemo model (SmolLM2-135M, CPU) phrasing {count} tasks:")
    print("\n".join(_stats_lines(phrased.stats)))
    for task in phrased.tasks[:3]:
        print(f"  kept: {task.request!r}")


def episode_section(count: int, seed: str) -> None:
    """The episodes' red team: bench/redteam_agent.py's scripted agent and the do-nothing
    baselines on ``count`` episodes, per category and environment, on template turns and on the
    same episodes with their turns phrased by the stand-in model."""
    from tasks.episodes import generate_episodes

    agents = load_sibling("redteam_agent")
    templates = generate_episodes(seed, count)
    phrased = agents.phrase_with_standin(templates, seed)
    for label, chosen in (("template turns", templates), ("turns phrased by the stand-in model", phrased)):
        figures = {name: agents.play_agent(agent, chosen) for name, agent in agents.baseline_agents().items()}
        print(f"\nEpisodes, {label} ({len(chosen)} episodes, seed {seed}): valid % (mean score)")
        print("\n".join(agents.episode_table(figures)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int_arg(1), default=2_000, help="builtin tasks in the round")
    parser.add_argument("--seed", default="1", help="round seed")
    parser.add_argument("--external", action="store_true", help="also the memoriser on the fixture pools")
    parser.add_argument("--demo", type=int_arg(0), default=0, help="also phrase N tasks with the demo model")
    parser.add_argument("--episodes", type=int_arg(0), default=200, help="episodes for the episode section")
    args = parser.parse_args()
    redteam = load_sibling("redteam")
    floor = WeightsSettings().floor
    templates = generate(args.seed, args.tasks)
    print(
        f"{args.tasks} builtin tasks of the default mix (seed {args.seed}); weight share: round score above"
    )
    print(f"the production floor ({floor}), proportionally.\n")
    print("Template text (what every round sends without a phrasing engine):")
    print(
        "\n".join(
            round_table(
                {n: judge_miner(m, templates, "integrity") for n, m in _miners(redteam).items()}, floor
            )
        )
    )
    started = time.perf_counter()
    phrased = asyncio.run(phrase_with_standin(templates, args.seed))
    wall = time.perf_counter() - started
    print(f"\nPhrased by the stand-in model ({len(phrased.tasks)} tasks, {wall:.2f} s with its server):")
    print(
        "\n".join(
            round_table(
                {n: judge_miner(m, phrased.tasks, "integrity") for n, m in _miners(redteam).items()}, floor
            )
        )
    )
    print("\n".join(_stats_lines(phrased.stats)))
    if args.external:
        _external(args, redteam)
    if args.demo:
        _demo(args.demo, args.seed)
    if args.episodes:
        episode_section(args.episodes, args.seed)


if __name__ == "__main__":
    main()
