"""tests/support/watchdog.py: a test that hangs on an await fails with the coroutine it waits in."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from tests.support.watchdog import Watchdog


async def _waits_forever() -> None:
    await asyncio.Event().wait()  # nothing ever sets it: the hang


def test_a_hung_await_is_reported_with_its_coroutine_and_cancelled(tmp_path: Path) -> None:
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(_waits_forever())
        except BaseException as error:  # the cancellation is what the test looks for
            outcome.append(error)

    watchdog = Watchdog(limit=0.3, poll_s=0.05, report_dir=tmp_path)
    runner = threading.Thread(target=run, daemon=True)
    watchdog.arm("tests/example.py::test_hangs")
    runner.start()
    runner.join(timeout=30)
    assert not runner.is_alive(), "the watchdog did not end the hung await"
    assert outcome and isinstance(outcome[0], asyncio.CancelledError)
    (report,) = watchdog.fired
    assert "tests/example.py::test_hangs still running after 0 s" in report
    assert "_waits_forever" in report  # the coroutine the hang waits in, not just the loop's select
    assert [path.read_text() for path in tmp_path.iterdir()] == [report]


def test_a_test_that_ends_in_time_is_left_alone() -> None:
    watchdog = Watchdog(limit=0.2, poll_s=0.05)
    watchdog.arm("tests/example.py::test_quick")
    watchdog.disarm()
    time.sleep(0.5)
    assert watchdog.fired == []
