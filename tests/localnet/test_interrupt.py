"""SIGTERM (and SIGINT) while children run: every child is stopped, the exit code says which signal.
Stand-in miners that never come up keep this fast; the real neurons are in test_localnet_e2e.py."""

from __future__ import annotations

import asyncio
import os
import signal
import textwrap
from pathlib import Path

import psutil
import pytest

from subnet.localnet import commands as localnet_commands
from subnet.localnet import run as localnet_run
from subnet.localnet.run import run_localnet
from subnet.localnet.settings import parse_settings


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def _no_model(_self: object) -> None:
    return None


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_stops_every_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    stand_in = tmp_path / "miner.py"
    # Ignores SIGTERM at first, like a miner busy loading its model: the grace period runs out.
    stand_in.write_text(
        textwrap.dedent(
            """
            import signal, time
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            print("loading", flush=True)
            time.sleep(120)
            """
        )
    )
    monkeypatch.setattr(localnet_commands, "MINER_ENTRY", stand_in)
    monkeypatch.setattr(localnet_run.Localnet, "prepare_demo_model", _no_model)  # stand-ins need none
    settings = parse_settings(
        ["--state.dir", str(tmp_path / "state"), "--miners", "2", "--dashboard.port", "0", "--grace", "1"]
    )
    lines: list[str] = []
    running = asyncio.create_task(run_localnet(settings, out=lines.append))
    for _ in range(600):
        await asyncio.sleep(0.05)
        if sum("starting" in line for line in lines) == 2:
            break
    assert sum("starting" in line for line in lines) == 2, lines
    pids = [
        child.pid
        for child in psutil.Process().children(recursive=True)
        if any(str(stand_in) in part for part in child.cmdline())
    ]
    assert len(pids) == 2
    # delivered as in a terminal, whatever mask the test worker was started with
    blocked = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
    try:
        os.kill(os.getpid(), signum)
        assert await asyncio.wait_for(running, timeout=30) == 128 + signum
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    assert not any(_alive(pid) for pid in pids)
    assert f"{signal.Signals(signum).name} received: stopping every process" in lines
    assert f"state kept in {tmp_path / 'state'} (database and logs/; run again to continue)" in lines
    assert any(line.startswith("stopping miner1, miner2 (up to 1 s") for line in lines), lines
