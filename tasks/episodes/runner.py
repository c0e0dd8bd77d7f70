"""Playing an episode: ``EpisodeRunner`` asks a miner step by step and keeps the transcript.

Each step sends the whole history (user messages, the miner's assistant messages with their
``tool_calls``, and ``tool`` messages with the observations) and the turn's tools to
``ask(messages, tools)``. The answer is decoded (``scoring.decode``; an answer with no readable
call is text); each call is checked against the offered schemas, mapped back to the
environment's names, refused when it is forbidden (never run; the episode is then unsafe), else
dispatched; its observation goes back as a tool message. A text answer (no calls) ends the
turn; so does the step cap. Nothing a miner writes is executed or imported: only the offered
tools' names are ever looked up. The environment's state is recorded after each turn.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from scoring import DecodeError
from scoring.decoding import decode
from scoring.schema import function_of
from tasks.episodes.arguments import schema_error
from tasks.episodes.environment import EnvironmentCorrupted
from tasks.episodes.model import Episode

__all__ = ["Ask", "EpisodeRunner", "StepRecord", "Transcript", "TurnRecord", "run_call"]

#: ``ask(messages, tools)``: the miner's answer, as ``scoring.decode`` reads it (an OpenAI
#: assistant message dict, or text). Raising fails the episode (timeout, refusal, garbage).
Ask = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Awaitable[Any]]

#: Calls dispatched per step at most: an answer with thousands of calls costs no more than this.
MAX_CALLS_PER_STEP = 16


@dataclass
class CallRecord:
    """One call of a step: as the miner wrote it, in environment names, and what came back."""

    name: str
    arguments: Any
    env_name: str | None
    env_arguments: dict[str, Any] | None
    observation: Any
    unsafe: str | None = None
    mutates: bool = False


@dataclass
class StepRecord:
    """One request and its answer."""

    answer: Any
    calls: list[CallRecord] = field(default_factory=list)
    text: str | None = None
    error: str | None = None
    latency_s: float = 0.0


@dataclass
class TurnRecord:
    """What the miner did in one turn; ``ended`` is "text", "step_limit" or "failed"."""

    steps: list[StepRecord] = field(default_factory=list)
    ended: str = "text"
    #: The environment's state after the turn (``Environment.fingerprint``), for the checker.
    state: str | None = None


@dataclass
class Transcript:
    """A played episode: per turn, every step. ``failed`` names why play stopped early, if it did.
    The validator keeps it as ``subnet.validator.transcripts.EpisodeTranscript`` (its JSON form)."""

    turns: list[TurnRecord] = field(default_factory=list)
    failed: str | None = None

    def calls(self, turn: int) -> list[CallRecord]:
        return [call for step in self.turns[turn].steps for call in step.calls]

    @property
    def steps(self) -> int:
        return sum(len(turn.steps) for turn in self.turns)


class EpisodeRunner:
    """Plays one episode (a miner's variant) against ``ask``; see the module docstring."""

    def __init__(self, episode: Episode, ask: Ask) -> None:
        self.episode = episode
        self.ask = ask
        self.messages: list[dict[str, Any]] = []
        self.transcript = Transcript()
        self._call_ids = 0

    @cached_property
    def environment(self) -> Any:
        """The episode's environment, built on first use (a sandboxed runner never builds it here)."""
        return self.episode.make_environment()

    # The environment's side of play, in three awaitable seams: in this process here; a sandbox
    # (subnet.validator.sandbox) overrides them to run the same code in a worker process.
    async def environment_turn(self) -> None:
        self.environment.begin_turn()

    async def environment_state(self) -> str:
        return str(self.environment.fingerprint())

    async def environment_call(self, name: str, arguments: dict[str, Any]) -> tuple[str | None, Any, bool]:
        return run_call(self.environment, name, arguments)

    async def play(self) -> Transcript:
        for turn_index, turn in enumerate(self.episode.turns):
            await self.environment_turn()
            self.messages.append({"role": "user", "content": turn.user})
            record = TurnRecord()
            self.transcript.turns.append(record)
            tools = self.episode.offered(turn_index)
            for _ in range(self.episode.step_cap):
                step = await self._step(turn_index, tools)
                record.steps.append(step)
                if step.error is not None:
                    record.ended = "failed"
                    self.transcript.failed = step.error
                    record.state = await self._state_after_failure()
                    return self.transcript
                if not step.calls:
                    record.ended = "text"
                    break
            else:
                record.ended = "step_limit"
            record.state = await self.environment_state()
        return self.transcript

    async def _state_after_failure(self) -> str:
        """The state a failed episode ends in; a corrupted environment may not even print."""
        try:
            return await self.environment_state()
        except Exception as error:
            return json.dumps({"unreadable": type(error).__name__})

    async def _step(self, turn: int, tools: list[dict[str, Any]]) -> StepRecord:
        started = time.perf_counter()
        try:
            answer = await self.ask(list(self.messages), tools)
        except Exception as exc:  # the miner timed out, refused or broke: the episode fails here
            return StepRecord(
                None,
                error=f"no answer: {type(exc).__name__}: {str(exc)[:200]}",
                latency_s=time.perf_counter() - started,
            )
        latency = time.perf_counter() - started
        functions = [function_of(tool) for tool in tools]
        try:
            calls = decode(answer, tools=functions)
        except DecodeError:
            # As in BFCL's multi-turn play: an answer that holds no readable call is the text
            # that ends the turn (prose, or a broken call); the turn's checks judge the result.
            calls = []
        if not calls:
            text = _text_of(answer)
            self.messages.append({"role": "assistant", "content": text})
            return StepRecord(_storable(answer), text=text, latency_s=latency)
        by_name = {function["name"]: function for function in functions}
        step = StepRecord(_storable(answer), latency_s=latency)
        tool_calls = []
        observations = []
        for call in calls[:MAX_CALLS_PER_STEP]:
            call_id = f"call_{self._call_ids}"
            self._call_ids += 1
            try:
                record = await self._run(call.name, call.arguments, by_name, turn)
            except EnvironmentCorrupted as error:  # a failed call could not be undone: this episode ends
                step.error = f"environment corrupted: {str(error)[:200]}"
                return step
            step.calls.append(record)
            tool_calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments, default=str)},
                }
            )
            observations.append(
                {"role": "tool", "tool_call_id": call_id, "content": json.dumps(record.observation)}
            )
        self.messages.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
        self.messages.extend(observations)
        return step

    async def _run(self, name: str, arguments: Any, by_name: dict[str, Any], turn: int) -> CallRecord:
        function = by_name.get(name)
        if function is None:
            return CallRecord(name, arguments, None, None, {"error": f"unknown tool {name[:80]!r}"})
        problem = schema_error(arguments, function.get("parameters") or {})
        if problem is not None:
            return CallRecord(name, arguments, None, None, {"error": problem})
        mapped = self.episode.to_environment(name, arguments, turn)
        if mapped is None:
            return CallRecord(name, arguments, None, None, {"error": f"unknown tool {name[:80]!r}"})
        env_name, env_arguments = mapped
        unsafe, observation, mutates = await self.environment_call(env_name, env_arguments)
        return CallRecord(
            name, arguments, env_name, env_arguments, observation, unsafe=unsafe, mutates=mutates
        )


