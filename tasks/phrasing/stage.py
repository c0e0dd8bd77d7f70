"""The phrasing stage: every task's request rewritten by a language model, verified, or replaced.

``phrase(tasks, engine, round_seed)`` asks the engine for one rewording per task (one per task
per round, shared by every miner: variants only rename tool surfaces), checks it (``verify``),
retries a failed one with another style (bounded), and else drops the task for a newly drawn one
(bounded too). Nothing unverified is ever returned: a task that no attempt could phrase is left
out, and the stats say so. The same seed and the same engine answers give the same tasks on any
machine: styles, attempts and replacements are derived from the seed and the task, never from
timing or order of completion.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from scoring.checking import check
from scoring.schema import function_of
from tasks.model import Task
from tasks.phrasing.intent import intent_of
from tasks.phrasing.prompt import phrasing_messages
from tasks.phrasing.style import Style, add_typos, draw_style
from tasks.phrasing.verification import verify
from tasks.seeding import rng_from, seed_bytes, sub_seed

__all__ = [
    "EngineAnswer",
    "Phrased",
    "PhrasingEngine",
    "PhrasingPolicy",
    "PhrasingRequest",
    "PhrasingStats",
    "TemplateEngine",
    "phrase",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PhrasingRequest:
    """One rewording to write: the chat messages for a model, and the intent they came from."""

    messages: list[dict[str, str]]
    intent: dict[str, Any]
    style: Style
    #: A number derived from the round seed, the task and the attempt, for engines that take a seed.
    seed: int


@dataclass(frozen=True)
class EngineAnswer:
    """What the engine wrote (None when it failed, with ``error`` saying how) and what it cost."""

    text: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None


class PhrasingEngine(Protocol):
    """A writer of rewordings. ``rewrites`` False: the text is the template's (no model)."""

    name: str
    rewrites: bool

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def write(self, request: PhrasingRequest) -> EngineAnswer: ...

    async def solve(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        """The engine's own answer to a request with tools (for ``verify="solve"``), as
        ``scoring.check`` reads outputs; engines that cannot answer raise NotImplementedError."""
        ...


class TemplateEngine:
    """Today's template text, unchanged: for development, tests and the localnet (no model)."""

    name = "templates"
    rewrites = False

    def __init__(self, settings: object = None) -> None:
        """``settings``: the ``--phrasing.*`` settings every engine is built with; no model, none read."""

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def write(self, request: PhrasingRequest) -> EngineAnswer:
        return EngineAnswer(str(request.intent.get("example", "")))

    async def solve(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        raise NotImplementedError("the templates engine has no model to answer with")


@dataclass(frozen=True)
class PhrasingPolicy:
    """Bounds of the stage: attempts per task, replacements per slot, time, concurrency."""

    attempts: int = 3
    replacements: int = 2
    #: "values": the deterministic checks; "solve": those, then the engine answers its own text
    #: and only texts it gets right (by scoring.check) are kept.
    verify: str = "values"
    #: Seconds one engine call may take, and the whole stage may take.
    attempt_timeout: float = 60.0
    deadline: float = 300.0
    concurrency: int = 16


@dataclass
class PhrasingStats:
    """What the stage did for one set of tasks (recorded per round)."""

    engine: str
    slots: int = 0
    phrased: int = 0
    retried: int = 0
    dropped: int = 0
    unfilled: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    wall_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "slots": self.slots,
            "phrased": self.phrased,
            "retried": self.retried,
            "dropped": self.dropped,
            "unfilled": self.unfilled,
            "rejected": dict(sorted(self.rejected.items())),
            "wall_s": round(self.wall_s, 3),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }

    def summary(self) -> str:
        """One log line."""
        rejected = ", ".join(f"{reason} {count}" for reason, count in sorted(self.rejected.items())) or "none"
        return (
            f"phrasing ({self.engine}): {self.phrased} of {self.slots} tasks phrased in {self.wall_s:.1f} s, "
            f"{self.retried} retries, {self.dropped} dropped, {self.unfilled} left unfilled; "
            f"rejected: {rejected}; tokens {self.prompt_tokens} in, {self.completion_tokens} out"
        )


@dataclass
class Phrased:
    """The stage's result: the tasks to ask (in slot order) and what it took."""

    tasks: list[Task]
    stats: PhrasingStats


def _names(task: Task) -> list[str]:
    names: list[str] = []
    for tool in task.tools:
        function = function_of(tool)
        names.append(str(function.get("name", "")))
        properties = (function.get("parameters") or {}).get("properties") or {}
        names.extend(str(name) for name in properties)
    for ask in (task.intent or {}).get("asks", ()):
        names.append(str(ask.get("tool", "")))
        names.extend(str(value.get("slot", "")) for value in ask.get("values", ()))
    return names


def _with_request(task: Task, text: str, record: dict[str, Any]) -> Task:
    messages = [dict(message) for message in task.messages]
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            message["content"] = text
            break
    return replace(task, messages=messages, intent=intent_of(task), phrasing=record)


class _Slot:
    """Phrases one slot of the set: its task, then replacements, each with bounded attempts."""

    def __init__(
        self,
        index: int,
        root: bytes,
        engine: PhrasingEngine,
        policy: PhrasingPolicy,
        stats: PhrasingStats,
        deadline: float,
        gate: asyncio.Semaphore,
    ) -> None:
        self.index, self.root, self.engine, self.policy = index, root, engine, policy
        self.stats, self.deadline, self.gate = stats, deadline, gate

    async def fill(self, task: Task, redraw: Callable[[Task, bytes], Task] | None) -> Task | None:
        current = task
        for replacement in range(self.policy.replacements + 1):
            phrased = await self._phrase(current)
            if phrased is not None:
                if current is not task:
                    phrased.phrasing = {**(phrased.phrasing or {}), "replaces": task.id}
                return phrased
            self.stats.dropped += 1
            if redraw is None or replacement == self.policy.replacements or self._late():
                break
            current = redraw(task, sub_seed(self.root, f"redraw|{self.index}|{replacement}".encode()))
        self.stats.unfilled += 1
        return None

    def _late(self) -> bool:
        return time.monotonic() >= self.deadline

    async def _phrase(self, task: Task) -> Task | None:
        intent = intent_of(task)
        names = _names(task)
        original = task.request
        for attempt in range(self.policy.attempts):
            if self._late():
                self.stats.rejected["deadline"] += 1
                return None
            if attempt:
                self.stats.retried += 1
            attempt_seed = sub_seed(self.root, f"phrase|{task.id}|{task.seed}|{attempt}".encode())
            rng = rng_from(attempt_seed)
            style = draw_style(rng)
            request = PhrasingRequest(
                phrasing_messages(intent, style), intent, style, int.from_bytes(attempt_seed[:4], "big")
            )
            answer = await self._ask(request)
            self.stats.prompt_tokens += answer.prompt_tokens
            self.stats.completion_tokens += answer.completion_tokens
            if answer.text is None:
                self.stats.rejected[answer.error or "engine_error"] += 1
                continue
            text = _cleaned(answer.text)
            checked = verify(text, intent, names)
            if checked.reason is not None:
                self.stats.rejected[checked.reason] += 1
                continue
            if self.engine.rewrites and style.typos:
                typed = add_typos(text, style.typos, rng, checked.values)
                if verify(typed, intent, names).reason is None:
                    text = typed
            phrased = _with_request(
                task,
                text,
                {
                    "engine": self.engine.name,
                    "template": original,
                    "attempts": attempt + 1,
                    "style": style.to_dict(),
                },
            )
            if self.policy.verify == "solve" and not await self._solves(phrased):
                self.stats.rejected["not_solved"] += 1
                continue
            self.stats.phrased += 1
            return phrased
        return None

    def _time_left(self) -> float:
        """Seconds the next engine call may take: its own bound, within the stage's deadline."""
        return max(0.0, min(self.policy.attempt_timeout, self.deadline - time.monotonic()))

    async def _ask(self, request: PhrasingRequest) -> EngineAnswer:
        async with self.gate:  # the wait for a turn counts against the deadline, not the call's bound
            if self._late():
                return EngineAnswer(None, error="deadline")
            timeout = self._time_left()
            try:
                async with asyncio.timeout(timeout):
                    return await self.engine.write(request)
            except TimeoutError:
                return EngineAnswer(None, error="timeout")
            except Exception as exc:  # an engine's failure costs this attempt, never the round
                log.debug("phrasing engine failed: %s", exc)
                return EngineAnswer(None, error="engine_error")

    async def _solves(self, task: Task) -> bool:
        async with self.gate:
            try:
                async with asyncio.timeout(self._time_left()):
                    output = await self.engine.solve(task.messages, task.tools)
            except Exception:  # a timeout or a failed answer: the text is not shown to be solvable
                return False
        functions = [dict(function_of(tool)) for tool in task.tools]
        try:
            return bool(check(output, functions, task.expected, task.scoring_category).valid)
        except ValueError:
            return False


_WRAPPERS = ('"', "'", "“", "”", "`")


def _cleaned(text: str) -> str:
    """The message without surrounding whitespace or one pair of quotes wrapped around all of it."""
    text = text.strip()
    if len(text) > 1 and text[0] in _WRAPPERS and text[-1] in _WRAPPERS and text.count(text[0]) == 2:
        text = text[1:-1].strip()
    return text


async def phrase(
    tasks: Sequence[Task],
    engine: PhrasingEngine,
    round_seed: bytes | str | int,
    *,
    policy: PhrasingPolicy | None = None,
    redraw: Callable[[Task, bytes], Task] | None = None,
) -> Phrased:
    """Phrase every task (see the module docstring); ``redraw(task, seed)`` draws a replacement."""
    policy = policy or PhrasingPolicy()
    started = time.monotonic()
    stats = PhrasingStats(engine.name, slots=len(tasks))
    root = sub_seed(seed_bytes(round_seed), b"phrasing")
    gate = asyncio.Semaphore(policy.concurrency)
    deadline = started + policy.deadline
    slots = [_Slot(index, root, engine, policy, stats, deadline, gate) for index in range(len(tasks))]
    filled = await asyncio.gather(*(slot.fill(task, redraw) for slot, task in zip(slots, tasks, strict=True)))
    stats.wall_s = time.monotonic() - started
    return Phrased([task for task in filled if task is not None], stats)
