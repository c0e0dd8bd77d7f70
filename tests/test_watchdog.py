"""tests/support/watchdog.py: a test that hangs on an await fails with the coroutine it waits in."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from tests.support.watchdog import Watchdog


async def _waits_forever(started: threading.Event) -> None:
    started.set()
    await asyncio.Event().wait()  # nothing ever sets it: the hang


def test_a_hung_await_is_reported_with_its_coroutine_and_cancelled(tmp_path: Path) -> None:
    outcome: list[BaseException] = []
    started = threading.Event()

    def run() -> None:
        try:
            asyncio.run(_waits_forever(started))
        except BaseException as error:  # the cancellation is what the test looks for
            outcome.append(error)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    assert started.wait(30)  # armed once the loop runs: a slow start is not what is tested
    watchdog = Watchdog(limit=0.3, poll_s=0.05, report_dir=tmp_path)
    try:
        watchdog.arm("tests/example.py::test_hangs")
        runner.join(timeout=30)
    finally:
        watchdog.close()
    assert not runner.is_alive(), "the watchdog did not end the hung await"
    assert outcome and isinstance(outcome[0], asyncio.CancelledError)
    (report,) = watchdog.fired
    assert "tests/example.py::test_hangs still running after 0 s" in report
    assert "_waits_forever" in report  # the coroutine the hang waits in, not just the loop's select
    assert [path.read_text() for path in tmp_path.iterdir()] == [report]


def test_a_test_that_ends_in_time_is_left_alone() -> None:
    watchdog = Watchdog(limit=0.2, poll_s=0.05)
    try:
        watchdog.arm("tests/example.py::test_quick")
        watchdog.disarm()
        time.sleep(0.5)
    finally:
        watchdog.close()
    assert watchdog.fired == []
