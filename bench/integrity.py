"""Integrity of the scores: what model-free cheaters earn on template text, and on phrased text.

Seven miners answer the same tasks, each task shown as that miner's variant and judged by
``scoring.check``: one that never calls, one that calls a random tool, one that calls the tools
the lexical miner picks with junk values (what form alone earns), a memoriser that holds
every task of a past round, the red team's template inverter (bench/redteam.py: no model, only
the public generator code), its lexical miner (bench/redteam_kit/lexical: keywords and value
formats, any text), and an oracle that answers each task's reference calls (the honest miner that
understood the request: what it keeps shows that every phrased task still has a correct gold
answer). First on the template text, then on the same round phrased by the stand-in model
(bench/phrasing_standin.py, rules the red team cannot see), with the phrasing stage's figures:
throughput, retries, drops and rejections per reason. Then the oracle check (every phrased task's
gold answer valid in every output format), the task generation rate, and external sources with
the dataset memoriser, before and after phrasing (``--no-external`` skips those).

The round score of a table is the mean task score per category weighted by the default category
mix, so that a round drawn with ``--per-category N`` (the same count of every category) reads
like a production round.

Episodes get their own section (``--episodes N``, ``episode_section``): the scripted agent of
bench/redteam_agent.py and the do-nothing baselines (never calls, "I cannot help", read every
tool then stop), valid % and mean score per category and environment, on template turns and on
turns phrased by the stand-in model.

``--demo N`` also phrases N tasks with the demo model (SmolLM2-135M, on this CPU): it phrases
badly, and the counts show the stage rejecting, retrying and dropping rather than showing it. The
lexical miner is then judged on what it kept, beside the stand-in's text of the same N tasks (the
stand-in should not be far harsher on it than a real model's freedom explains).

    .venv/bin/python bench/integrity.py [--tasks 600] [--seed 1] [--no-external] [--demo 0]
    .venv/bin/python bench/integrity.py --per-category 800 --seed heldout-27   # the full run
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from redteam_kit import load_sibling
from redteam_kit.agent import baseline_agents, episode_table, play_agent
from redteam_kit.agent import phrase_with_standin as phrase_episodes

from scoring import Call, function_of
from scoring.checking import check
from scoring.rendering import (
    FORMATS,
    NATIVE_FORMATS,
    render,
)
from subnet.cli import OneLineParser, user_errors
from subnet.config import PhrasingSettings, WeightsSettings, int_arg
from subnet.phrasing import build_engine
from subnet.phrasing.session import policy_from
from tasks import CATEGORIES, Task, generate, redraw, variant
from tasks.answers import reference_calls
from tasks.categories import default_mix
from tasks.phrasing import Phrased, PhrasingStats, phrase

__all__ = [
    "Figures",
    "Oracle",
    "episode_section",
    "generation_rate",
    "judge_miner",
    "load_sibling",
    "oracle_in_every_format",
    "phrase_with_standin",
    "rejection_lines",
    "round_table",
]

CALL_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple")


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

    def partial_floor(self, mix: dict[str, float] | None = None) -> float:
        """What the mix score would be with no call task answered validly, each call category's
        tasks earning the mean partial credit of this miner's invalid answers there (a valid
        verdict scores 1.0, so the invalid ones' sum is the score sum less the valid count); the
        no-call categories as measured. The part of the round score that no fully right call earns."""
        shares = default_mix() if mix is None else mix
        present = {c: share for c, share in shares.items() if self.by_category.get(c, [0, 0, 0.0])[1]}
        weight = sum(present.values())
        total = 0.0
        for category, share in present.items():
            valid, count, score = self.by_category[category]
            if category in CALL_CATEGORIES:
                invalid = count - valid
                total += share * ((score - valid) / invalid if invalid else 0.0)
            else:
                total += share * score / count
        return total / weight if weight else 0.0

    def mix_score(self, mix: dict[str, float] | None = None) -> float:
        """The mean task score per category weighted by ``mix`` (the default category mix): the
        round score of a production round, whatever the categories' counts in this one."""
        shares = default_mix() if mix is None else mix
        present = {c: share for c, share in shares.items() if self.by_category.get(c, [0, 0, 0.0])[1]}
        weight = sum(present.values())
        return (
            sum(share * self.by_category[c][2] / self.by_category[c][1] for c, share in present.items())
            / weight
            if weight
            else 0.0
        )


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
    """A markdown table: valid rate per category, round score (``Figures.mix_score``), weight
    share above the floor."""
    above = {name: max(0.0, f.mix_score() - floor) for name, f in figures.items()}
    total = sum(above.values())
    header = "| miner | " + " | ".join(CATEGORIES) + " | round score | weight share |"
    lines = [header, "|" + "---|" * (len(CATEGORIES) + 3)]
    for name, f in figures.items():
        rates = " | ".join(f"{100 * f.rate(category):.1f}%" for category in CATEGORIES)
        share = above[name] / total if total else 0.0
        lines.append(f"| {name} | {rates} | {f.mix_score():.3f} | {100 * share:.0f}% |")
    return lines


