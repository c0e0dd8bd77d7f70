"""The sandbox that runs episodes' tool calls: a few worker processes the validator owns.

A miner chooses the arguments of every tool call of its episodes; the tools are simulated, but a
hostile argument can still make one slow, hungry or raise. So no tool runs on the validator's
event loop: each episode's environment lives in one of ``SandboxLimits.workers`` worker
processes (``subnet.validator.sandbox_worker``), kept there between calls (a step costs one pipe
round trip), and every call has a hard budget:

- wall time: ``call_deadline_s`` (2 s) per call, enforced by killing the worker (an asyncio timer:
  the tool cannot overrun it, whatever it does);
- CPU time: the worker's ``RLIMIT_CPU`` is moved to its use so far plus ``cpu_s`` before each call;
- memory: the worker's ``RLIMIT_AS`` is ``memory_bytes`` (1 GiB), so a tool that allocates beyond
  it gets a ``MemoryError`` in its own worker.

What a tool raises is the environment's own error observation (it undoes the call by replaying
the episode's earlier calls); a call whose undo fails, or anything else the worker reports
(``ToolRaised``), or a call that runs past its budget or ends its worker (``ToolOverran``), fails
that miner's episode: the state cannot be trusted, and a miner whose call overran must not get to
cost a worker again. The other episodes a killed worker held
are rebuilt on its replacement by replaying their seed and the operations they had seen
(environments are deterministic, so the state is exactly the same), so nobody else loses
anything. A worker busy with a slow call for longer than ``patience_s`` does not hold up the other
episodes pinned to it: they move to an idle worker (by the same replay).

Frames are length-prefixed JSON from the validator and JSON (or the raw fingerprint) back:
nothing a worker sends is unpickled or evaluated.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.episodes.runner import Ask, EpisodeRunner

__all__ = [
    "Sandbox",
    "SandboxEpisode",
    "SandboxError",
    "SandboxLimits",
    "SandboxedRunner",
    "ToolOverran",
    "ToolRaised",
    "default_workers",
]

log = logging.getLogger(__name__)

#: Where the ``subnet`` package lives: the workers import the same code as this process.
_ROOT = str(Path(__file__).resolve().parents[2])


def default_workers() -> int:
    """A small pool sized to the machine: one worker per core, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


#: The longest one tool call may run before its worker is ended (the round's budget counts it).
CALL_DEADLINE_S = 2.0


@dataclass(frozen=True)
class SandboxLimits:
    """The sandbox's budgets (see the module docstring). ``workers`` 0: ``default_workers()``."""

    workers: int = 0
    call_deadline_s: float = CALL_DEADLINE_S
    cpu_s: float = CALL_DEADLINE_S
    memory_bytes: int = 1 << 30
    start_timeout_s: float = 60.0
    patience_s: float = 0.1


class SandboxError(RuntimeError):
    """An episode failed in the sandbox; the message says why (it goes into the transcript)."""


class ToolRaised(SandboxError):
    """A tool raised (memory exhaustion included): its environment is gone, the episode failed."""


class ToolOverran(SandboxError):
    """A call ran past its budget or ended its worker: the worker was replaced, the episode failed."""


