"""Child processes of the localnet: started with their own log, watched, and always stopped.

Each child runs in its own session (process group), so a Ctrl-C in the terminal reaches only
the localnet, which then stops the children in order: SIGTERM to each group, a grace period,
SIGKILL to whatever is left. On Linux each child also asks the kernel for SIGTERM when the
localnet itself dies (``PR_SET_PDEATHSIG``), so even a killed localnet leaves no orphans.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import errno
import os
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

_PR_SET_PDEATHSIG = 1
TAIL_LINES = 15


class ChildDied(Exception):
    """A child exited while it was expected to run (or to come up)."""

    def __init__(self, child: Child, returncode: int) -> None:
        self.child = child
        self.returncode = returncode
        super().__init__(f"{child.name} exited with code {returncode}")


@dataclass
class Child:
    """One started process and the part of its log file that belongs to this run."""

    name: str
    argv: list[str]
    log_path: Path
    process: asyncio.subprocess.Process
    log_offset: int
    started_at: float = field(default_factory=time.monotonic)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def output(self) -> str:
        """What this child wrote to its log during this run."""
        try:
            with self.log_path.open("rb") as handle:
                handle.seek(self.log_offset)
                return handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def tail(self, lines: int = TAIL_LINES) -> str:
        kept = [line for line in self.output().splitlines() if line.strip()]
        return "\n".join(kept[-lines:])


def _die_with_parent(parent_pid: int) -> Callable[[], None]:
    """A ``preexec_fn``: SIGTERM this child when the process that started it dies (Linux only)."""

    def arrange() -> None:
        name = ctypes.util.find_library("c")
        if sys.platform.startswith("linux") and name:
            libc = ctypes.CDLL(name, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return arrange


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


class Supervisor:
    """Starts children, notices deaths, and stops them all (TERM, grace, KILL)."""

    def __init__(self, *, cwd: Path, env: Mapping[str, str] | None = None, grace: float = 15.0) -> None:
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.grace = grace
        self.children: list[Child] = []

    async def start(self, name: str, argv: Sequence[str], log_path: Path) -> Child:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as log:
            stamp = datetime.now(UTC).isoformat(timespec="seconds")
            log.write(f"\n=== {stamp} localnet started {name}: {' '.join(argv)}\n".encode())
            log.flush()
            offset = log.tell()  # the child's own output starts here
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
                preexec_fn=_die_with_parent(os.getpid()),
            )
        child = Child(name, list(argv), log_path, process, offset)
        self.children.append(child)
        return child

    def running(self) -> list[Child]:
        return [child for child in self.children if child.running]

    async def stop(self, children: Sequence[Child], grace: float | None = None) -> None:
        """SIGTERM each child's group, wait up to ``grace`` seconds, then SIGKILL what is left."""
        grace = self.grace if grace is None else grace
        alive = [child for child in children if child.running]
        for child in alive:
            _signal_group(child.pid, signal.SIGTERM)
        if alive:
            waiting = asyncio.gather(*(child.process.wait() for child in alive))
            try:
                async with asyncio.timeout(grace):
                    await asyncio.shield(waiting)
            except TimeoutError:
                for child in alive:
                    if child.running:
                        _signal_group(child.pid, signal.SIGKILL)
                await waiting
        for child in children:
            # Anything the child itself started and left behind in its group goes too.
            _signal_group(child.pid, signal.SIGKILL)

    async def stop_all(self, grace: float | None = None) -> None:
        # Newest first: the validator stops before the miners it queries.
        await self.stop(list(reversed(self.children)), grace)


async def wait_until(
    check: Callable[[], Awaitable[bool]],
    *,
    child: Child,
    within_s: float,
    interval: float = 0.5,
) -> float:
    """Poll ``check`` until it is true; ChildDied when ``child`` exits first, TimeoutError after ``within_s``.

    Returns the seconds it took.
    """
    started = time.monotonic()
    while True:
        if not child.running:
            raise ChildDied(child, child.returncode if child.returncode is not None else -1)
        with contextlib.suppress(OSError):
            if await check():
                return time.monotonic() - started
        if time.monotonic() - started > within_s:
            raise TimeoutError(f"{child.name} did not come up within {within_s:g} s")
        await asyncio.sleep(interval)


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """True when ``host:port`` cannot be bound the way aiohttp binds (SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise
    return False
