"""The request queue in front of a local model: one generation thread, dynamic batches.

Concurrent requests wait in one queue. A batcher task runs the model in a single generation
thread, so the event loop stays free while the model runs. When the model is idle it gathers
requests for up to ``batch_wait_ms`` (or until ``max_batch``); while it is busy, new requests
join the running batch between two decoding steps as soon as there is room (`_continuous_loop`),
and each one leaves at its own end. Where rows cannot join a running batch, batches run whole
(`_batch_loop`). Every request owns its future, so answers cannot cross between callers; a
failed step fails only the requests in it and the batcher goes on.

`BatchingBackend` knows nothing of the model: a backend implements `_load`, `_continuous`,
`_run_batch` (a whole batch), `_engine_turn` (admit, decode one step) and `_forget_rows`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from subnet.metrics import Reading
from subnet.miner.base import GenerationRequest, GenerationResult, ModelError, ModelOptions

log = logging.getLogger(__name__)

# Smaller positive temperatures decode greedily: sampling at them is greedy in all but name.
MIN_SAMPLING_TEMPERATURE = 1e-5


@dataclass
class Pending:
    request: GenerationRequest
    future: asyncio.Future[GenerationResult]
    temperature: float
    arrived: float = field(default_factory=time.monotonic)


def answer(pending: Pending, outcome: GenerationResult | ModelError) -> None:
    """Hands a caller its result or its error, unless it went away meanwhile."""
    if pending.future.done():
        return
    if isinstance(outcome, ModelError):
        pending.future.set_exception(outcome)
    else:
        pending.future.set_result(outcome)


def failed_alone(error: Exception, what: str) -> ModelError:
    """The error one caller gets when its own request failed (the rest of the batch went on);
    the traceback goes to the log, once."""
    if isinstance(error, ModelError):
        return error
    log.error("%s failed for one request; the rest of its batch went on", what, exc_info=error)
    return ModelError(f"generation failed: {type(error).__name__}: {error}")


def sampling_temperature(request: GenerationRequest) -> float:
    # Greedy unless the caller asks for a temperature of at least MIN_SAMPLING_TEMPERATURE:
    # below it sampling is greedy in all but name, and logits divided by a vanishing one
    # (1e-300) overflow to a NaN softmax that the sampler refuses.
    temperature = request.temperature
    return float(temperature) if temperature and temperature >= MIN_SAMPLING_TEMPERATURE else 0.0


class BatchingBackend:
    """The queue, the batcher task and the generation thread of a local model backend."""

    def __init__(self, options: ModelOptions) -> None:
        self.options = options
        self._executor: ThreadPoolExecutor | None = None
        self._pending: deque[Pending] = deque()
        self._arrival: asyncio.Event | None = None
        self._batcher: asyncio.Task[None] | None = None
        self._running: list[Pending] = []  # the requests in the generation thread now
        self._closing = False
        # how many groups of requests started together (a generate call, or an admission into
        # the running batch): requests over batches is the mean batch size (/metrics, the benchmark)
        self.batches_run = 0
        self._next_key = 0

    def readings(self) -> list[Reading]:
        return [
            Reading(
                "subnet_miner_batches",
                "Groups of requests the model started together (requests / batches: the mean batch size)",
                lambda: self.batches_run,
                counter=True,
            )
        ]

    # -- what a backend implements (all but _continuous run in the generation thread) ---------

    def _load(self) -> None:
        raise NotImplementedError

    def _continuous(self) -> bool:
        """Whether rows join a running batch (`_engine_turn`) rather than run in whole batches."""
        return False

    def _run_batch(self, requests: list[GenerationRequest]) -> list[GenerationResult | ModelError]:
        raise NotImplementedError

    def _engine_turn(
        self, admitted: list[tuple[int, GenerationRequest]], gone: Sequence[int] = ()
    ) -> list[tuple[int, GenerationResult | ModelError]]:
        raise NotImplementedError

    def _forget_rows(self) -> None:
        """After a failed step: drop the running batch (its callers were told)."""

    # -- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Load the model (in the generation thread) and start the batcher."""
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="miner-generate")
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._load)
        self._arrival = asyncio.Event()
        self._batcher = asyncio.create_task(self._batch_loop(), name="miner-batcher")

    async def close(self) -> None:
        """Stop taking requests, fail the waiting ones, let the running batch finish, free the thread."""
        self._closing = True
        while self._pending:
            pending = self._pending.popleft()
            if not pending.future.done():
                pending.future.set_exception(ModelError("the miner is shutting down"))
        if self._batcher is not None and self._arrival is not None:
            # The batcher delivers the batch it is generating, then sees _closing and returns.
            self._arrival.set()
            try:
                await self._batcher
            except asyncio.CancelledError:
                # close() itself was cancelled: stop the batcher and tell the running batch.
                self._batcher.cancel()
                self._fail_running()
                raise
            finally:
                self._batcher = None
        if self._executor is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._executor.shutdown, True)
            self._executor = None
        self._fail_running()

    def _fail_running(self) -> None:
        for pending in self._running:
            if not pending.future.done():
                pending.future.set_exception(ModelError("the miner is shutting down"))
        self._running = []

    # -- requests -----------------------------------------------------------------------------

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        """Queue one request for the next batch and wait for its own answer."""
        if self._closing or self._arrival is None:
            raise ModelError("the model is not serving (starting up or shutting down)")
        future: asyncio.Future[GenerationResult] = asyncio.get_running_loop().create_future()
        self._pending.append(Pending(request, future, sampling_temperature(request)))
        self._arrival.set()
        return await future

    async def _batch_loop(self) -> None:
        if self._continuous():
            await self._continuous_loop()
            return
        assert self._arrival is not None and self._executor is not None
        loop = asyncio.get_running_loop()
        while not self._closing:
            if not self._pending:
                self._arrival.clear()
                await self._arrival.wait()
                continue
            await self._gather()
            batch = self._take_batch()
            if not batch:
                continue
            self._running = batch
            try:
                outcomes = await loop.run_in_executor(
                    self._executor, self._run_batch, [pending.request for pending in batch]
                )
            except Exception as error:  # one bad batch must not stop the miner
                log.exception("generation of a batch of %d failed", len(batch))
                outcomes = [ModelError(f"generation failed: {type(error).__name__}: {error}")] * len(batch)
            self.batches_run += 1
            self._running = []
            for pending, outcome in zip(batch, outcomes, strict=True):
                answer(pending, outcome)

    async def _continuous_loop(self) -> None:
        """Admit what fits, decode one step, answer the rows that ended; until closed and empty.
        On close the rows already running are finished and answered."""
        assert self._arrival is not None and self._executor is not None
        loop = asyncio.get_running_loop()
        active: dict[int, Pending] = {}
        while active or not self._closing:
            if not active:
                if not self._pending:
                    self._arrival.clear()
                    await self._arrival.wait()
                    continue
                await self._gather()
            # Callers that went away (timed out, disconnected): their rows leave at this turn
            # instead of decoding to their budget, and their places go to waiting requests.
            gone = [key for key, pending in active.items() if pending.future.done()]
            for key in gone:
                del active[key]
            admitted: list[tuple[int, Pending]] = []
            if not self._closing:
                for pending in self._take_room(self.options.max_batch - len(active)):
                    admitted.append((self._next_key, pending))
                    self._next_key += 1
            if admitted:
                self.batches_run += 1
            active.update(admitted)
            self._running = list(active.values())
            try:
                outcomes = await loop.run_in_executor(
                    self._executor,
                    self._engine_turn,
                    [(key, pending.request) for key, pending in admitted],
                    gone,
                )
            except Exception as error:  # one failed step must not stop the miner
                log.exception("a decoding step of %d requests failed", len(active))
                failure = ModelError(f"generation failed: {type(error).__name__}: {error}")
                outcomes = [(key, failure) for key in active]
                await loop.run_in_executor(self._executor, self._forget_rows)
            for key, outcome in outcomes:
                answer(active.pop(key), outcome)
            self._running = list(active.values())
            if outcomes:
                # Let the callers just answered run: one that sends its next request at once
                # has it admitted at the next step, not one step later.
                await asyncio.sleep(0)

    def _take_room(self, room: int) -> list[Pending]:
        """Up to ``room`` live requests, oldest first (rows decode with their own temperature)."""
        taken: list[Pending] = []
        while self._pending and len(taken) < room:
            pending = self._pending.popleft()
            if not pending.future.done():
                taken.append(pending)
        return taken

    async def _gather(self) -> None:
        """Wait until the oldest request has waited batch_wait_ms, or a full batch is there."""
        assert self._arrival is not None
        deadline = self._pending[0].arrived + self.options.batch_wait_ms / 1000
        while len(self._pending) < self.options.max_batch:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._arrival.clear()
            try:
                async with asyncio.timeout(remaining):
                    await self._arrival.wait()
            except TimeoutError:
                return

    def _take_batch(self) -> list[Pending]:
        """Up to max_batch live requests that decode alike (same temperature), oldest first."""
        while self._pending and self._pending[0].future.done():
            self._pending.popleft()
        if not self._pending:
            return []
        temperature = self._pending[0].temperature
        batch: list[Pending] = []
        kept: deque[Pending] = deque()
        while self._pending:
            pending = self._pending.popleft()
            if pending.future.done():
                continue
            if len(batch) < self.options.max_batch and pending.temperature == temperature:
                batch.append(pending)
            else:
                kept.append(pending)
        self._pending = kept
        return batch
