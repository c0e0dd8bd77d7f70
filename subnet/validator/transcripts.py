"""What the validator stores of an episode's transcript: always a transcript, under a cap.

A played episode's record (``tasks.episodes.Transcript.to_dict`` plus the request digests and
latencies) can be larger than a database row should hold: a long-context episode's state
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
from dataclasses import dataclass
from typing import Any

__all__ = ["TRANSCRIPT_CAP", "bound_transcript", "transcript_chars"]

#: A transcript is stored up to this many characters of JSON.
TRANSCRIPT_CAP = 64 * 1024

_UNBOUNDED = 1 << 62
_STATE_HEAD = 200
#: About what a marker's own keys take: nothing shorter than this beyond the head is trimmed.
_MARKER_CHARS = 64


def transcript_chars(record: Any) -> int:
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

    def text(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        found = self._texts.get(id(value))
        if found is None:
            found = self._texts[id(value)] = json.dumps(value, ensure_ascii=False, default=str)
        return found

    def size(self, value: Any) -> int:
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

    def _turn(self, turn: Any, level: _Level, counts: Counter[str]) -> Any:
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

    def _step(self, step: Any, level: _Level, counts: Counter[str]) -> Any:
        if not isinstance(step, dict):
            return self._cut(step, level.answers, "answers", counts)
        out = dict(step)
        for key in ("answer", "text", "error"):
            if step.get(key) is not None:
                out[key] = self._cut(step[key], level.answers, "answers", counts)
        if "calls" in step:
            out["calls"] = [self._call(call, level, counts) for call in _list(step.get("calls"))]
        return out

    def _call(self, call: Any, level: _Level, counts: Counter[str]) -> Any:
        if not isinstance(call, dict):
            return self._cut(call, level.calls, "calls", counts)
        out = dict(call)
        if "observation" in call:
            out["observation"] = self._cut(call["observation"], level.observations, "observations", counts)
        for key in ("name", "arguments", "env_name", "env_arguments", "unsafe"):
            if call.get(key) is not None:
                out[key] = self._cut(call[key], level.calls, "calls", counts)
        return out

    def _cut(self, value: Any, keep: int, kind: str, counts: Counter[str]) -> Any:
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


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
