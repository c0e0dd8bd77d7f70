"""An episode's transcript as the validator keeps it: a typed record, stored as JSON under a cap.

`EpisodeTranscript` is the schema: built once where an episode is played (`played`, `agent_step`),
written as JSON (`to_json`, the stored form), bounded (`bound_transcript`, below) and read back by
whoever shows it (`EpisodeTranscript.from_json`: any stored form, today's, a trimmed one and the
older ones, never an exception). Its parts: `TurnEntry` (how a turn ended, the state after it, its
steps), `StepEntry` (the miner's answer, its text, the reason the step failed, its latency, its
calls), `CallEntry` (the call as the miner wrote it, in the environment's names, what came back,
whether it was forbidden or changed the state). Read back, any value may be a `Trimmed` marker
(what the cap cut), and a part that is not the shape it should be is kept as `Unreadable`.

A played episode's record (``EpisodeTranscript.played``: the runner's transcript plus the request
digests and latencies) can be larger than a database row should hold: a long-context episode's state
fingerprints alone are tens of thousands of characters each, and a hostile miner's answers and
the observations its calls provoke are as large as the transport lets them be. So the record is
cut by design, in this order, each step only as far as needed to fit ``TRANSCRIPT_CAP``
characters of JSON:

1. the per-turn state fingerprints (the checker has compared them already): a head, their length
   and their SHA-256, which still identifies the state against a replay of the reference;
2. the calls' observations: to 2,000 characters, then 500, then 100, then none (the length kept);
3. the miner's answers (and text answers, and the reason play stopped), then the calls' arguments
   and names: to 2,000 characters, then 500, then 100;
4. only then whole steps, from the end, each turn keeping its first ones.

What the miner called, in what order, with what outcome, is the last thing to go; a transcript
is never stored as a cut blob of text. Each trimmed value becomes ``{"trimmed": what, "chars":
its length, "head": its start}`` (a fingerprint adds ``sha256``), and the record says what was
trimmed under ``"trimmed"``: the counts, the record's length before, and the cap.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tasks.episodes.runner import Transcript

__all__ = [
    "TRANSCRIPT_CAP",
    "AgentStepEntry",
    "CallEntry",
    "EpisodeTranscript",
    "StepEntry",
    "Trimmed",
    "TurnEntry",
    "Unreadable",
    "bound_transcript",
    "transcript_chars",
]

#: A transcript is stored up to this many characters of JSON.
TRANSCRIPT_CAP = 64 * 1024

_UNBOUNDED = 1 << 62
_STATE_HEAD = 200
#: About what a marker's own keys take: nothing shorter than this beyond the head is trimmed.
_MARKER_CHARS = 64


# -- the schema ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Trimmed:
    """A value the cap cut (see below): what kind it was, its length in characters, its start; a
    state fingerprint keeps its SHA-256."""

    what: str
    chars: int
    head: str
    sha256: str | None = None

    @classmethod
    def read(cls, value: object) -> Trimmed | None:
        if not isinstance(value, dict) or not isinstance(value.get("trimmed"), str):
            return None
        chars, head, sha256 = value.get("chars"), value.get("head"), value.get("sha256")
        return cls(
            value["trimmed"],
            chars if isinstance(chars, int) else 0,
            head if isinstance(head, str) else "",
            sha256 if isinstance(sha256, str) else None,
        )


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A stored part that is not the shape the schema gives it (a record trimmed whole, or written
    by hand): shown as it is, never read into."""

    value: object


@dataclass(frozen=True, slots=True)
class CallEntry:
    """One call of a step. ``name`` and ``arguments`` as the miner wrote them (its variant's
    names), ``env_name`` and ``env_arguments`` as the environment took them (None: the call never
    reached it), ``observation`` what came back, ``unsafe`` why the call was forbidden."""

    name: object = "?"
    arguments: object = None
    env_name: object = None
    env_arguments: object = None
    observation: object = None
    unsafe: object = None
    mutates: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "arguments": self.arguments,
            "env_name": self.env_name,
            "env_arguments": self.env_arguments,
            "observation": self.observation,
            "unsafe": self.unsafe,
            "mutates": self.mutates,
        }

    @classmethod
    def read(cls, value: object) -> CallEntry | Unreadable:
        if not isinstance(value, dict):
            return Unreadable(value)
        return cls(
            name=value.get("name", "?"),
            arguments=value.get("arguments"),
            env_name=value.get("env_name"),
            env_arguments=value.get("env_arguments"),
            observation=value.get("observation"),
            unsafe=value.get("unsafe"),
            mutates=bool(value.get("mutates")),
        )


