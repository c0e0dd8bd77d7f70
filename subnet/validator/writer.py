"""Where a round's scored responses go: written in batches while the round still waits on slow
miners (`ResponseWriter`), a row the database refuses stored as its miner's failure
(`unstorable_response`), and the seconds each stage took (`StageClock`)."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field, replace

from sqlalchemy.exc import StatementError

from subnet.db.connection import error_reason
from subnet.validator.rows import Outcome, ResponseRow
from subnet.validator.state import ScoredResponse
from subnet.validator.store import Store

__all__ = ["UNSTORABLE", "ResponseWriter", "StageClock", "unstorable_response"]

log = logging.getLogger(__name__)

# The status of a response the database refused even after it was made storable.
UNSTORABLE = "unstorable"


@dataclass
class StageClock:
    """Seconds spent in the synchronous code of each stage (the benchmark's per-response figures).

    Wall clock, not process CPU: reading the process CPU clock is a system call costing
    up to a millisecond on a busy virtual machine, more than the stages it would time.
    The stages never await, so on an idle machine the two agree.
    """

    cpu: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(("generate", "variant", "score"), 0.0)
    )
    store_wall: float = 0.0

    def add(self, stage: str, started: float) -> None:
        self.cpu[stage] = self.cpu.get(stage, 0.0) + time.perf_counter() - started


class ResponseWriter:
    """Writes scored responses in batches while the round is still waiting on slow miners."""

    def __init__(self, store: Store, batch_size: int, clock: StageClock) -> None:
        self.store = store
        self.batch_size = batch_size
        self.clock = clock
        self.queue: asyncio.Queue[ResponseRow | None] = asyncio.Queue()
        # What the stored rows add to the standings, in insertion order: the round folds these
        # without reading its 2,048 rows back (the store checks the count first).
        self.scored: list[ScoredResponse] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._drain(), name="response-writer")

    def add(self, row: ResponseRow) -> None:
        self.queue.put_nowait(row)

    async def close(self) -> None:
        self.queue.put_nowait(None)
        if self._task is not None:
            await self._task

    async def abort(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _drain(self) -> None:
        finished = False
        while not finished:
            first = await self.queue.get()
            batch: list[ResponseRow] = []
            if first is None:
                finished = True
            else:
                batch.append(first)
            while not finished and len(batch) < self.batch_size and not self.queue.empty():
                item = self.queue.get_nowait()
                if item is None:
                    finished = True
                else:
                    batch.append(item)
            if batch:
                started = time.perf_counter()
                batch = await self._store(batch)
                self.clock.store_wall += time.perf_counter() - started
                self.scored.extend(row.scored() for row in batch)

    async def _store(self, batch: list[ResponseRow]) -> list[ResponseRow]:
        """Store a batch; returns the rows as stored.

        A batch the database refuses is stored row by row, and a row it still refuses is stored
        as its miner's failure (score 0): one miner's answer never costs the others their
        results. Only when even that failure row is refused (the database itself is failing)
        does the error end the round.
        """
        try:
            await self.store.store_responses(batch)
            return batch
        except StatementError:
            pass
        stored: list[ResponseRow] = []
        for row in batch:
            try:
                await self.store.store_responses([row])
            except StatementError as exc:
                log.warning(
                    "a response of miner uid %s could not be stored (%s); it is recorded as a failure",
                    row.uid,
                    error_reason(exc),
                )
                row = unstorable_response(row, exc)
                await self.store.store_responses([row])
            stored.append(row)
        return stored


def unstorable_response(row: ResponseRow, error: BaseException) -> ResponseRow:
    """The failure that stands for a response the database refused: its keys, none of its data."""
    refused = row.outcome
    return replace(
        row,
        outcome=Outcome.failure(
            refused.category,
            UNSTORABLE,
            f"the answer could not be stored: {type(error).__name__}",
            f"store:{UNSTORABLE}",
            latency_s=refused.latency_s,
            http_status=refused.http_status,
        ),
    )