def oracle_in_every_format(task_list: Iterable[Task]) -> tuple[int, int, int, Counter[str]]:
    """(tasks whose reference answer is valid rendered in every output format, tasks, formats,
    per format the tasks it fails): the tool-free formats and the native ones (decoded with the
    offered tools); a no-call task is answered in words."""
    formats = (*FORMATS, *NATIVE_FORMATS)
    valid = total = 0
    failing: Counter[str] = Counter()
    for task in task_list:
        total += 1
        functions = [function_of(tool) for tool in task.tools]
        calls = [Call(name, arguments) for name, arguments in reference_calls(task.expected)]
        outputs = {fmt: render(calls, fmt) for fmt in formats} if calls else {"words": "I can't do that."}
        failed = [
            fmt
            for fmt, out in outputs.items()
            if not check(out, functions, task.expected, task.scoring_category).valid
        ]
        failing.update(failed)
        valid += not failed
    return valid, total, len(formats), failing


#: Timed runs of the generation rate; the best one counts. Timed by this process's CPU clock.
RATE_RUNS = 3
CPU_CLOCK = time.process_time


def generation_rate(seed: str, count: int) -> float:
    """Builtin tasks generated per second of this process's CPU time (the default mix, one
    thread): after a warm-up (the first call builds the tool library's caches), the best of
    ``RATE_RUNS`` runs of ``count`` tasks. Wall time of one cold run swung tenfold with other
    work on the machine (270 tasks/s beside two test suites, 2,400 alone)."""
    generate(f"{seed}-warm", min(count, 200))
    best = 0.0
    for run in range(RATE_RUNS):
        started = CPU_CLOCK()
        generate(f"{seed}-rate-{run}", count)
        best = max(best, count / max(CPU_CLOCK() - started, 1e-9))
    return best


def rejection_lines(stats: PhrasingStats) -> list[str]:
    """The phrasing stage's figures: summary, throughput, and rejections per reason."""
    return _stats_lines(stats)


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


def _miners(redteam: ModuleType, past: Sequence[Task] = ()) -> dict[str, Any]:
    """The miners of the tables; ``past``: the tasks of an earlier round, for the memoriser."""
    return {
        "never calls": redteam.NeverCalls(),
        "random tool": redteam.RandomTool(seed=1),
        "lexical tools, junk values": redteam.FormOnly(),
        "memoriser (a past round)": redteam.DatasetMemoriser(past),
        "template inverter (no model)": redteam.TemplateInverter(),
        "lexical miner (no model)": redteam.LexicalMiner(),
        "oracle (understood the request)": Oracle(),
    }


def _external(args: argparse.Namespace, redteam: ModuleType) -> None:
    from tasks import Source
    from tasks.sources import load_bfcl_dir, load_xlam

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
        # A CPU shared with other work writes a batch of eight in minutes: the round's deadline is
        # the run's whole length here, not a validator's.
        engine="transformers",
        path="demo",
        device="cpu",
        concurrency=8,
        timeout=1200.0,
        deadline=max(300.0, 120.0 * count),
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
    # The attackers on what a real model wrote, beside the stand-in's text of the same tasks: the
    # stand-in must not be far harsher on them than a model's freedom explains.
    templates = generate(seed, count)
    standin = asyncio.run(phrase_with_standin(templates, seed)).tasks
    redteam = load_sibling("redteam")
    floor = WeightsSettings().floor
    for label, chosen in (
        ("template text", templates),
        ("phrased by the demo model", phrased.tasks),
        ("phrased by the stand-in model", standin),
    ):
        miners = {name: miner for name, miner in _miners(redteam).items() if name in _DEMO_MINERS}
        figures = {name: judge_miner(miner, chosen, "integrity") for name, miner in miners.items()}
        print(f"\nThe same {len(chosen)} tasks (seed {seed}, default mix), {label}:")
        print("\n".join(round_table(figures, floor)))
        lexical = _valid_share(figures["lexical miner (no model)"])
        print(f"  lexical miner valid on {100 * lexical:.1f}% of them")


_DEMO_MINERS = ("never calls", "lexical miner (no model)", "oracle (understood the request)")