@dataclass(frozen=True, slots=True)
class StepEntry:
    """One request and its answer: the answer (the assistant message as JSON, or a string), its
    text, why the step failed, its latency (None when not recorded) and its calls."""

    answer: object = None
    text: object = None
    error: object = None
    latency_s: float | None = None
    calls: tuple[CallEntry | Unreadable, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "answer": self.answer,
            "text": self.text,
            "error": self.error,
            "latency_s": self.latency_s,
            "calls": [call.value if isinstance(call, Unreadable) else call.to_json() for call in self.calls],
        }

    @classmethod
    def read(cls, value: object) -> StepEntry | Unreadable:
        if not isinstance(value, dict):
            return Unreadable(value)
        latency = value.get("latency_s")
        return cls(
            answer=value.get("answer"),
            text=value.get("text"),
            error=value.get("error"),
            latency_s=float(latency) if isinstance(latency, int | float) else None,
            calls=tuple(CallEntry.read(call) for call in _list(value.get("calls"))),
        )


@dataclass(frozen=True, slots=True)
class TurnEntry:
    """What the miner did in one turn: how it ended ("text", "step_limit", "failed"), the
    environment's state after it (a fingerprint, or a `Trimmed` one), its steps, and how many
    steps the cap left out from the end."""

    ended: str = "?"
    state: object = None
    steps: tuple[StepEntry | Unreadable, ...] = ()
    steps_trimmed: int = 0

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "ended": self.ended,
            "state": self.state,
            "steps": [step.value if isinstance(step, Unreadable) else step.to_json() for step in self.steps],
        }
        if self.steps_trimmed:
            out["steps_trimmed"] = self.steps_trimmed
        return out

    @classmethod
    def read(cls, value: object) -> TurnEntry | Unreadable:
        if not isinstance(value, dict):
            return Unreadable(value)
        trimmed = value.get("steps_trimmed")
        return cls(
            ended=str(value.get("ended", "?")),
            state=value.get("state"),
            steps=tuple(StepEntry.read(step) for step in _list(value.get("steps"))),
            steps_trimmed=trimmed if isinstance(trimmed, int) else 0,
        )


@dataclass(frozen=True, slots=True)
class AgentStepEntry:
    """An ``agent_step`` episode's one answer (None: none came)."""

    answer: object = None


@dataclass(frozen=True, slots=True)
class EpisodeTranscript:
    """An episode as one miner played it.

    ``turns`` (a multi-turn episode) or ``agent_step`` (a single predicted call); ``failed``: why
    play stopped early, if it did; ``request_digests``: the SHA-256 of every request sent (None
    when not recorded); ``latencies_s``: each step's; ``trimmed``: what the cap cut (None:
    nothing); ``truncated_text``: a transcript stored before issue 26, as the start of its JSON.
    """

    turns: tuple[TurnEntry | Unreadable, ...] = ()
    agent_step: AgentStepEntry | None = None
    failed: object = None
    request_digests: tuple[str, ...] | None = None
    latencies_s: tuple[float, ...] = ()
    trimmed: dict[str, object] | None = None
    truncated_text: str | None = None

    @classmethod
    def played(
        cls, transcript: Transcript, digests: Sequence[str], latencies: Sequence[float]
    ) -> EpisodeTranscript:
        """The record of a multi-turn episode's play (the runner's transcript)."""
        return cls(
            turns=tuple(
                TurnEntry(
                    ended=turn.ended,
                    state=turn.state,
                    steps=tuple(
                        StepEntry(
                            # An answer is the message's JSON, a string, or nothing: anything else
                            # (a fake's object) is stored as its text.
                            answer=step.answer
                            if isinstance(step.answer, str | dict | type(None))
                            else str(step.answer),
                            text=step.text,
                            error=step.error,
                            latency_s=round(step.latency_s, 4),
                            calls=tuple(
                                CallEntry(
                                    name=call.name,
                                    arguments=call.arguments,
                                    env_name=call.env_name,
                                    env_arguments=call.env_arguments,
                                    observation=call.observation,
                                    unsafe=call.unsafe,
                                    mutates=call.mutates,
                                )
                                for call in step.calls
                            ),
                        )
                        for step in turn.steps
                    ),
                )
                for turn in transcript.turns
            ),
            failed=transcript.failed,
            request_digests=tuple(digests),
            latencies_s=tuple(round(latency, 4) for latency in latencies),
        )

    @classmethod
    def single_call(
        cls, answer: object, digests: Sequence[str], latencies: Sequence[float]
    ) -> EpisodeTranscript:
        """The record of an ``agent_step`` episode: its one answer (None: none came)."""
        return cls(
            agent_step=AgentStepEntry(answer),
            request_digests=tuple(digests),
            latencies_s=tuple(round(latency, 4) for latency in latencies),
        )

    @classmethod
    def stopped(cls, why: str) -> EpisodeTranscript:
        """The record of an episode the validator could not play: the reason, no turns."""
        return cls(failed=why[:1000])

    def to_json(self) -> dict[str, Any]:
        """The stored form (the ``transcript`` column), before the cap."""
        out: dict[str, Any] = {}
        if self.truncated_text is not None:
            out.update(truncated=True, text=self.truncated_text)
        elif self.agent_step is not None:
            out["agent_step"] = {"answer": self.agent_step.answer}
        else:
            out["failed"] = self.failed
            out["turns"] = [
                turn.value if isinstance(turn, Unreadable) else turn.to_json() for turn in self.turns
            ]
        if self.request_digests is not None:
            out["request_digests"] = list(self.request_digests)
            out["latencies_s"] = list(self.latencies_s)
        if self.trimmed is not None:
            out["trimmed"] = dict(self.trimmed)
        return out

    @classmethod
    def from_json(cls, stored: object) -> EpisodeTranscript | None:
        """A stored transcript read back (None: none was stored): any form the validator has
        written, trimmed or not, the pre-issue-26 cut text too; a value of the wrong shape is kept
        as it is (`Unreadable`, or a field's default), never raised on."""
        if not isinstance(stored, dict):
            return None
        digests = stored.get("request_digests")
        latencies = stored.get("latencies_s")
        trimmed = stored.get("trimmed")
        text = stored.get("text", "")
        step = stored.get("agent_step")
        return cls(
            turns=tuple(TurnEntry.read(turn) for turn in _list(stored.get("turns"))),
            agent_step=(
                AgentStepEntry(step.get("answer") if isinstance(step, dict) else None)
                if "agent_step" in stored
                else None
            ),
            failed=stored.get("failed"),
            request_digests=(tuple(str(digest) for digest in digests) if isinstance(digests, list) else None),
            latencies_s=tuple(
                float(latency) for latency in _list(latencies) if isinstance(latency, int | float)
            ),
            trimmed=dict(trimmed) if isinstance(trimmed, dict) else None,
            truncated_text=(text if isinstance(text, str) else str(text))
            if stored.get("truncated")
            else None,
        )

    def stored(self, cap: int | None = None) -> dict[str, Any]:
        """The JSON the database stores: `to_json`, bounded to ``cap`` characters (see below)."""
        return bound_transcript(self.to_json(), TRANSCRIPT_CAP if cap is None else cap)


