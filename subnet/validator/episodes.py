"""A round's multi-turn episodes, played with every miner (docs/episodes.md).

Each miner plays its own variant of each episode, episode after episode; every step is one
signed request with the whole history through the round's transport (its timeouts and size caps
apply per step), and ``--round.episode_deadline`` bounds an episode in all. The tools a miner
calls run in the validator's sandbox (subnet.validator.sandbox: worker processes with a CPU,
memory and wall budget per call), never on the event loop. A miner that times out, refuses or
breaks at a step, or whose call raises or overruns its budget (status ``tool_error``), fails that
episode (recorded with the reason); anything else that goes wrong while one miner's episode is
played or checked is that episode's failure too, never the round's. The others go on. The
result is one ``responses`` row per miner and episode: the episode's category, verdict and score
(``tasks.episodes.checking.check_episode``; a single-step one, ``Episode.single_step``, is one
request judged by ``scoring.check``), and its transcript, bounded in size.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from scoring import function_of
from scoring.checking import check
from subnet.protocol import ChatCompletionRequest
from subnet.transport import MinerTarget, QueryResult, QueryStatus, QueryTarget
from subnet.validator.request import build_request
from subnet.validator.rows import Outcome, ResponseRow
from subnet.validator.sandbox import Sandbox, SandboxedRunner, SandboxError
from subnet.validator.transcripts import EpisodeTranscript
from tasks.episodes import Episode, agent_step
from tasks.episodes.checking import check_episode
from tasks.episodes.runner import EpisodeRunner, Transcript

__all__ = ["EpisodeLimits", "EpisodePlayer", "MinerLike", "StepQuerier"]

log = logging.getLogger(__name__)

#: The status of an episode that failed in its tools (one raised, or ran past its budget) or in
#: anything else of the validator's own (a checker that raised): the miner's failure alone.
TOOL_ERROR = "tool_error"

#: The state recorded for a turn whose play stopped before its end: never a fingerprint (those are
#: JSON objects), so the checker judges the turn from the transcript and replays nothing itself.
UNRECORDED_STATE = "(not recorded: play stopped in this turn)"


@dataclass(frozen=True)
class EpisodeLimits:
    deadline_s: float = 120.0
    max_tokens: int | None = 512


class _StepFailed(RuntimeError):
    """A step got no usable answer; ``status`` is the transport's word for why."""

    def __init__(self, status: str, detail: str) -> None:
        super().__init__(f"{status}: {detail}" if detail else status)
        self.status = status


class StepQuerier(Protocol):
    """Sends one step's request (subnet.transport.MinerClient, or the evaluation's endpoint)."""

    async def query(self, target: QueryTarget, request: ChatCompletionRequest) -> QueryResult: ...


class MinerLike(Protocol):
    """Whose episodes a row records (a metagraph neuron)."""

    @property
    def hotkey(self) -> str: ...

    @property
    def uid(self) -> int: ...


class EpisodePlayer:
    """Plays a miner's episodes and hands each result row to ``add``."""

    def __init__(
        self,
        querier: StepQuerier,
        limits: EpisodeLimits,
        add: Callable[[ResponseRow], None],
        on_response: Callable[[str], None] | None = None,
        observer: Callable[[str, Any, Any, None], None] | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        """``observer(hotkey, episode, variant, None)`` hears of each episode before it is played
        (simulations and audits; the single-turn observer with no request). ``sandbox``: where
        the tools run; None runs them in this process (tests and tools; the validator node
        always passes its sandbox)."""
        self.sandbox = sandbox
        self.querier = querier
        self.limits = limits
        self.add = add
        self.on_response = on_response
        self.observer = observer

    async def play_miner(
        self,
        round_id: int,
        task_ids: dict[str, int],
        miner: MinerLike,
        target: QueryTarget,
        episodes: list[tuple[Episode, Episode]],
    ) -> list[tuple[str, float]]:
        """Every (episode, this miner's variant), one after the other, each row handed to ``add``:
        (status, seconds) each."""
        outcomes = []
        for original, episode in episodes:
            if self.observer is not None:
                self.observer(miner.hotkey, original, episode, None)
            outcome = await self.play(episode, target)
            self.add(ResponseRow(round_id, task_ids[episode.id], miner.hotkey, miner.uid, outcome))
            if self.on_response is not None:
                self.on_response(outcome.status)
            outcomes.append((outcome.status, outcome.latency_s))
        return outcomes

    async def play(self, episode: Episode, target: QueryTarget) -> Outcome:
        """One episode (a miner's variant) played against ``target`` and judged; whatever goes wrong
        in the validator's own code with it is this episode's failure (a round's, or an evaluation's
        with no round at all, goes on)."""
        try:
            return await self._play(episode, target)
        except Exception as error:  # the validator's own failure with this episode: its alone
            log.warning("episode %s against %s failed in the validator", episode.id, _who(target))
            return _failed(episode, f"validator: {type(error).__name__}: {str(error)[:200]}")

    async def _play(self, episode: Episode, target: QueryTarget) -> Outcome:
        digests: list[str] = []
        latencies: list[float] = []
        failure: list[_StepFailed] = []
        tool_failed = False

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
        if episode.single_step:
            task = agent_step(episode)
            try:
                async with asyncio.timeout(self.limits.deadline_s):
                    answer = await ask(task.messages, task.tools)
                verdict = check(answer, [function_of(tool) for tool in task.tools], task.expected, "simple")
            except (_StepFailed, TimeoutError):
                answer, verdict = None, None
            played = EpisodeTranscript.single_call(answer, digests, latencies)
        else:
            runner = (
                EpisodeRunner(episode, ask)
                if self.sandbox is None
                else SandboxedRunner(episode, ask, self.sandbox)
            )
            try:
                async with asyncio.timeout(self.limits.deadline_s):
                    transcript = await runner.play()
            except TimeoutError:
                transcript = _stopped(
                    runner.transcript, f"deadline: the episode took more than {self.limits.deadline_s:g} s"
                )
            except Exception as error:  # a tool raised or overran (sandbox.SandboxError), or worse
                transcript = _stopped(runner.transcript, _tool_failure(error))
                tool_failed = True
            finally:
                if isinstance(runner, SandboxedRunner):
                    runner.close()
            verdict = check_episode(transcript, episode)
            played = EpisodeTranscript.played(transcript, digests, latencies)
        if tool_failed:
            status = TOOL_ERROR
        elif failure:
            status = failure[-1].status
        elif verdict is None or (transcript is not None and transcript.failed):
            status = "timeout"  # the episode's deadline
        else:
            status = "ok"
        valid = bool(verdict and verdict.valid)
        error_type = (verdict.error_type if verdict else "multi_turn:no_answer") if not valid else None
        record = played.stored()
        return Outcome(
            category=episode.category,
            status=status,
            latency_s=time.perf_counter() - started,
            error=str(failure[-1])[:1000] if failure else (transcript.failed if transcript else None),
            valid=valid,
            error_type=error_type,
            score=float(verdict.score) if verdict else 0.0,
            components=dict(verdict.components) if verdict else {},
            transcript=record,
        )


def _tool_failure(error: Exception) -> str:
    if isinstance(error, SandboxError):
        return str(error)[:500]
    return f"tool error: {type(error).__name__}: {str(error)[:200]}"


def _stopped(transcript: Transcript, why: str) -> Transcript:
    """The transcript of an episode whose play stopped early: ``failed`` says why, the turn it
    stopped in failed, and every turn has a state (so the checker never replays the miner's
    calls in this process, where a hostile call would run on the event loop)."""
    transcript.failed = why
    if transcript.turns:
        transcript.turns[-1].ended = "failed"
    for turn in transcript.turns:
        if turn.state is None:
            turn.state = UNRECORDED_STATE
    return transcript


def _failed(episode: Episode, why: str) -> Outcome:
    """The outcome of an episode that failed in the validator's own code: score 0, the reason kept."""
    return Outcome.failure(
        episode.category,
        TOOL_ERROR,
        why,
        "multi_turn:no_answer",
        transcript=EpisodeTranscript.stopped(why).to_json(),
    )


def _who(target: QueryTarget) -> str:
    return f"miner uid {target.uid}" if isinstance(target, MinerTarget) else "the endpoint"