def episode_section(count: int, seed: str) -> None:
    """The episodes' red team: bench/redteam_agent.py's scripted agent and the do-nothing
    baselines on ``count`` episodes, per category and environment, on template turns and on the
    same episodes with their turns phrased by the stand-in model."""
    from tasks.episodes import generate_episodes

    templates = generate_episodes(seed, count)
    phrased = phrase_episodes(templates, seed)
    for label, chosen in (("template turns", templates), ("turns phrased by the stand-in model", phrased)):
        figures = {name: play_agent(agent, chosen) for name, agent in baseline_agents().items()}
        print(f"\nEpisodes, {label} ({len(chosen)} episodes, seed {seed}): valid % (mean score)")
        print("\n".join(episode_table(figures)))


def _round(args: argparse.Namespace) -> list[Task]:
    if args.per_category:
        return generate(args.seed, args.per_category * len(CATEGORIES), mix=dict.fromkeys(CATEGORIES, 1.0))
    return generate(args.seed, args.tasks)


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tasks", type=int_arg(1), default=600, help="builtin tasks in the round (default mix)"
    )
    parser.add_argument(
        "--per-category",
        type=int_arg(0),
        default=0,
        help="N tasks of every category instead (800: the full run)",
    )
    parser.add_argument("--seed", default="1", help="round seed")
    parser.add_argument(
        "--oracle-tasks", type=int_arg(0), default=2_000, help="phrased tasks of the oracle check"
    )
    parser.add_argument(
        "--rate-tasks", type=int_arg(1), default=5_000, help="tasks timed for the generation rate"
    )
    parser.add_argument(
        "--no-external", dest="external", action="store_false", help="skip the external pools"
    )
    parser.add_argument("--external", action="store_true", default=True, help=argparse.SUPPRESS)
    parser.add_argument("--demo", type=int_arg(0), default=0, help="also phrase N tasks with the demo model")
    parser.add_argument("--episodes", type=int_arg(0), default=200, help="episodes for the episode section")
    with user_errors(parser.prog):
        args = parser.parse_args()
    redteam = load_sibling("redteam")
    floor = WeightsSettings().floor
    rate = generation_rate(args.seed, args.rate_tasks)
    templates = _round(args)
    past = generate(f"{args.seed}-past", len(templates))
    size = (
        f"{args.per_category} tasks per category"
        if args.per_category
        else f"{args.tasks} tasks of the default mix"
    )
    print(f"Builtin round: {size} (seed {args.seed}); round score: the mean task score per category")
    print(f"weighted by the default mix; weight share: round score above the production floor ({floor}).")
    print(
        f"Task generation: {rate:.0f} tasks/s of CPU time (best of {RATE_RUNS} runs of"
        f" {args.rate_tasks} tasks, warm, one thread).\n"
    )
    print("Template text (what every round sends without a phrasing engine):")
    miners = _miners(redteam, past)
    print(
        "\n".join(round_table({n: judge_miner(m, templates, "integrity") for n, m in miners.items()}, floor))
    )
    started = time.perf_counter()
    phrased = asyncio.run(phrase_with_standin(templates, args.seed))
    wall = time.perf_counter() - started
    print(f"\nPhrased by the stand-in model ({len(phrased.tasks)} tasks, {wall:.2f} s with its server):")
    miners = _miners(redteam, past)
    judged = {n: judge_miner(m, phrased.tasks, "integrity") for n, m in miners.items()}
    print("\n".join(round_table(judged, floor)))
    lexical = judged["lexical miner (no model)"]
    print(
        f"  lexical miner: {lexical.mix_score():.3f}, of which {lexical.partial_floor():.3f} with no"
        " call task valid (partial credit of its invalid answers, and the no-call categories)"
    )
    print("\n".join(_stats_lines(phrased.stats)))
    if args.oracle_tasks:
        gold = asyncio.run(
            phrase_with_standin(generate(f"{args.seed}-gold", args.oracle_tasks), args.seed)
        ).tasks
        valid, total, formats, failing = oracle_in_every_format(gold)
        print(
            f"\nOracle check: {valid}/{total} phrased tasks ({100 * valid / max(total, 1):.1f}%) have a gold"
            f" answer valid in all {formats} output formats."
        )
        for fmt, count in failing.most_common():
            print(f"  fails in {fmt:<18} {count:>5} tasks")
    if args.external:
        _external(args, redteam)
    if args.demo:
        _demo(args.demo, args.seed)
    if args.episodes:
        episode_section(args.episodes, args.seed)


if __name__ == "__main__":
    main()