class _Worker:
    """One worker process and what the validator knows of it."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.process: asyncio.subprocess.Process | None = None
        self.lock = asyncio.Lock()
        self.held: set[str] = set()  # episodes whose environment this process holds
        self.to_drop: list[str] = []  # finished or moved episodes, forgotten with the next request
        self.assigned = 0  # open episodes pinned here
        self.busy_since = 0.0
        self.overran = False
        self.restarts = 0


class Sandbox:
    """The pool of worker processes. ``start`` (optional: workers start on first use), ``open``
    an episode's environment, ``close`` at shutdown (ends every worker)."""

    def __init__(self, limits: SandboxLimits | None = None, *, preload: tuple[str, ...] = ()) -> None:
        """``preload``: modules each worker imports at start, besides the environments (test
        equipment registering an environment of its own)."""
        self.limits = limits or SandboxLimits()
        self.preload = preload
        count = self.limits.workers or default_workers()
        self._workers = [_Worker(index) for index in range(count)]
        self._keys = itertools.count()
        self._background: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def size(self) -> int:
        return len(self._workers)

    @property
    def restarts(self) -> int:
        """Workers ended and replaced so far (by a deadline or by a tool that ended its worker)."""
        return sum(worker.restarts for worker in self._workers)

    async def start(self) -> None:
        """Start every worker now (else each starts on its first request)."""
        await asyncio.gather(*(self._ensure_started(worker) for worker in self._workers))

    def warm(self) -> None:
        """Start every worker in the background (the first round then finds them ready)."""
        for worker in self._workers:
            self._behind(self._ensure_started(worker))

    def _behind(self, job: Any) -> None:
        task = asyncio.create_task(job)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_quiet)

    def open(self, episode: Any) -> SandboxEpisode:
        """A handle on ``episode``'s environment (built in a worker on its first request)."""
        if self._closed:
            raise SandboxError("the sandbox is closed")
        worker = min(self._workers, key=lambda candidate: (candidate.assigned, candidate.index))
        worker.assigned += 1
        spec = {
            "environment": episode.environment,
            "env_seed": episode.env_seed,
            "size": episode.size,
            "config": episode.config,
            "design": getattr(episode, "design", None),
        }
        return SandboxEpisode(self, f"e{next(self._keys)}", spec, worker)

    async def close(self) -> None:
        """End every worker (closing its input first, so it exits by itself when it can)."""
        self._closed = True
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await asyncio.gather(*(self._stop(worker) for worker in self._workers))

    # -- one request --------------------------------------------------------------------------

    async def _exchange(self, handle: SandboxEpisode, ops: list[list[Any]]) -> tuple[bytes, bytes]:
        worker = await self._acquire(handle)
        released = False
        try:
            process = await self._ensure_process(worker)
            key = handle.key
            message: dict[str, Any] = {"id": key, "ops": ops}
            if worker.to_drop:
                message["drop"], worker.to_drop = worker.to_drop, []
            replayed = 0
            if key not in worker.held:
                message["spec"], message["replay"] = handle.spec, handle.log
                replayed = sum(1 for op in handle.log if op[0] == "call")
            frame = json.dumps(message).encode()
            assert process.stdin is not None
            process.stdin.write(len(frame).to_bytes(4, "big") + frame)
            worker.busy_since = time.monotonic()
            # Each call was within its budget when it first ran, so a replay gets one per call.
            deadline = self.limits.call_deadline_s * (1 + replayed)
            timer = asyncio.get_running_loop().call_later(deadline, self._overrun, worker)
            try:
                reply = await self._read_frame(process)
            except asyncio.CancelledError:
                # The episode was cancelled (its deadline, the round's end) mid-call: its reply
                # would be read by the next request, so the worker goes (the others replay).
                timer.cancel()
                released = True
                self._behind(self._bury(worker, release=True))
                raise
            except (asyncio.IncompleteReadError, ConnectionError):
                timer.cancel()
                overran = worker.overran
                await self._bury(worker)
                if overran:
                    raise ToolOverran(
                        f"sandbox: the call ran past its {self.limits.call_deadline_s:g} s budget"
                        " (its worker was ended)"
                    ) from None
                raise ToolOverran(
                    f"sandbox: the call ended its worker (exit code {process.returncode})"
                ) from None
            timer.cancel()
            worker.held.add(key)
            return reply
        finally:
            if not released:
                self._release(worker)

    async def _read_frame(self, process: asyncio.subprocess.Process) -> tuple[bytes, bytes]:
        assert process.stdout is not None
        header = await process.stdout.readexactly(4)
        body = await process.stdout.readexactly(int.from_bytes(header, "big"))
        return body[:1], body[1:]

    def _overrun(self, worker: _Worker) -> None:
        """The call's deadline passed: end the worker now (the pending read then fails)."""
        if worker.process is not None and worker.process.returncode is None:
            worker.overran = True
            worker.process.kill()

    def _release(self, worker: _Worker) -> None:
        worker.busy_since = 0.0
        worker.lock.release()

    async def _acquire(self, handle: SandboxEpisode) -> _Worker:
        """The lock of the handle's worker, or of an idle one when the handle's worker has been
        busy for longer than ``patience_s`` (a slow call of another episode); then the handle
        moves there and its environment is replayed with its next request."""
        worker = handle.worker
        if not worker.lock.locked():
            await worker.lock.acquire()
            return worker
        acquiring = asyncio.ensure_future(worker.lock.acquire())
        try:
            while True:
                done, _ = await asyncio.wait({acquiring}, timeout=self.limits.patience_s)
                if done:
                    return worker
                now = time.monotonic()
                if not worker.busy_since or now - worker.busy_since < self.limits.patience_s:
                    continue
                idle = next(
                    (
                        other
                        for other in self._workers
                        if other is not worker and not other.lock.locked() and other.process is not None
                    ),
                    None,
                )
                if idle is None:
                    continue
                acquiring.cancel()
                try:
                    await acquiring
                except asyncio.CancelledError:
                    pass
                else:
                    return worker  # granted meanwhile: stay
                await idle.lock.acquire()
                handle.move(idle)
                return idle
        except BaseException:
            # Cancelled while waiting: a lock granted meanwhile goes back.
            acquiring.cancel()
            acquiring.add_done_callback(
                lambda task: (
                    worker.lock.release() if not task.cancelled() and task.exception() is None else None
                )
            )
            raise

    # -- worker life cycle --------------------------------------------------------------------

    async def _ensure_process(self, worker: _Worker) -> asyncio.subprocess.Process:
        if worker.process is None:
            await self._spawn(worker)
        assert worker.process is not None
        return worker.process

    async def _ensure_started(self, worker: _Worker) -> None:
        async with worker.lock:
            if worker.process is None and not self._closed:
                await self._spawn(worker)

    async def _spawn(self, worker: _Worker) -> None:
        if self._closed:
            raise SandboxError("sandbox: closed")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (_ROOT, env.get("PYTHONPATH"))))
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "subnet.validator.sandbox_worker",
            str(self.limits.memory_bytes),
            str(self.limits.cpu_s),
            *self.preload,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            limit=1 << 20,
        )
        try:
            async with asyncio.timeout(self.limits.start_timeout_s):
                kind, _ = await self._read_frame(process)
            if kind != b"R":
                raise ValueError(f"unexpected first frame {kind!r}")
        except BaseException as error:
            if process.returncode is None:
                process.kill()
            await process.wait()
            if isinstance(error, Exception):
                log.error("sandbox: a worker could not start: %s", error)
                raise SandboxError(f"sandbox: a worker could not start ({type(error).__name__})") from None
            raise
        if self._closed:  # closed while this one started: it must not outlive the sandbox
            process.kill()
            await process.wait()
            raise SandboxError("sandbox: closed")
        worker.process = process
        worker.held.clear()
        worker.to_drop.clear()
        worker.overran = False

    async def _bury(self, worker: _Worker, *, release: bool = False) -> None:
        """Forget an ended (or ending) worker; a replacement starts behind, for the next request.
        ``release``: the worker's lock is released afterwards (a cancelled request's clean-up)."""
        try:
            await self._end(worker)
        finally:
            if release:
                self._release(worker)
        if not self._closed:
            self._behind(self._ensure_started(worker))

    async def _end(self, worker: _Worker) -> None:
        process, worker.process = worker.process, None
        worker.held.clear()
        worker.to_drop.clear()
        worker.overran = False
        worker.restarts += 1
        if process is not None:
            if process.returncode is None:
                process.kill()
            await process.wait()
        log.warning("sandbox worker %d was ended and is being replaced", worker.index)

    async def _stop(self, worker: _Worker) -> None:
        # Not under the worker's lock: a request still in flight at shutdown just sees it end.
        process, worker.process = worker.process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        try:
            async with asyncio.timeout(2.0):
                await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()


