"""A hung test becomes a failure that shows where it hung.

One daemon thread per test process watches the running test. When a test runs past its limit,
it writes every thread's stack and every pending task of every running asyncio loop (the
coroutine a hang waits in, which a thread dump does not show) to stderr and to a file under the
system temp folder, then cancels those tasks, so the test fails instead of holding the run (and
CI) until its own time limit. The limit is far above any test's normal time (the slowest take a
few minutes on a loaded machine); ``TEST_HANG_S`` overrides it.
"""

from __future__ import annotations

import asyncio
import gc
import io
import os
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

__all__ = ["HANG_S", "Watchdog", "hang_report", "running_loops"]

HANG_S = float(os.environ.get("TEST_HANG_S", "1200"))


def running_loops() -> list[asyncio.AbstractEventLoop]:
    """Every event loop of this process that is running now (on any thread)."""
    # type(), not isinstance(): isinstance reads ``__class__``, which some lazy modules' objects
    # answer with a deprecation warning.
    loops = [obj for obj in gc.get_objects() if issubclass(type(obj), asyncio.AbstractEventLoop)]
    return [loop for loop in loops if loop.is_running() and not loop.is_closed()]


def hang_report(name: str, limit: float, loops: list[asyncio.AbstractEventLoop]) -> str:
    """The stacks of every thread and of every pending task of ``loops``."""
    out = io.StringIO()
    out.write(f"test {name} still running after {limit:.0f} s: stacks follow, then its tasks are cancelled\n")
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        out.write(f"--- thread {names.get(ident, ident)}\n")
        out.write("".join(traceback.format_stack(frame)))
    for loop in loops:
        # Read from another thread: good enough for a report, the loop is stuck anyway.
        for task in list(asyncio.all_tasks(loop)):
            out.write(f"--- task {task!r}\n")
            task.print_stack(limit=40, file=out)
    return out.getvalue()


class Watchdog:
    """``arm(name)`` when a test starts, ``disarm()`` when it ends; past ``limit`` seconds, report
    and cancel (see the module's docstring). ``fired`` holds the reports; ``close()`` ends the
    watching thread."""

    def __init__(self, limit: float = HANG_S, poll_s: float = 1.0, report_dir: Path | None = None) -> None:
        self.limit = limit
        self.poll_s = poll_s
        self.report_dir = report_dir or Path(tempfile.gettempdir()) / "hung-tests"
        self.fired: list[str] = []
        self._lock = threading.Lock()
        self._name: str | None = None
        self._deadline = 0.0
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="test-watchdog", daemon=True)
        self._thread.start()

    def arm(self, name: str) -> None:
        with self._lock:
            self._name, self._deadline = name, time.monotonic() + self.limit

    def disarm(self) -> None:
        with self._lock:
            self._name = None

    def close(self) -> None:
        self._closed.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._closed.wait(self.poll_s):
            with self._lock:
                name = self._name
                due = name is not None and time.monotonic() >= self._deadline
                if due:
                    self._name = None  # once per test
            if due and name is not None:
                self._fire(name)

    def _fire(self, name: str) -> None:
        loops = running_loops()
        report = hang_report(name, self.limit, loops)
        self.fired.append(report)
        stderr = sys.__stderr__
        if stderr is not None:
            stderr.write(report)
            stderr.flush()
        folder = self.report_dir
        folder.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[-150:]
        (folder / f"{safe}.txt").write_text(report)
        for loop in loops:
            for task in list(asyncio.all_tasks(loop)):
                loop.call_soon_threadsafe(task.cancel)