# -- the cap ------------------------------------------------------------------------------------


def transcript_chars(record: object) -> int:
    """The length of ``record`` as the database stores it (JSON)."""
    return len(json.dumps(record, ensure_ascii=False, default=str))


@dataclass(frozen=True)
class _Level:
    """How far one pass trims: characters kept per value of each kind, and steps kept per turn."""

    states: int = _UNBOUNDED
    observations: int = _UNBOUNDED
    answers: int = _UNBOUNDED
    calls: int = _UNBOUNDED
    steps: int = _UNBOUNDED


_LEVELS = (
    _Level(states=_STATE_HEAD),
    *(_Level(states=_STATE_HEAD, observations=size) for size in (2000, 500, 100, 0)),
    *(_Level(states=_STATE_HEAD, observations=0, answers=size) for size in (2000, 500, 100)),
    *(_Level(states=_STATE_HEAD, observations=0, answers=100, calls=size) for size in (2000, 500, 100)),
)


def bound_transcript(record: dict[str, Any], cap: int = TRANSCRIPT_CAP) -> dict[str, Any]:
    """``record`` when its JSON fits ``cap`` characters, else a trimmed copy that does (see the
    module docstring); ``record`` itself is never changed."""
    chars = transcript_chars(record)
    if chars <= cap:
        return record
    trimmer = _Trimmer(chars, cap)
    # What each kind of value weighs in all: a pass that cannot save enough is not even built
    # (a hostile record of tens of megabytes costs a few passes, not one per level).
    weights: Counter[str] = Counter()
    trimmer.build(record, _Level(0, 0, 0, 0), weights)
    for level in _LEVELS:
        saved_at_most = sum(weights[kind] for kind in _KINDS if getattr(level, kind) < _UNBOUNDED)
        if chars - saved_at_most > cap:
            continue
        trimmed = trimmer.build(record, level)
        if transcript_chars(trimmed) <= cap:
            return trimmed
    # Too many steps to keep even their calls' names: keep each turn's first steps.
    most = max((len(_list(turn.get("steps"))) for turn in _turns(record)), default=0)
    low, high = 0, most
    best = trimmer.build(record, _Level(0, 0, 100, 100, 0))
    while low < high:  # the most steps per turn that fit
        middle = (low + high + 1) // 2
        candidate = trimmer.build(record, _Level(0, 0, 100, 100, middle))
        if transcript_chars(candidate) <= cap:
            best, low = candidate, middle
        else:
            high = middle - 1
    if transcript_chars(best) <= cap:
        return best
    # Only a record of impossible shape gets here (thousands of turns): say what it was.
    return {
        "trimmed": {"everything": True, "chars": chars, "cap": cap},
        "failed": None if record.get("failed") is None else str(record["failed"])[:100],
    }