def _quiet(task: asyncio.Future[Any]) -> None:
    """Retrieve a background task's exception (already dealt with) so asyncio does not log it."""
    if not task.cancelled():
        task.exception()


class SandboxEpisode:
    """One episode's environment in the sandbox: ``turn``, ``call``, ``state``, then ``close``.

    ``log`` holds the operations the worker has applied (turns and calls, in order): what a new
    worker replays to rebuild the same state."""

    def __init__(self, sandbox: Sandbox, key: str, spec: dict[str, Any], worker: _Worker) -> None:
        self.sandbox = sandbox
        self.key = key
        self.spec = spec
        self.worker = worker
        self.log: list[list[Any]] = []
        self.pending: list[list[Any]] = []  # begin_turn, sent with the next request
        self.failed: str | None = None
        self.closed = False

    def turn(self) -> None:
        self.pending.append(["turn"])

    async def state(self) -> str:
        kind, payload = await self._request(["state"])
        if kind != b"S":
            raise SandboxError("sandbox: the worker sent no state")
        return payload.decode("utf-8", "surrogatepass")

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str | None, Any, bool]:
        _, payload = await self._request(["call", name, arguments])
        reply = json.loads(payload)
        unsafe, observation, mutates = reply["ok"]
        return unsafe, observation, bool(mutates)

    async def _request(self, op: list[Any]) -> tuple[bytes, bytes]:
        if self.failed is not None:
            raise SandboxError(self.failed)
        if self.closed:
            raise SandboxError("sandbox: the episode is closed")
        ops = [*self.pending, op]
        try:
            kind, payload = await self.sandbox._exchange(self, ops)
        except SandboxError as error:
            self.failed = str(error)
            raise
        if kind == b"J" and payload.startswith(b'{"raised"'):
            self.failed = f"tool error: {json.loads(payload)['raised']}"
            self.worker.held.discard(self.key)
            raise ToolRaised(self.failed)
        self.log.extend(ops if op[0] != "state" else ops[:-1])
        self.pending = []
        return kind, payload

    def move(self, worker: _Worker) -> None:
        """Pin this episode to another worker (its environment is rebuilt there by replay)."""
        self.worker.held.discard(self.key)
        self.worker.to_drop.append(self.key)
        self.worker.assigned -= 1
        worker.assigned += 1
        self.worker = worker

    def close(self) -> None:
        """The episode is over: its worker forgets the environment with its next request."""
        if self.closed:
            return
        self.closed = True
        self.worker.held.discard(self.key)
        if self.worker.process is not None:
            self.worker.to_drop.append(self.key)
        self.worker.assigned -= 1


class SandboxedRunner(EpisodeRunner):
    """``tasks.episodes.EpisodeRunner`` with its environment in the sandbox: the same play, the
    same transcript, but no tool ever runs in this process."""

    def __init__(self, episode: Any, ask: Ask, sandbox: Sandbox) -> None:
        super().__init__(episode, ask)
        self.handle = sandbox.open(episode)

    async def environment_turn(self) -> None:
        self.handle.turn()

    async def environment_state(self) -> str:
        return await self.handle.state()

    async def environment_call(self, name: str, arguments: dict[str, Any]) -> tuple[str | None, Any, bool]:
        return await self.handle.call(name, arguments)

    def close(self) -> None:
        self.handle.close()
