"""Benchmark of the episode engine: how fast episodes are generated, and what one step costs the
validator (decode + schema check + dispatch, and the checker's share), against an instant
stand-in miner that plays the reference plan.

    .venv/bin/python bench/episodes.py [--episodes 2000] [--seed 1] [--played 400] [--miners 8]

Targets (issue 14): >= 1,000 episodes generated per second; <= 0.3 ms of validator CPU per step.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and its name would hide the package.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

from scoring import check_episode  # noqa: E402
from subnet.config import int_arg  # noqa: E402
from tasks.episodes import Episode, EpisodeRunner, generate_episodes, variant  # noqa: E402
from tasks.episodes.reference import ReferencePlayer  # noqa: E402


async def _play_all(episodes: list[Episode], miners: int) -> tuple[float, float, int, Counter[str]]:
    """(seconds in play, seconds in checking, steps, verdicts) over every miner's variant of
    every episode, as a round plays them (the reference states are computed once per episode)."""
    play_s = check_s = 0.0
    steps = 0
    verdicts: Counter[str] = Counter()
    for episode in episodes:
        if episode.category == "agent_step":
            continue
        for miner in range(miners):
            shown = variant(episode, f"bench-miner-{miner}")
            player = ReferencePlayer(shown)
            started = time.process_time()
            transcript = await EpisodeRunner(shown, player.ask).play()
            middle = time.process_time()
            verdict = check_episode(transcript, shown)
            check_s += time.process_time() - middle
            play_s += middle - started
            steps += transcript.steps
            verdicts["valid" if verdict.valid else str(verdict.error_type)] += 1
    return play_s, check_s, steps, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int_arg(1), default=2000)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--miners", type=int_arg(1), default=8, help="miners (variants) playing each episode")
    parser.add_argument("--played", type=int_arg(1), default=400, help="multi-turn episodes played")
    args = parser.parse_args()
    generate_episodes("warm-up", 20)
    started = time.perf_counter()
    episodes = generate_episodes(args.seed, args.episodes)
    generated_s = time.perf_counter() - started
    by_category = Counter(episode.category for episode in episodes)
    rate = len(episodes) / generated_s
    print(f"generated {len(episodes)} episodes in {generated_s:.2f} s = {rate:.0f} episodes/s")
    print(f"  by category: {dict(sorted(by_category.items()))}")
    multi_turn = [episode for episode in episodes if episode.category != "agent_step"][: args.played]
    play_s, check_s, steps, verdicts = asyncio.run(_play_all(multi_turn, args.miners))
    print(
        f"played {len(multi_turn)} multi-turn episodes x {args.miners} miners' variants with the reference"
        f" player: {steps} steps"
    )
    print(
        f"  validator CPU per step: {1e3 * (play_s + check_s) / steps:.3f} ms "
        f"(play {1e3 * play_s / steps:.3f} ms: decode, schema, dispatch;"
        f" check {1e3 * check_s / steps:.3f} ms)"
    )
    print(f"  verdicts: {dict(verdicts)}")


if __name__ == "__main__":
    main()
