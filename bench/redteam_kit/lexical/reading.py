"""A request read with one offered tool: clauses, values assigned to parameters, what the tool's text says
unasked.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

from tasks.answers import reference_calls
from tasks.builtin import JOINERS
from tasks.spec import openai_tool
from tasks.value_generators import (
    ListOf,
)

from .finders import (
    _QUOTED_RE,
    _dates,
    _finder,
    _generic_finder,
    _numbers,
    _taken_back,
    _times,
    _unused_items,
)
from .tools import _calibration_round, _described, _resolve, _Slot, _Tool
from .words import Finder, _Find, _function, _idf, _library, _request, _words


@cache
def _calibration() -> tuple[dict[str, float], float, float]:
    """What the public generator teaches about offered tools that are not the answer, learned
    here from a round it draws (any miner can draw rounds, with their gold answers):

    per word of a tool's name and description that the request does NOT say, the log-odds that
    the tool is still the one to call (a lookalike's "checks whether ... would be accepted",
    "estimates the cost", "sets a reminder ... later" are never the answer unless asked for);
    and the score under which a tool is not the answer (below 99% of the answers' scores)."""
    gold: Counter[str] = Counter()
    other: Counter[str] = Counter()
    samples: list[tuple[frozenset[str], bool]] = []
    for shown in _calibration_round():
        said = set(_plain_words(_request(shown.messages)))
        answers = {name for name, _ in reference_calls(shown.expected)}
        for tool in shown.tools:
            function = _function(tool)
            unsaid = _described(function) - said
            is_gold = str(function.get("name", "")) in answers
            (gold if is_gold else other).update(unsaid)
            samples.append((unsaid, is_gold))
    golds = max(1, sum(is_gold for _, is_gold in samples))
    others = max(1, len(samples) - golds)
    weights = {
        word: math.log((gold[word] + 0.5) / golds) - math.log((other[word] + 0.5) / others)
        for word in set(gold) | set(other)
    }
    unseen = 0.0
    scores = sorted(sum(weights.get(w, unseen) for w in unsaid) for unsaid, is_gold in samples if is_gold)
    floor = scores[len(scores) // 100] - 1.0 if scores else -math.inf
    return weights, unseen, floor


def _unsaid_score(tool: _Tool, said: set[str]) -> float:
    """The learned log-odds, over what the tool's description says and the request does not,
    that the tool is the one to call (see ``_calibration``)."""
    weights, unseen, _ = _calibration()
    return sum(weights.get(w, unseen) for w in tool.described if w not in said)


_CUT = re.compile(
    "|".join(
        [re.escape(j) for j in JOINERS]
        + [r"(?<=[.!?])\s+(?=[A-Z])", r";\s+(?:plus|and|also|then)\b", r",? and then\b", r"\bAlso,", r"\n+"]
    )
)


def _clauses(text: str) -> list[tuple[int, int]]:
    quoted = [(m.start(), m.end()) for m in _QUOTED_RE.finditer(text)]
    cuts = [0]
    for m in _CUT.finditer(text):
        if m.start() >= cuts[-1] and not any(s < m.start() < e for s, e in quoted):
            cuts.extend((m.start(), m.end()))
    cuts.append(len(text))
    spans = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    return [(s, e) for s, e in spans if text[s:e].strip()]


@lru_cache(maxsize=4096)
def _value_spans(text: str) -> list[tuple[int, int]]:
    """Where value-looking spans of ``text`` lie (numbers, dates, times, quotes)."""
    spans = [(s, e) for s, e, _ in _numbers(text)] + [(f.start, f.end) for f in _dates(text) + _times(text)]
    return sorted(spans + [(m.start(), m.end()) for m in _QUOTED_RE.finditer(text)])


def _context_words(
    text: str, start: int, end: int, spans: list[tuple[int, int]]
) -> tuple[list[str], list[str]]:
    """The words before a value (back to the previous value, at most five) and the two after it
    (up to the next value): the words that say what the value is for."""
    floor = max([e for _, e in spans if e <= start] + [max(0, start - 60)])
    ceiling = min([s for s, _ in spans if s >= end] + [end + 30])
    said = text[floor:start]
    if _NAMED_AFTER:
        # A list ("X for the scale wanted - scale of the value Y"): the name after the last break.
        cut = list(_LIST_BREAK.finditer(said))
        if cut and _words(said[cut[-1].end() :]):
            said = said[cut[-1].end() :]
    return _words(said)[-6:], _words(text[end:ceiling])[:2]


_LIST_BREAK = re.compile(r"\s-\s|\s/\s|;\s")


_FOR_THE = re.compile(r"\s+(?:for|as) (?:the |my |our )?(?=[a-z])", re.IGNORECASE)
_NAME_END = re.compile(r"[.;:!?/,()]|\s-\s|\s(?:and|should|is|was)\s")
#: Read a parameter's name said after its value ("X for the Y"); False: before it only.
_NAMED_AFTER = True


def _named_after(text: str, end: int) -> list[str]:
    """The words of "for the <name>" right after a value (up to the next break), else none."""
    m = _FOR_THE.match(text, end)
    if m is None:
        return []
    stop = _NAME_END.search(text, m.end(), m.end() + 60)
    return _words(text[m.end() : stop.start() if stop else m.end() + 60])[:5]


@dataclass(slots=True)
class _Reading:
    """One group read as one tool: its arguments, what is missing, how well it fits."""

    tool: _Tool
    arguments: dict[str, Any] = field(default_factory=dict)
    missing: list[_Slot] = field(default_factory=list)
    score: float = 0.0


#: A value right after "e.g." is a description's example echoed, not a value of the request.
_EXAMPLE = re.compile(r"\be\.? ?g\.?,? ?$|\blike $", re.IGNORECASE)


def _fill(tool: _Tool, text: str) -> _Reading:
    reading = _Reading(tool)
    candidates: list[tuple[float, int, _Find]] = []
    # Slots that read values the same way: the templates state those in library order.
    peers: dict[int, list[int]] = {}
    for index, slot in enumerate(tool.slots):
        if slot.gen is not None:
            peers.setdefault(id(_finder(slot.gen)), []).append(index)
    reads: list[tuple[int, Finder, list[_Find]]] = []
    for index, slot in enumerate(tool.slots):
        finder = _finder(slot.gen) if slot.gen is not None else _generic_finder(slot)
        finds = [
            f
            for f in finder(text)
            if not _EXAMPLE.search(text[max(0, f.start - 8) : f.start])
            and not _taken_back(text, f.start, f.end)
        ]
        reads.append((index, finder, finds))
    # Context stops at the neighbouring values: numbers, dates, quotes, and any value a slot reads.
    spans = sorted({*_value_spans(text), *((f.start, f.end) for _, _, finds in reads for f in finds)})
    for index, finder, finds in reads:
        slot = tool.slots[index]
        group = peers.get(id(finder), [index])
        rank = sorted(group, key=lambda i: tool.slots[i].order).index(index) if len(group) > 1 else 0
        positions = sorted({f.start for f in finds})
        for f in finds:
            before, after = _context_words(text, f.start, f.end, spans)
            named_after = _named_after(text, f.end) if _NAMED_AFTER else []
            near = sum(
                _idf(w) * (1.0 if i >= len(before) - 3 else 0.6) * (0.5 if named_after else 1.0)
                for i, w in enumerate(before)
                if w in slot.context
            )
            # "kelvin for the scale of the value": the parameter named right after its value.
            near += sum(_idf(w) for w in named_after if w in slot.context)
            near += 0.5 * sum(_idf(w) for w in after if w in slot.after)
            near += 0.3 * sum(_idf(w) for w in after if w in slot.context and w not in slot.after)
            if slot.role and before and before[-1] == slot.role:
                near += 3.0
            prior = -0.5 * abs(positions.index(f.start) - rank) if len(group) > 1 else 0.0
            candidates.append((f.strength + 0.6 * near + prior, index, f))
    # Lists last: they take the items of their type that no single-valued parameter took.
    is_list = [isinstance(slot.gen, ListOf) for slot in tool.slots]
    candidates.sort(key=lambda c: (is_list[c[1]], -c[0], c[2].start))
    used: list[tuple[int, int]] = []
    filled: set[int] = set()
    value_score = 0.0
    for score, index, found in candidates:
        taken: _Find | None = found
        if is_list[index] and found.spans:
            taken = _unused_items(found, used)
        if (
            taken is None
            or index in filled
            or any(s < ue and us < e for s, e in taken.cover() for us, ue in used)
        ):
            continue
        filled.add(index)
        used.extend(taken.cover())
        reading.arguments[tool.slots[index].name] = taken.value
        value_score += min(score, 6.0)
    reading.missing = [slot for i, slot in enumerate(tool.slots) if slot.required and i not in filled]
    reading.score = value_score
    return reading


def _vague_said(slot: _Slot, text: str) -> bool:
    vague = getattr(slot.gen, "vague", ()) or ()
    lowered = text.lower()
    return any(phrase.lower() in lowered for phrase in vague)


def _plain_words(text: str) -> list[str]:
    """The words of ``text`` outside its values and quotes: what it asks for, not with what."""
    kept, last = [], 0
    for start, end in _value_spans(text):
        if start >= last:
            kept.append(text[last:start])
            last = end
    kept.append(text[last:])
    return _words(" ".join(kept))


@cache
def _library_tool(index: int) -> _Tool:
    """Library tool ``index`` as if offered unchanged."""
    spec = _library()[0][index].spec
    return _resolve(json.dumps(_function(openai_tool(spec)), sort_keys=True))
