"""The one row a miner's answer becomes: what it came to (`Outcome`), keyed to a round (`ResponseRow`).

Every path that scores an answer builds the same two values: a single call (``rounds``), an episode
(``episodes``), a miner cut off by its budget, an answer the database refused (``writer``), and the
evaluation command, which plays episodes with no round at all and so reads an `Outcome` unkeyed.
`ResponseRow.columns` is what the store inserts into ``responses`` (subnet.db.models.ResponseRecord),
column for column; the names here are that table's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from subnet.validator.state import ScoredResponse

__all__ = ["Outcome", "ResponseRow"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one answer (one call, or a whole episode) came to, before it is keyed to a round.

    ``status``: the transport's word (``ok``, ``timeout``, ``http_error`` ...) or the validator's
    (``tool_error``, ``unstorable``); ``category``: the task's own (missing_param stays itself
    although it is scored as irrelevance); ``transcript``: an episode's, as stored (bounded JSON,
    see subnet.validator.transcripts), None for a single call.
    """

    category: str
    status: str
    latency_s: float
    valid: bool = False
    score: float = 0.0
    error_type: str | None = None
    components: dict[str, float] = field(default_factory=dict)
    http_status: int | None = None
    error: str | None = None
    raw_output: str | None = None
    raw_truncated: bool = False
    decoded_calls: list[dict[str, Any]] | None = None
    transcript: dict[str, Any] | None = None

    @classmethod
    def failure(
        cls,
        category: str,
        status: str,
        error: str | None,
        error_type: str,
        *,
        latency_s: float = 0.0,
        http_status: int | None = None,
        transcript: dict[str, Any] | None = None,
    ) -> Outcome:
        """An answer that earned nothing: score 0, not valid, the reason kept (cut to 1,000 characters)."""
        return cls(
            category=category,
            status=status,
            latency_s=latency_s,
            error_type=error_type,
            http_status=http_status,
            error=None if error is None else error[:1000],
            transcript=transcript,
        )


@dataclass(frozen=True, slots=True)
class ResponseRow:
    """One ``responses`` row: a miner's (hotkey, uid) outcome for one task of one round."""

    round_id: int
    task_id: int
    hotkey: str
    uid: int
    outcome: Outcome

    def columns(self) -> dict[str, Any]:
        """The row as the store inserts it: every column of ``responses`` but the id and the time
        (a test holds this list to the table's)."""
        outcome = self.outcome
        return {
            "round_id": self.round_id,
            "task_id": self.task_id,
            "hotkey": self.hotkey,
            "uid": self.uid,
            "category": outcome.category,
            "status": outcome.status,
            "latency_s": outcome.latency_s,
            "valid": outcome.valid,
            "score": outcome.score,
            "error_type": outcome.error_type,
            "components": outcome.components,
            "http_status": outcome.http_status,
            "error": outcome.error,
            "raw_output": outcome.raw_output,
            "raw_truncated": outcome.raw_truncated,
            "decoded_calls": outcome.decoded_calls,
            "transcript": outcome.transcript,
        }

    def scored(self) -> ScoredResponse:
        """What the row adds to its hotkey's standing."""
        outcome = self.outcome
        return ScoredResponse(
            self.hotkey, self.uid, outcome.category, outcome.valid, outcome.score, outcome.error_type
        )
