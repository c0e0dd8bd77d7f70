"""Benchmark of the episode runner: how fast episodes are generated, and what one step costs the
validator (decode + schema check + dispatch, and the checker's share), against an instant
stand-in miner that plays the reference plan.

    .venv/bin/python bench/episodes.py [--episodes 2000] [--seed 1] [--played 400] [--miners 8]
        [--sandbox on|off|both] [--workers N]
    .venv/bin/python bench/episodes.py --shapes 20000 [--seed 1]
    .venv/bin/python bench/episodes.py --formats [--episodes 2000] [--seed formats-full]

``--shapes N`` instead counts the distinct plan shapes (per turn, the calls' tools and argument
names: what a table of plans would have to hold) among N composed scenarios per environment that
has parts (tasks.episodes.goals), with the Chao1 estimate of how many there are in all (issue 28:
>= 10,000 per environment).

With ``--sandbox on`` the tools run in the validator's sandbox (subnet.validator.sandbox: worker
processes, one pipe round trip per call), as in a round, and the validator CPU per step is this
process's alone (the workers' CPU is printed beside it); the miners' variants of an episode are
played concurrently, as a round plays different miners at once. ``both`` (the default) prints the
two, so the sandbox's cost reads off directly.

``--formats`` instead plays every multi-turn episode's variant in every output format (the native
families' markup included) with the reference player, and counts the verdicts per format: every
one must be valid (exit status 1 otherwise). The tests play a few dozen per format; this is the
full bar (2,000 episodes of the default mix).

Targets (issue 14): >= 1,000 episodes generated per second; <= 0.3 ms of validator CPU per step
in this process. Issue 26: <= 0.5 ms with the sandbox.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import psutil

from scoring.rendering import FORMATS, NATIVE_FORMATS
from subnet.cli import OneLineParser, user_errors
from subnet.config import int_arg
from subnet.validator.sandbox import Sandbox, SandboxedRunner, SandboxLimits
from tasks.episodes import Episode, generate_episodes, variant
from tasks.episodes.checking import _REFERENCE_CACHE, check_episode
from tasks.episodes.reference import ReferencePlayer
from tasks.episodes.runner import EpisodeRunner


async def _play_all(
    episodes: list[Episode], miners: int, sandbox: Sandbox | None
) -> tuple[float, float, int, Counter[str]]:
    """(seconds of this process's CPU in play, in checking, steps, verdicts) over every miner's
    variant of every episode, as a round plays them (the reference states are computed once per
    episode; with a sandbox, the miners' variants of one episode are played concurrently)."""
    play_s = check_s = 0.0
    steps = 0
    verdicts: Counter[str] = Counter()

    async def one(shown: Episode) -> Any:
        player = ReferencePlayer(shown)
        if sandbox is None:
            return await EpisodeRunner(shown, player.ask).play()
        runner = SandboxedRunner(shown, player.ask, sandbox)
        try:
            return await runner.play()
        finally:
            runner.close()

    for episode in episodes:
        if episode.single_step:
            continue
        shown = [variant(episode, f"bench-miner-{miner}") for miner in range(miners)]
        started = time.process_time()
        transcripts = await asyncio.gather(*(one(item) for item in shown))
        middle = time.process_time()
        for item, transcript in zip(shown, transcripts, strict=True):
            verdict = check_episode(transcript, item)
            steps += transcript.steps
            verdicts["valid" if verdict.valid else str(verdict.error_type)] += 1
        check_s += time.process_time() - middle
        play_s += middle - started
    return play_s, check_s, steps, verdicts


async def _run(episodes: list[Episode], miners: int, workers: int | None) -> tuple[Any, float]:
    """The figures of ``_play_all``, and the sandbox workers' CPU seconds (0 without one)."""
    if workers is None:
        return await _play_all(episodes, miners, None), 0.0
    sandbox = Sandbox(SandboxLimits(workers=workers))
    await sandbox.start()
    processes = psutil.Process().children()  # the sandbox's workers: this process starts no others
    before = sum(sum(process.cpu_times()[:2]) for process in processes)
    try:
        figures = await _play_all(episodes, miners, sandbox)
        worker_s = sum(sum(process.cpu_times()[:2]) for process in processes) - before
    finally:
        await sandbox.close()
    return figures, worker_s


def _shapes(n: int, seed: str) -> None:
    """Distinct plan shapes among ``n`` composed scenarios of each environment with parts."""
    from tasks.episodes.environments import environment_class
    from tasks.episodes.goals import GOAL_MODULES, compose, plan_shape
    from tasks.seeding import rng_from, sub_seed

    for name in GOAL_MODULES:
        cls = environment_class(name)
        shapes: Counter[Any] = Counter()
        started = time.process_time()
        for index in range(n):
            env_seed = sub_seed(f"shapes-{seed}".encode(), name.encode(), index)
            scenario = compose(cls(env_seed, 1 if index % 5 else 20), rng_from(sub_seed(env_seed, b"draw")))
            if scenario is not None:
                shapes[plan_shape(scenario)] += 1
        once = sum(1 for count in shapes.values() if count == 1)
        twice = sum(1 for count in shapes.values() if count == 2)
        chao1 = len(shapes) + (once * once / (2 * twice) if twice else once * (once - 1) / 2)
        print(
            f"{name}: {len(shapes)} distinct plan shapes in {sum(shapes.values())} composed scenarios"
            f" ({once} seen once; Chao1 estimate of all shapes: {chao1:.0f});"
            f" {1e3 * (time.process_time() - started) / n:.2f} ms CPU each"
        )


async def _formats(episodes: list[Episode]) -> int:
    """Every multi-turn episode's variant played in every format with the reference player: the
    verdicts per format, and how many were not valid."""
    multi_turn = [episode for episode in episodes if episode.category != "agent_step"]
    failed = 0
    for fmt in (*FORMATS, *NATIVE_FORMATS):
        started = time.process_time()
        verdicts: Counter[str] = Counter()
        for episode in multi_turn:
            shown = variant(episode, fmt)
            transcript = await EpisodeRunner(shown, ReferencePlayer(shown, fmt).ask).play()
            verdict = check_episode(transcript, shown)
            verdicts["valid" if verdict.valid else f"{verdict.error_type} ({shown.id})"] += 1
        failed += len(multi_turn) - verdicts["valid"]
        cpu_ms = 1e3 * (time.process_time() - started) / max(1, len(multi_turn))
        print(f"{fmt:<18} {verdicts['valid']:>5} of {len(multi_turn)} valid, {cpu_ms:.2f} ms CPU per episode")
        for outcome, count in sorted(verdicts.items()):
            if outcome != "valid":
                print(f"  {count} x {outcome}")
    print(f"reference plans not valid in some format: {failed} (target 0)")
    return failed


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int_arg(1), default=2000)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--miners", type=int_arg(1), default=8, help="miners (variants) playing each episode")
    parser.add_argument("--played", type=int_arg(1), default=400, help="multi-turn episodes played")
    parser.add_argument("--sandbox", choices=("on", "off", "both"), default="both")
    parser.add_argument("--workers", type=int_arg(0), default=0, help="sandbox workers (0: the default)")
    parser.add_argument("--shapes", type=int_arg(0), default=0, help="count plan shapes of N scenarios")
    parser.add_argument(
        "--formats", action="store_true", help="play every episode in every output format (the full bar)"
    )
    with user_errors(parser.prog):
        args = parser.parse_args()
    if args.shapes:
        _shapes(args.shapes, args.seed)
        return
    if args.formats:
        seed = "formats-full" if args.seed == "1" else args.seed
        if asyncio.run(_formats(generate_episodes(seed.encode(), args.episodes))):
            raise SystemExit(1)
        return
    generate_episodes("warm-up", 20)
    started, cpu = time.perf_counter(), time.process_time()
    episodes = generate_episodes(args.seed, args.episodes)
    generated_s, generated_cpu = time.perf_counter() - started, time.process_time() - cpu
    by_category = Counter(episode.category for episode in episodes)
    rate = len(episodes) / generated_s
    print(
        f"generated {len(episodes)} episodes in {generated_s:.2f} s = {rate:.0f} episodes/s"
        f" ({len(episodes) / generated_cpu:.0f} a CPU second: the figure on a shared, loaded machine)"
    )
    print(f"  by category: {dict(sorted(by_category.items()))}")
    multi_turn = [episode for episode in episodes if not episode.single_step][: args.played]
    modes = {"off": [None], "on": [args.workers], "both": [None, args.workers]}[args.sandbox]
    for workers in modes:
        _REFERENCE_CACHE.clear()  # each mode computes the reference states itself, as a round does
        (play_s, check_s, steps, verdicts), worker_s = asyncio.run(_run(multi_turn, args.miners, workers))
        where = "in this process" if workers is None else f"in the sandbox ({workers or 'default'} workers)"
        print(
            f"played {len(multi_turn)} multi-turn episodes x {args.miners} miners' variants with the"
            f" reference player, tools {where}: {steps} steps"
        )
        print(
            f"  validator CPU per step: {1e3 * (play_s + check_s) / steps:.3f} ms "
            f"(play {1e3 * play_s / steps:.3f} ms: decode, schema, dispatch or its round trips;"
            f" check {1e3 * check_s / steps:.3f} ms)"
        )
        if workers is not None:
            print(f"  sandbox workers' CPU per step: {1e3 * worker_s / steps:.3f} ms")
        print(f"  verdicts: {dict(verdicts)}")


if __name__ == "__main__":
    main()
