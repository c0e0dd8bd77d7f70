"""``LexicalMiner``: reads any request by keywords and value formats alone."""

from __future__ import annotations

import json
from typing import Any

from .asides import asked_kinds, kind_words, resolved_events
from .choices import resolved_anchored, resolved_anchored_worded, resolved_choices, resolved_labelled
from .generic import resolved_generic
from .reading import (
    _calibration,
    _clauses,
    _fill,
    _library_tool,
    _plain_words,
    _Reading,
    _unsaid_score,
    _value_spans,
)
from .tools import _resolve, _Tool
from .words import Answer, _function, _library, _overlap, _request
from .worked import (
    _resolved_anchors,
    _resolved_dates,
    _resolved_labels,
    _resolved_references,
    _today,
    _worked_out,
)


class LexicalMiner:
    """Answers any request by keywords and value formats alone: no model, no templates matched."""

    #: Clause words (IDF sum) over which a clause is taken to name a tool.
    OPENS = 4.0
    #: Weight of the learned odds of what an offered tool's description says that the request does not.
    UNSAID = 0.3
    #: Read the choice devices' facts by general English cues where no table frame matches.
    GENERIC = True
    GENERIC_FIRST = False
    #: Context before the request that reads as no whole call joins the request after it.
    LEADING = True
    #: Share of the action's words a lookalike of the asked kind must carry to be made from it.
    MADE_FROM = 0.4

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer:
        offered = [_resolve(json.dumps(_function(t), sort_keys=True)) for t in tools]
        # Choices first: their facts hold day counts and times the date resolution would rewrite.
        said = _request(messages)
        if self.GENERIC_FIRST:
            said = resolved_generic(said, offered)
        said = resolved_labelled(resolved_anchored(resolved_choices(said)))
        if self.GENERIC:
            said = resolved_anchored_worded(said)
        if self.GENERIC and not self.GENERIC_FIRST:
            # References no frame of the tables answered (the facts reworded): general cues.
            said = resolved_generic(said, offered)
        text, unstated = resolved_events(said)
        if unstated:
            return []  # the request refers to a fact the context does not state: a value is missing
        today = _today(messages)
        if today is not None:
            text = _resolved_dates(text, today)
        text = _resolved_anchors(_worked_out(_resolved_labels(_resolved_references(text))))
        for signature in asked_kinds(text):
            # It asks for a lookalike's action ("remind me later to ..."): only that kind's tool
            # made from the action the request reads as answers it; none offered, no call.
            chosen = self._kind_tool(text, offered, signature)
            if chosen is None:
                return []
            offered = chosen
        if not text or not offered:
            return []
        readings: list[tuple[int, _Reading | None]] = []
        leading: int | None = None  # a stretch before any call that reads as no whole call
        for start, end in self._groups(text, offered):
            reading = self._read(text[start:end], offered)
            if readings and (reading is None or reading.missing):
                # Values said after the call they belong to ("... in Bangkok? Fahrenheit please").
                joined = self._read(text[readings[-1][0] : end], offered)
                if joined is not None and not joined.missing:
                    readings[-1] = (readings[-1][0], joined)
                    continue
            if self.LEADING and not readings and (reading is None or reading.missing):
                # Context said before the request ("Also: Elena Patel is off the list. Looking
                # to ..."): it is no call of its own; the request after it decides.
                leading = start if leading is None else leading
                continue
            if leading is not None and (reading is None or reading.missing):
                reading = self._read(text[leading:end], offered)  # it held a value after all
            leading = None
            readings.append((start, reading))
        if leading is not None:
            readings.append((leading, self._read(text[leading:], offered)))
        calls: Answer = []
        for _, found in readings:
            if found is None or found.missing:
                return []  # no tool fits, or a required value is not given: no call at all
            calls.append((found.tool.name, found.arguments))
        return calls

    def _kind_tool(self, text: str, offered: list[_Tool], signature: frozenset[str]) -> list[_Tool] | None:
        """The offered tools with, for the action the request reads as, its lookalike of the
        asked kind in its place; None when no such lookalike is offered."""
        kinds = [tool for tool in offered if kind_words(tool.described, signature)]
        plain = [tool for tool in offered if tool not in kinds]
        if not kinds:
            return None
        reading = self._read(text, plain) if plain else None
        if reading is None:
            return offered
        action = reading.tool.described
        made_from = max(kinds, key=lambda tool: len(action & tool.described))
        if len(action & made_from.described) < self.MADE_FROM * len(action):
            return None  # the kind's tools offered were made from other actions
        return [made_from, *(tool for tool in plain if tool is not reading.tool)]

    def _groups(self, text: str, offered: list[_Tool]) -> list[tuple[int, int]]:
        """The request cut into one stretch per call: a clause that names a tool, or states
        values, opens a call once the open one has values; the rest joins the open one."""
        entries, _ = _library()
        vocab = [t.asked for t in offered] + [e.asked for e in entries]
        groups: list[list[int]] = []
        has_values: list[bool] = []
        for start, end in _clauses(text):
            piece = text[start:end]
            plain = _plain_words(piece)
            names = max((_overlap(plain, v) for v in vocab), default=0.0)
            valued = bool(_value_spans(piece)) or any(_fill(tool, piece).arguments for tool in offered)
            if (names >= self.OPENS or valued) and (not groups or has_values[-1]):
                groups.append([start, end])
                has_values.append(valued)
            elif groups:
                groups[-1][1] = end
                has_values[-1] = has_values[-1] or valued
            elif valued or names > 0:
                groups.append([start, end])
                has_values.append(valued)
        # A stretch that names a tool but states nothing belongs to the call before it.
        merged: list[list[int]] = []
        for (start, end), valued in zip(groups, has_values, strict=True):
            if merged and not valued:
                merged[-1][1] = end
            else:
                merged.append([start, end])
        return [(s, e) for s, e in merged]

    def _read(self, piece: str, offered: list[_Tool]) -> _Reading | None:
        """The offered tool that best reads ``piece``; None when a library tool that is not
        offered reads it clearly better (the request wants something else)."""
        words = _plain_words(piece)
        plain = set(words)
        best: _Reading | None = None
        best_names = 0.0
        for tool in offered:
            reading = _fill(tool, piece)
            names = _overlap(words, tool.asked)
            required = [s for s in tool.slots if s.required]
            fill = 1.0 - len(reading.missing) / len(required) if required else 0.7
            unsaid = _unsaid_score(tool, plain)
            reading.score = names + 0.5 * reading.score + 4.0 * fill + self.UNSAID * unsaid
            if best is None or reading.score > best.score:
                best, best_names = reading, names
        if best is None or _unsaid_score(best.tool, plain) < _calibration()[2]:
            return None  # even the best tool does what the request does not say (a lookalike)
        mapped = {id(t.lib) for t in offered if t.lib is not None}
        entries, _ = _library()
        index = max(range(len(entries)), key=lambda i: _overlap(words, entries[i].asked))
        top = entries[index]
        wanted = _overlap(words, top.asked)
        if (
            id(top) not in mapped
            and wanted > 1.3 * best_names + 1.5
            and (best.missing or wanted > 2.0 * best_names + 3.0)
            and not _fill(_library_tool(index), piece).missing
        ):
            return None
        return best
