"""The validator's seams to the task generator and the scorer, as small protocols.

The round pipeline only sees :class:`TaskSource` and :class:`Judge`; the
defaults wrap ``tasks`` and ``scoring`` (imported when first used, not at
import time). Tests and simulations pass their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from subnet.protocol import AssistantMessage


class TaskLike(Protocol):
    """What the validator reads from a task (``tasks.Task`` satisfies it)."""

    @property
    def id(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def messages(self) -> list[dict[str, Any]]: ...
    @property
    def tools(self) -> list[dict[str, Any]]: ...
    @property
    def expected(self) -> list[Any]: ...
    @property
    def source(self) -> str: ...
    @property
    def generator_version(self) -> str: ...
    @property
    def scoring_category(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


class TaskSource(Protocol):
    def round_seed(self, secret: bytes, netuid: int, block_hash: str, round_number: int) -> bytes: ...
    def miner_seed(self, round_seed: bytes, hotkey: str) -> bytes: ...
    def generate(self, seed: bytes, n: int) -> Sequence[TaskLike]: ...
    def variant(self, task: TaskLike, seed: bytes) -> TaskLike: ...


@dataclass(frozen=True)
class Judgement:
    valid: bool
    error_type: str | None
    score: float
    components: dict[str, float] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)


class Judge(Protocol):
    def judge(self, message: AssistantMessage, task: TaskLike) -> Judgement: ...


def message_output(message: AssistantMessage) -> dict[str, Any]:
    """The scorer's input for a miner's answer: the assistant message as an OpenAI dict."""
    return message.model_dump(mode="json", exclude_none=True)


def bfcl_functions(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI tool dicts -> the function schemas BFCL's checker takes."""
    return [dict(tool.get("function", tool)) for tool in tools]


@dataclass
class LibraryTasks:
    """The default task source: ``tasks.generate`` / ``tasks.variant`` with the HMAC seeds.

    ``sources`` are ``tasks.Source`` entries (from ``--tasks.sources``); None is the builtin
    generator with the registry's category shares.
    """

    sources: Sequence[Any] | None = None

    @classmethod
    def from_flag(cls, text: str, bfcl: Sequence[Any] = (), xlam: Sequence[Any] = ()) -> LibraryTasks:
        """Parse ``--tasks.sources`` (``builtin=0.8,bfcl=0.2``) and load the pools it names.

        Raises ``tasks.TaskConfigError`` / ``tasks.SourceFileError`` with a one-line reason.
        """
        import tasks

        shares = tasks.parse_source_shares(text)
        if set(shares) <= {tasks.BUILTIN}:
            return cls(None)
        return cls(tasks.load_sources(shares, bfcl=list(bfcl) or None, xlam=list(xlam) or None))

    def round_seed(self, secret: bytes, netuid: int, block_hash: str, round_number: int) -> bytes:
        import tasks

        return bytes(tasks.derive_round_seed(secret, netuid, block_hash, round_number))

    def miner_seed(self, round_seed: bytes, hotkey: str) -> bytes:
        import tasks

        return bytes(tasks.derive_miner_seed(round_seed, hotkey))

    def generate(self, seed: bytes, n: int) -> Sequence[TaskLike]:
        import tasks

        return tasks.generate(seed, n, sources=list(self.sources) if self.sources else None)

    def episodes(self, seed: bytes, n: int) -> Sequence[Any]:
        """The round's multi-turn episodes (tasks.episodes), from a seed of their own."""
        from tasks.episodes import generate_episodes
        from tasks.seeding import sub_seed

        return generate_episodes(sub_seed(seed, b"episodes"), n)

    def redraw(self, task: Any, seed: bytes) -> Any:
        """A new task of the same category or source, for one whose request could not be phrased."""
        import tasks

        return tasks.redraw(task, seed, list(self.sources) if self.sources else None)

    def variant(self, task: TaskLike, seed: bytes) -> TaskLike:
        import tasks

        if not isinstance(task, tasks.Task):
            raise TypeError(f"LibraryTasks varies tasks.Task only, got {type(task).__name__}")
        return tasks.variant(task, seed)


@dataclass
class BfclJudge:
    """The default judge: ``scoring.check`` on the assistant message (never executes it)."""

    checker: Callable[..., Any] | None = None

    def judge(self, message: AssistantMessage, task: TaskLike) -> Judgement:
        if self.checker is None:
            import scoring

            self.checker = scoring.check
        verdict = self.checker(
            message_output(message), bfcl_functions(task.tools), task.expected, task.scoring_category
        )
        calls = [{"name": call.name, "arguments": call.arguments} for call in getattr(verdict, "calls", ())]
        return Judgement(
            valid=bool(verdict.valid),
            error_type=verdict.error_type,
            score=float(verdict.score),
            components={name: float(value) for name, value in dict(verdict.components).items()},
            calls=calls,
        )