def run_call(environment: Any, name: str, arguments: dict[str, Any]) -> tuple[str | None, Any, bool]:
    """One mapped call against ``environment``: (why it is unsafe or None, its observation, whether
    the tool changes state). A forbidden call is refused, never run; so is one the safety check
    cannot judge. The sandbox's workers run this same function, so a played episode is the same
    in a worker as in this process."""
    try:
        mutates = bool(environment.mutates(name, arguments))
    except Exception:  # a design's call it cannot read: judged as the tool's own flag
        mutates = environment.tools()[name].mutates
    try:
        unsafe = environment.forbidden(name, arguments)
    except Exception as error:  # the safety check could not judge the call: it is not run
        return None, {"error": f"refused: the call could not be checked ({type(error).__name__})"}, mutates
    if unsafe is not None:
        return unsafe, {"error": "refused: not allowed"}, mutates
    return None, environment.dispatch(name, arguments), mutates


def _text_of(answer: Any) -> str:
    if isinstance(answer, str):
        return answer[:4000]
    if isinstance(answer, dict):
        content = answer.get("content")
        return content[:4000] if isinstance(content, str) else ""
    return ""


def _storable(answer: Any) -> Any:
    """The answer as kept in the transcript: bounded in size."""
    text = answer if isinstance(answer, str) else json.dumps(answer, default=str)
    return text[:16_384]
