"""Cancelling a task a chosen number of loop steps after its awaited answer arrived: where
Python 3.11's asyncio.wait_for swallows a cancellation (tests/test_cancellation.py says why)."""

from __future__ import annotations

import asyncio
from typing import TypeVar

import pytest

T = TypeVar("T")


async def cancel_after(task: asyncio.Future[T], steps: int) -> T | None:
    """Let ``steps`` loop steps pass, then cancel ``task``. A task still running then must end
    cancelled (None is returned); one that finished first gives its result."""
    for _ in range(steps):
        await asyncio.sleep(0)
    if task.cancel():
        with pytest.raises(asyncio.CancelledError):
            await task
        return None
    return task.result()
