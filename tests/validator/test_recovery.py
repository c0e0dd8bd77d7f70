"""Recovery: kill -9 the validator process in the middle of a round, start it again."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from subnet.db import ResponseRecord, Round, RoundStatus, create_engine
from subnet.validator.state import ScoredResponse, summarise_round, update_moving_average
from subnet.validator.store import Store
from tests.support.simulation import SimulatedSubnet, validator_argv

VALIDATOR = Path(__file__).resolve().parents[2] / "neurons" / "validator.py"


def _sqlite_path(url: str) -> str:
    return url.split(":///", 1)[1]


def _round_in_flight(db_path: str) -> tuple[int, int] | None:
    """(round number, responses stored) of a running round that already has responses, if any."""
    if not Path(db_path).exists():
        return None
    try:
        with sqlite3.connect(db_path, timeout=0.2) as connection:
            row = connection.execute(
                "SELECT r.number, COUNT(s.id) FROM rounds r JOIN responses s ON s.round_id = r.id "
                "WHERE r.status = 'running' GROUP BY r.id"
            ).fetchone()
    except sqlite3.Error:
        return None
    return (int(row[0]), int(row[1])) if row and row[1] > 0 else None


async def _start(argv: list[str], log_path: Path) -> asyncio.subprocess.Process:
    log = log_path.open("ab")
    try:
        return await asyncio.create_subprocess_exec(
            sys.executable, str(VALIDATOR), *argv, stdout=log, stderr=log
        )
    finally:
        log.close()


@pytest.mark.slow
async def test_kill_minus_nine_mid_round_then_restart(
    simulated_subnet: SimulatedSubnet, tmp_path: Path
) -> None:
    settings = simulated_subnet.settings
    db_path = _sqlite_path(settings.db.url)
    log_path = tmp_path / "validator.log"

    first = await _start(validator_argv(settings, rounds=50), log_path)
    killed_round: int | None = None
    for _ in range(1500):  # up to ~30 s: start-up, round 1 scored, round 2 under way
        await asyncio.sleep(0.02)
        in_flight = _round_in_flight(db_path)
        if in_flight is not None and in_flight[0] >= 2:
            killed_round = in_flight[0]
            break
        assert first.returncode is None, log_path.read_text()
    assert killed_round is not None, log_path.read_text()
    os.kill(first.pid, signal.SIGKILL)
    assert await first.wait() == -signal.SIGKILL

    second = await _start(validator_argv(settings, rounds=2), log_path)
    assert await asyncio.wait_for(second.wait(), 60) == 0, log_path.read_text()
    log_text = log_path.read_text()
    assert f"round {killed_round} was interrupted while querying miners: discarded" in log_text

    engine = create_engine(settings.db.url)
    try:
        store = Store(engine)
        rounds = await store.rounds()
        statuses = {r.number: r.status for r in rounds}
        assert statuses[killed_round] == RoundStatus.DISCARDED.value
        scored = [r for r in rounds if r.status == RoundStatus.SCORED.value]
        assert len(scored) == len(rounds) - 1 >= killed_round + 1
        async with store.sessions() as session:
            rows = (await session.execute(select(ResponseRecord, Round.number).join(Round))).all()
        # The EMA, replayed from the stored responses of the scored rounds only, is what is stored.
        expected: dict[str, float] = {}
        totals: dict[str, int] = {}
        for round_row in sorted(scored, key=lambda r: r.number):
            responses = [
                ScoredResponse(r.hotkey, r.uid, r.category, r.valid, r.score)
                for r, number in rows
                if number == round_row.number
            ]
            for hotkey, summary in summarise_round(responses).items():
                expected[hotkey] = update_moving_average(expected.get(hotkey, 0.0), summary.mean_score, 0.5)
                totals[hotkey] = totals.get(hotkey, 0) + summary.total
        states = await store.score_states()
        assert set(states) == set(expected)
        for hotkey, state in states.items():
            assert state.moving_average == pytest.approx(expected[hotkey])
            assert state.responses_total == totals[hotkey]
            assert state.rounds_scored == len(scored)
        keys = [(r.round_id, r.task_id, r.hotkey) for r, _ in rows]
        assert len(keys) == len(set(keys))
    finally:
        await engine.dispose()


@pytest.mark.postgres
async def test_cli_refuses_an_out_of_date_postgresql_in_one_line(
    quick_subnet: SimulatedSubnet, pg_url: str
) -> None:
    import dataclasses

    from subnet.config import DbSettings

    settings = dataclasses.replace(quick_subnet.settings, db=DbSettings(url=pg_url))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(VALIDATOR),
        *validator_argv(settings, rounds=1),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    errors = [line for line in stderr.decode().splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and "python -m subnet.db upgrade" in errors[0], stderr.decode()
    assert "Traceback" not in stderr.decode()


def _episode_in_flight(db_path: str) -> int | None:
    """The number of a running round that already stored a played episode, if any."""
    if not Path(db_path).exists():
        return None
    try:
        with sqlite3.connect(db_path, timeout=0.2) as connection:
            row = connection.execute(
                "SELECT r.number FROM rounds r JOIN responses s ON s.round_id = r.id "
                "WHERE r.status = 'running' AND s.transcript IS NOT NULL LIMIT 1"
            ).fetchone()
    except sqlite3.Error:
        return None
    return int(row[0]) if row else None


@pytest.mark.slow
async def test_kill_minus_nine_mid_episode_then_restart(tmp_path: Path) -> None:
    import dataclasses

    from subnet.config import RoundSettings
    from tests.support.simulation import start_simulated_subnet, stop_simulated_miners

    subnet = await start_simulated_subnet(tmp_path, ("right", "slow"), query_timeout=2.0)
    settings = dataclasses.replace(
        subnet.settings, round=RoundSettings(tasks=2, interval=1.0, episodes=3, episode_deadline=30.0)
    )
    db_path = _sqlite_path(settings.db.url)
    log_path = tmp_path / "validator.log"
    try:
        first = await _start(validator_argv(settings, rounds=50), log_path)
        killed: int | None = None
        for _ in range(1500):
            await asyncio.sleep(0.02)
            killed = _episode_in_flight(db_path)
            if killed is not None:
                break
            assert first.returncode is None, log_path.read_text()
        assert killed is not None, log_path.read_text()
        os.kill(first.pid, signal.SIGKILL)
        await first.wait()
        second = await _start(validator_argv(settings, rounds=1), log_path)
        assert await asyncio.wait_for(second.wait(), 60) == 0, log_path.read_text()
        engine = create_engine(settings.db.url)
        try:
            store = Store(engine)
            statuses = {r.number: r.status for r in await store.rounds()}
            assert statuses[killed] == RoundStatus.DISCARDED.value
            async with store.sessions() as session:
                kept = (
                    await session.execute(
                        select(ResponseRecord.id)
                        .join(Round)
                        .where(Round.number == killed, ResponseRecord.transcript.is_not(None))
                    )
                ).all()
            assert kept  # the episodes finished before the kill stay stored, for the audit
            scored = sum(status == RoundStatus.SCORED.value for status in statuses.values())
            for state in (await store.score_states()).values():
                assert state.rounds_scored == scored  # the killed round counted for nobody
        finally:
            await engine.dispose()
    finally:
        await stop_simulated_miners(list(subnet.miners.values()))
        await subnet.devchain.close()
