"""A round's multi-turn episodes, played with every miner (docs/episodes.md).

Each miner plays its own variant of each episode, episode after episode; every step is one
signed request with the whole history through the round's transport (its timeouts and size caps
apply per step), and ``--round.episode_deadline`` bounds an episode in all. A miner that times
out, refuses or breaks at a step fails that episode (recorded with the reason); the others go
on. The result is one ``responses`` row per miner and episode: the episode's category, verdict and
score (``scoring.check_episode``; an ``agent_step`` one is a single call judged by
``scoring.check``), and its transcript, bounded in size.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from subnet.transport import QueryStatus, QueryTarget
from subnet.validator.request import build_request
from subnet.validator.transcripts import bound_transcript

__all__ = ["EpisodeLimits", "EpisodePlayer"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EpisodeLimits:
    deadline_s: float = 120.0
    max_tokens: int | None = 512


class _StepFailed(RuntimeError):
    """A step got no usable answer; ``status`` is the transport's word for why."""

    def __init__(self, status: str, detail: str) -> None:
        super().__init__(f"{status}: {detail}" if detail else status)
        self.status = status


class EpisodePlayer:
    """Plays a miner's episodes and hands each result row to ``add``."""

    def __init__(
        self,
        querier: Any,
        limits: EpisodeLimits,
        add: Callable[[dict[str, Any]], None],
        on_response: Callable[[str], None] | None = None,
        observer: Callable[[str, Any, Any, None], None] | None = None,
    ) -> None:
        """``observer(hotkey, episode, variant, None)`` hears of each episode before it is played
        (simulations and audits; the single-turn observer with no request)."""
        self.querier = querier
        self.limits = limits
        self.add = add
        self.on_response = on_response
        self.observer = observer

    async def play_miner(
        self,
        round_id: int,
        task_ids: dict[str, int],
        miner: Any,
        target: QueryTarget,
        episodes: list[tuple[Any, Any]],
    ) -> list[tuple[str, float]]:
        """Every (episode, this miner's variant), one after the other: (status, seconds) each."""
        outcomes = []
        for original, episode in episodes:
            if self.observer is not None:
                self.observer(miner.hotkey, original, episode, None)
            row = await self._play(episode, target)
            row.update(round_id=round_id, task_id=task_ids[episode.id], hotkey=miner.hotkey, uid=miner.uid)
            self.add(row)
            if self.on_response is not None:
                self.on_response(row["status"])
            outcomes.append((row["status"], row["latency_s"]))
        return outcomes

    async def _play(self, episode: Any, target: QueryTarget) -> dict[str, Any]:
        from scoring import check, check_episode, function_of
        from tasks.episodes import EpisodeRunner, agent_step

        digests: list[str] = []
        latencies: list[float] = []
        failure: list[_StepFailed] = []

        async def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            request = build_request(messages, tools, self.limits.max_tokens)
            digests.append(hashlib.sha256(request.model_dump_json(exclude_none=True).encode()).hexdigest())
            result = await self.querier.query(target, request)
            latencies.append(float(result.latency_s))
            if not result.ok or result.completion is None:
                status = result.status.value if isinstance(result.status, QueryStatus) else str(result.status)
                failure.append(_StepFailed(status, str(result.error or "")[:200]))
                raise failure[-1]
            return result.completion.message.model_dump(mode="json", exclude_none=True)

        started = time.perf_counter()
        transcript: Any = None
        record: dict[str, Any]
        if episode.category == "agent_step":
            task = agent_step(episode)
            try:
                answer = await asyncio.wait_for(ask(task.messages, task.tools), self.limits.deadline_s)
                verdict = check(answer, [function_of(tool) for tool in task.tools], task.expected, "simple")
            except (_StepFailed, TimeoutError):
                answer, verdict = None, None
            record = {"agent_step": {"answer": answer}}
        else:
            runner = EpisodeRunner(episode, ask)
            try:
                transcript = await asyncio.wait_for(runner.play(), self.limits.deadline_s)
            except TimeoutError:
                transcript = runner.transcript
                transcript.failed = f"deadline: the episode took more than {self.limits.deadline_s:g} s"
                if transcript.turns:
                    transcript.turns[-1].ended = "failed"
            verdict = check_episode(transcript, episode)
            record = transcript.to_dict()
        if failure:
            status = failure[-1].status
        elif verdict is None or (transcript is not None and transcript.failed):
            status = "timeout"  # the episode's deadline
        else:
            status = "ok"
        valid = bool(verdict and verdict.valid)
        error_type = (verdict.error_type if verdict else "multi_turn:no_answer") if not valid else None
        record["request_digests"] = digests
        record["latencies_s"] = [round(latency, 4) for latency in latencies]
        return {
            "category": episode.category,
            "status": status,
            "latency_s": time.perf_counter() - started,
            "http_status": None,
            "error": str(failure[-1])[:1000] if failure else (transcript.failed if transcript else None),
            "raw_output": None,
            "raw_truncated": False,
            "decoded_calls": None,
            "valid": valid,
            "error_type": error_type,
            "score": float(verdict.score) if verdict else 0.0,
            "components": dict(verdict.components) if verdict else {},
            "transcript": bound_transcript(record),
        }
