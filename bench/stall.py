"""Benchmark of a stalling miner: one miner answers every request, every episode step included,
1 s before the query timeout (always with a call, so each episode plays until its step cap or
its deadline), beside honest miners, in one validator round run as the round job (its timeout
included) on the devchain with simulated miners.

    .venv/bin/python bench/stall.py [--query-timeout 10] [--episodes 6] [--episode-deadline 80]

Prints the round job's timeout, the round's status and wall time, and each miner's responses
and mean score. Target (issue 26): the round is scored (not discarded) whatever the staller does,
and the honest miners' scores are those they get without it.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

# The test equipment (tests/support: simulated miners, a throwaway PostgreSQL) is imported from the
# repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import select

from subnet.chain import ChainClient
from subnet.cli import OneLineParser, user_errors
from subnet.config import RoundSettings, float_arg, int_arg
from subnet.db import ResponseRecord, Round, create_engine
from subnet.validator.node import Validator, ValidatorOptions
from subnet.wallets import load_wallet
from tests.support.simulation import start_simulated_subnet, stop_simulated_miners


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        subnet = await start_simulated_subnet(
            Path(folder), ("right", "slow", "stall"), query_timeout=args.query_timeout
        )
        subnet.settings = dataclasses.replace(
            subnet.settings,
            round=RoundSettings(
                tasks=args.tasks, interval=1.0, episodes=args.episodes, episode_deadline=args.episode_deadline
            ),
        )
        try:
            wallet = load_wallet(subnet.settings.wallet)
            validator = Validator(
                subnet.settings,
                wallet=wallet,
                chain=ChainClient.from_settings(subnet.settings, wallet),
                options=ValidatorOptions(observer=subnet.key.observe, install_signal_handlers=False),
            )
            job = next(spec for spec in validator.job_specs() if spec.name == "round")
            print(
                f"query timeout {args.query_timeout:g} s, staller answers after "
                f"{subnet.miners['stall'].context.params['stall_s']:g} s; {args.tasks} tasks, "
                f"{args.episodes} episodes of at most {args.episode_deadline:g} s; "
                f"round job timeout {job.timeout_s:g} s"
            )
            started = time.perf_counter()
            await validator.run(rounds=1)
            wall = time.perf_counter() - started
            engine = create_engine(subnet.settings.db.url)
            try:
                async with engine.connect() as connection:
                    rounds = (await connection.execute(select(Round.number, Round.status, Round.note))).all()
                    rows = (
                        await connection.execute(
                            select(ResponseRecord.hotkey, ResponseRecord.status, ResponseRecord.score)
                        )
                    ).all()
            finally:
                await engine.dispose()
        finally:
            await stop_simulated_miners(list(subnet.miners.values()))
            await subnet.devchain.close()
    print(f"validator run (1 round, weights included): {wall:.1f} s")
    for number, status, note in rounds:
        print(f"round {number}: {status}" + (f" ({note})" if note else ""))
    name_of = {miner.hotkey: name for name, miner in subnet.miners.items()}
    statuses: dict[str, Counter[str]] = defaultdict(Counter)
    scores: dict[str, list[float]] = defaultdict(list)
    for hotkey, status, score in rows:
        statuses[name_of[hotkey]][status] += 1
        scores[name_of[hotkey]].append(score)
    for name in sorted(statuses):
        mean = sum(scores[name]) / len(scores[name])
        print(f"  {name:6} {dict(statuses[name])} mean score {mean:.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    seconds = float_arg(0.0, 3600.0, low_open=True)
    parser.add_argument("--query-timeout", type=seconds, default=10.0)
    parser.add_argument("--tasks", type=int_arg(0, 64), default=2)
    parser.add_argument("--episodes", type=int_arg(0, 64), default=6)
    parser.add_argument("--episode-deadline", type=seconds, default=80.0)
    with user_errors(parser.prog):
        args = parser.parse_args(argv)
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
