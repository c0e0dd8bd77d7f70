"""`python -m subnet.localnet` end to end: real processes (neurons/miner.py x3 serving the demo model,
neurons/validator.py), the devchain, loopback. Two rounds end in a leaderboard; a re-run reuses the
state; SIGINT mid-run leaves no child behind. Slow (minutes on a shared CPU): fewer tasks and a
short generation cap keep it as short as it can be."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from sqlalchemy import select

from subnet.db import Round, RoundStatus, ScoreState, create_engine, session_factory, sqlite_url
from subnet.devchain import DevChain
from tasks.catalog import ordered_categories
from tests.support.terminal import module_command

pytestmark = pytest.mark.slow
# The episodes' column titles on the leaderboard: their short labels in the category registry.
EPISODE_LABELS = {info.label for info in ordered_categories() if info.episode}

REPO = Path(__file__).resolve().parents[2]
# 5 tasks: simple, multiple, parallel, parallel_multiple and one no-call task (irrelevance); one
# episode per round (its steps are most of a round's model time; the episode player's own tests
# play many more, on simulated miners).
FAST = [
    "--round.tasks",
    "5",
    "--round.episodes",
    "1",
    "--model.max_new_tokens",
    "24",
    "--dashboard.port",
    "0",
]


def _command(state: Path, *args: str) -> list[str]:
    return module_command("subnet.localnet", "--state.dir", str(state), *FAST, *args)


def _leftovers(state: Path) -> list[psutil.Process]:
    """Processes (anywhere, not only our children: orphans are re-parented) started for this state dir."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            mentions = any(str(state) in part for part in process.info["cmdline"] or [])
            if mentions and process.pid != psutil.Process().pid and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            continue
    return found


def _no_leftovers(state: Path, within_s: float = 10.0) -> list[psutil.Process]:
    deadline = time.monotonic() + within_s
    while (left := _leftovers(state)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


async def _rounds(state: Path) -> list[Round]:
    engine = create_engine(sqlite_url(state / "validator.sqlite"))
    try:
        async with session_factory(engine)() as session:
            return list(await session.scalars(select(Round).order_by(Round.number)))
    finally:
        await engine.dispose()


async def _score_states(state: Path) -> list[ScoreState]:
    engine = create_engine(sqlite_url(state / "validator.sqlite"))
    try:
        async with session_factory(engine)() as session:
            return list(await session.scalars(select(ScoreState)))
    finally:
        await engine.dispose()


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    state = tmp_path_factory.mktemp("localnet") / "state"
    yield state
    for process in _leftovers(state):  # never leave anything behind, even when a test failed
        process.kill()


def test_two_rounds_end_with_a_leaderboard(state_dir: Path) -> None:
    started = time.monotonic()
    result = subprocess.run(
        _command(state_dir, "--miners", "3", "--rounds", "2"),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "round 1 scored" in output and "round 2 scored" in output and "[2/2]" in output
    for label in ("miner1", "miner2", "miner3"):
        assert f"{label} ready" in output
    table = output.split("leaderboard (netuid", 1)[1].splitlines()
    header = table[1].split()
    assert header[:7] == ["#", "uid", "miner", "hotkey", "format", "score", "valid"]
    assert header[-3:] == ["latency", "weight", "incentive"]
    # The episodes' columns (categories drawn per round) follow the single-turn ones.
    columns = header[7:-3]
    episodes = [title for title in columns if title in EPISODE_LABELS]
    assert episodes and columns[-len(episodes) :] == episodes, header
    assert "2 rounds of 5 tasks and 1 episode per miner" in output
    assert "round 1 scored" in output and "+ 1 episode:" in output
    rows = [line.split() for line in table[3:6]]
    assert sorted(row[2] for row in rows) == ["miner1", "miner2", "miner3"]
    assert sorted(row[4] for row in rows) == ["hermes", "hermes+forced", "json+grounded"]
    assert all(re.fullmatch(r"\d\.\d{3}", row[5]) for row in rows)  # every miner was scored
    assert all(row[6].endswith("/12") for row in rows)  # 2 rounds x (5 tasks + 1 episode) each
    assert f"database: {sqlite_url(state_dir / 'validator.sqlite')}" in output
    assert (state_dir / "logs" / "validator.log").is_file() and (state_dir / "logs" / "miner3.log").is_file()
    assert _no_leftovers(state_dir) == []

    rounds = asyncio.run(_rounds(state_dir))
    assert [(r.number, r.status) for r in rounds] == [(1, RoundStatus.SCORED), (2, RoundStatus.SCORED)]
    assert len(asyncio.run(_score_states(state_dir))) == 3
    print(f"localnet --miners 3 --rounds 2 took {time.monotonic() - started:.0f} s")

    chain = DevChain(state_dir / "devchain.sqlite")
    graph = chain.metagraph(1)
    weights = asyncio.run(chain.query("SubtensorModule", "Weights", [1, 1]))
    assert weights, output
    assert graph is not None and sum(graph["incentives"]) > 0, output
    assert "weights set at block" in output


def test_a_rerun_reuses_the_state(state_dir: Path) -> None:
    if not (state_dir / "localnet.json").is_file():
        pytest.skip("needs the first run's state")
    result = subprocess.run(
        # No episodes this time (--episodes 0): the re-run is about the state, and stays short.
        _command(state_dir, "--miners", "3", "--rounds", "1", "--round.tasks", "1", "--round.episodes", "0"),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"state: {state_dir} (reusing" in output
    assert "bootstrap 0 steps done" in output  # every step found already done
    assert "round 3 scored" in output  # round numbers go on from the first run
    assert "rounds of 1 tasks per miner (log" in output  # and no episodes (--episodes 0)
    numbers = [r.number for r in asyncio.run(_rounds(state_dir))]
    assert numbers == [1, 2, 3]
    assert _no_leftovers(state_dir) == []


def test_sigint_mid_run_leaves_no_child_behind(state_dir: Path) -> None:
    process = subprocess.Popen(
        _command(state_dir, "--miners", "3", "--rounds", "5"),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if "validator starting" in line:  # miners and the validator are all running now
                break
        assert any("validator starting" in line for line in seen), "".join(seen)
        children = [child.pid for child in psutil.Process(process.pid).children()]
        assert len(children) == 4
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    output = "".join(seen) + rest
    assert process.returncode == 128 + signal.SIGINT, output
    assert "SIGINT received: stopping every process" in output
    assert not any(
        psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in children
    )
    assert _no_leftovers(state_dir) == []
