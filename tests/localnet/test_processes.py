"""Child supervision with small stand-in children: logs, deaths, TERM then KILL, process groups,
and no orphans when the supervising process itself is killed."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from subnet.localnet.processes import Child, ChildDied, Supervisor, free_port, port_in_use, wait_until

PY = sys.executable


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


async def _wait_for_output(child: Child, text: str, within_s: float = 10.0) -> None:
    deadline = time.monotonic() + within_s
    while text not in child.output():
        assert time.monotonic() < deadline, f"{text!r} never appeared in {child.log_path}"
        await asyncio.sleep(0.02)


async def test_output_goes_to_the_log_and_the_tail_is_this_runs(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    log.write_text("an older run\n")
    supervisor = Supervisor(cwd=tmp_path, grace=2)
    child = await supervisor.start(
        "echo", [PY, "-c", "print('hello'); import sys; print('bad', file=sys.stderr)"], log
    )
    assert await child.process.wait() == 0
    assert "an older run" not in child.output()
    assert child.tail(2).splitlines() == ["hello", "bad"]
    assert "localnet started echo" in log.read_text()


async def test_stop_terminates_then_kills_what_ignores_sigterm(tmp_path: Path) -> None:
    polite = "import time\nwhile True: time.sleep(0.1)"
    stubborn = textwrap.dedent(
        """
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print('ignoring', flush=True)
        while True: time.sleep(0.1)
        """
    )
    supervisor = Supervisor(cwd=tmp_path, grace=1.0)
    first = await supervisor.start("polite", [PY, "-c", polite], tmp_path / "polite.log")
    second = await supervisor.start("stubborn", [PY, "-c", stubborn], tmp_path / "stubborn.log")
    await _wait_for_output(second, "ignoring\n")
    started = time.monotonic()
    await supervisor.stop_all()
    assert first.returncode == -signal.SIGTERM
    assert second.returncode == -signal.SIGKILL
    assert 0.9 < time.monotonic() - started < 5
    assert supervisor.running() == []


async def test_grandchildren_in_the_group_are_stopped_too(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import subprocess, time
        grandchild = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(60)'])
        print(grandchild.pid, flush=True)
        time.sleep(60)
        """
    )
    supervisor = Supervisor(cwd=tmp_path, grace=2)
    child = await supervisor.start("parent", [PY, "-c", script], tmp_path / "parent.log")
    deadline = time.monotonic() + 10
    while not child.tail(1).strip().isdigit():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    grandchild = int(child.tail(1).strip())
    assert _alive(grandchild)
    await supervisor.stop_all()
    assert _wait_gone(grandchild)


async def test_wait_until_reports_a_death_and_a_timeout(tmp_path: Path) -> None:
    supervisor = Supervisor(cwd=tmp_path, grace=1)
    dying = await supervisor.start(
        "dying", [PY, "-c", "print('miner: error: boom'); raise SystemExit(2)"], tmp_path / "dying.log"
    )

    async def never() -> bool:
        return False

    with pytest.raises(ChildDied) as died:
        await wait_until(never, child=dying, within_s=30, interval=0.02)
    assert died.value.returncode == 2 and "boom" in dying.tail()

    sleeper = await supervisor.start("sleeper", [PY, "-c", "import time; time.sleep(30)"], tmp_path / "s.log")
    with pytest.raises(TimeoutError, match=r"did not come up within 0\.2 s"):
        await wait_until(never, child=sleeper, within_s=0.2, interval=0.02)
    calls = 0

    async def third_time() -> bool:
        nonlocal calls
        calls += 1
        return calls >= 3

    assert await wait_until(third_time, child=sleeper, within_s=10, interval=0.01) >= 0
    await supervisor.stop_all()


def test_children_die_with_a_killed_supervisor(tmp_path: Path) -> None:
    """SIGKILL the supervising process: its child still gets SIGTERM (PR_SET_PDEATHSIG)."""
    pid_file = tmp_path / "child.pid"
    script = textwrap.dedent(
        f"""
        import asyncio, pathlib, sys, time
        from subnet.localnet.processes import Supervisor

        async def main():
            supervisor = Supervisor(cwd=pathlib.Path({str(tmp_path)!r}))
            child = await supervisor.start('sleeper', [sys.executable, '-c', 'import time; time.sleep(120)'],
                                           pathlib.Path({str(tmp_path / "sleeper.log")!r}))
            pathlib.Path({str(pid_file)!r}).write_text(str(child.pid))
            await asyncio.sleep(120)

        asyncio.run(main())
        """
    )
    parent = subprocess.Popen([PY, "-c", script])
    try:
        deadline = time.monotonic() + 20
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.05)
        child_pid = int(pid_file.read_text())
        assert _alive(child_pid)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert _wait_gone(child_pid), "the child outlived its killed supervisor"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_ports() -> None:
    port = free_port()
    assert not port_in_use(port)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", port))
        listener.listen()
        assert port_in_use(port)
