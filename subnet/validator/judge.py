"""The validator's seam to the scorer: :class:`Judge`, and its default :class:`BfclJudge`.

The round pipeline only sees the protocol; the default wraps ``scoring.check``. Tests and
simulations pass their own. ``python -m subnet.evaluate`` scores with the same default, so the two
never disagree on a verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from scoring.checking import check
from scoring.schema import function_of
from subnet.protocol import AssistantMessage
from subnet.validator.task_source import TaskLike


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

    return [dict(function_of(tool)) for tool in tools]


@dataclass
class BfclJudge:
    """The default judge: ``scoring.check`` on the assistant message (never executes it)."""

    checker: Callable[..., Any] | None = None

    def judge(self, message: AssistantMessage, task: TaskLike) -> Judgement:
        if self.checker is None:
            self.checker = check
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