#: The kinds of value a level trims (its fields), and the weight each kind's values are counted in.
_KINDS = ("states", "observations", "answers", "calls")


class _Trimmer:
    """Builds trimmed copies of one record; each value's JSON is written once, however many
    passes look at it."""

    def __init__(self, chars: int, cap: int) -> None:
        self.chars, self.cap = chars, cap
        # By id: every value looked at belongs to the record, which outlives the trimmer.
        self._texts: dict[int, str] = {}
        self._sizes: dict[int, int] = {}
        self._weights: Counter[str] | None = None

    def text(self, value: object) -> str:
        if isinstance(value, str):
            return value
        found = self._texts.get(id(value))
        if found is None:
            found = self._texts[id(value)] = json.dumps(value, ensure_ascii=False, default=str)
        return found

    def size(self, value: object) -> int:
        """The characters ``value`` takes in the record's JSON (a string's quotes and escapes too)."""
        if not isinstance(value, str):
            return len(self.text(value))
        found = self._sizes.get(id(value))
        if found is None:
            found = self._sizes[id(value)] = len(json.dumps(value, ensure_ascii=False))
        return found

    def build(
        self, record: dict[str, Any], level: _Level, weights: Counter[str] | None = None
    ) -> dict[str, Any]:
        """A copy of ``record`` trimmed to ``level``; with ``weights``, adds up each kind's
        characters instead of counting what was trimmed."""
        counts: Counter[str] = Counter()
        self._weights = weights
        out = dict(record)
        if "turns" in record:
            out["turns"] = [self._turn(turn, level, counts) for turn in _list(record.get("turns"))]
        if isinstance(record.get("agent_step"), dict):
            step = dict(record["agent_step"])
            if "answer" in step:
                step["answer"] = self._cut(step["answer"], level.answers, "answers", counts)
            out["agent_step"] = step
        if record.get("failed") is not None:
            out["failed"] = self._cut(record["failed"], level.answers, "answers", counts)
        out["trimmed"] = {**dict(sorted(counts.items())), "chars": self.chars, "cap": self.cap}
        return out

    def _turn(self, turn: object, level: _Level, counts: Counter[str]) -> object:
        if not isinstance(turn, dict):
            return self._cut(turn, level.answers, "answers", counts)
        out = dict(turn)
        state = turn.get("state")
        if isinstance(state, str) and len(state) > level.states + _MARKER_CHARS:
            if self._weights is not None:
                self._weights["states"] += self.size(state)
            out["state"] = {
                "trimmed": "state",
                "chars": len(state),
                "sha256": hashlib.sha256(state.encode("utf-8", "surrogatepass")).hexdigest(),
                "head": state[: level.states],
            }
            counts["states"] += 1
        steps = _list(turn.get("steps"))
        if len(steps) > level.steps:
            counts["steps"] += len(steps) - level.steps
            out["steps_trimmed"] = len(steps) - level.steps
            steps = steps[: level.steps]
        if "steps" in turn:
            out["steps"] = [self._step(step, level, counts) for step in steps]
        return out

    def _step(self, step: object, level: _Level, counts: Counter[str]) -> object:
        if not isinstance(step, dict):
            return self._cut(step, level.answers, "answers", counts)
        out = dict(step)
        for key in ("answer", "text", "error"):
            if step.get(key) is not None:
                out[key] = self._cut(step[key], level.answers, "answers", counts)
        if "calls" in step:
            out["calls"] = [self._call(call, level, counts) for call in _list(step.get("calls"))]
        return out

    def _call(self, call: object, level: _Level, counts: Counter[str]) -> object:
        if not isinstance(call, dict):
            return self._cut(call, level.calls, "calls", counts)
        out = dict(call)
        if "observation" in call:
            out["observation"] = self._cut(call["observation"], level.observations, "observations", counts)
        for key in ("name", "arguments", "env_name", "env_arguments", "unsafe"):
            if call.get(key) is not None:
                out[key] = self._cut(call[key], level.calls, "calls", counts)
        return out

    def _cut(self, value: object, keep: int, kind: str, counts: Counter[str]) -> object:
        """``value``, or a marker with its start when its JSON (or its text) is longer than ``keep``."""
        if keep >= _UNBOUNDED:
            return value
        text = self.text(value)
        if len(text) <= keep + _MARKER_CHARS:  # a marker would be no shorter than what it replaces
            return value
        if self._weights is not None:
            self._weights[kind] += self.size(value)
        counts[kind] += 1
        return {"trimmed": kind, "chars": len(text), "head": text[:keep]}


def _turns(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [turn for turn in _list(record.get("turns")) if isinstance(turn, dict)]


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []
