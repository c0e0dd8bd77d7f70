"""The lexical miner's words: tokens, stems, the library's IDF, the request's text."""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from tasks.lexicon import synonym_index
from tasks.library import tools as library_tools
from tasks.spec import BFCL_TYPES, Param, ToolSpec

Answer = list[tuple[str, dict[str, Any]]]


_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "but",
        "if",
        "as",
        "is",
        "are",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "my",
        "me",
        "i",
        "you",
        "your",
        "we",
        "our",
        "us",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "please",
        "can",
        "could",
        "would",
        "will",
        "just",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "so",
        "some",
        "any",
        "all",
        "one",
        "each",
        "every",
        "into",
        "out",
        "up",
        "about",
        "than",
        "then",
        "there",
        "here",
        "what",
        "which",
        "who",
        "when",
        "where",
        "how",
        "not",
        "no",
        "yes",
        "ok",
        "okay",
        "hey",
        "hi",
        "thanks",
        "thank",
        "need",
        "want",
        "like",
        "get",
        "let",
        "lets",
        "s",
        "t",
        "e",
        "g",
        "eg",
        "via",
        "per",
        "also",
        "plus",
        "after",
        "oh",
        "too",
        "only",
    ]
)


_TOKEN = re.compile(r"[A-Za-z]+|\d+")


def _stem(word: str) -> str:
    for suffix in ("ings", "ing", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


@lru_cache(maxsize=65536)
def _canon(word: str) -> str:
    """One spelling per synonym group (the shuffle renames by the public synonym lists), stemmed."""
    group = synonym_index().get(word)
    return _stem(min(group) if group else word)


def _words(text: str) -> list[str]:
    """Content words of any text or identifier (camelCase and snake_case split), canonical."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return [
        _canon(w) for w in (t.lower() for t in _TOKEN.findall(spaced)) if w not in _STOP and not w.isdigit()
    ]


@dataclass(frozen=True, slots=True)
class _LibParam:
    spec: ToolSpec
    param: Param
    json_type: str
    words: frozenset[str]  # description and name words
    context: frozenset[str]  # words right before its placeholder in the templates, plus ``words``
    after: frozenset[str]  # words right after its placeholder in the templates


@dataclass(frozen=True, slots=True)
class _LibTool:
    spec: ToolSpec
    words: frozenset[str]  # name, description, parameter descriptions
    asked: frozenset[str]  # ``words`` and the templates' literal words: how people ask for it
    params: tuple[_LibParam, ...]


def _template_context(spec: ToolSpec) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per parameter: the literal words right before (three) and right after (two) its
    placeholders in the templates ("from {origin} to", "put it in {to_scale}")."""
    before: dict[str, set[str]] = {param.name: set() for param in spec.params}
    after: dict[str, set[str]] = {param.name: set() for param in spec.params}
    for template in spec.templates:
        parts = list(string.Formatter().parse(template))
        for index, (literal, name, _, _) in enumerate(parts):
            if name and name in before:
                before[name].update(_words(literal)[-3:])
                following = parts[index + 1][0] if index + 1 < len(parts) else ""
                after[name].update(_words(following)[:2])
    return before, after


@cache
def _library() -> tuple[tuple[_LibTool, ...], dict[str, float]]:
    """The library tools with their vocabularies, and the IDF of every word over them."""
    entries: list[_LibTool] = []
    for spec in library_tools():
        before, after = _template_context(spec)
        params = []
        for param in spec.params:
            own = frozenset(_words(param.description) + _words(param.name))
            json_type = BFCL_TYPES[param.type]
            params.append(
                _LibParam(spec, param, json_type, own, own | before[param.name], frozenset(after[param.name]))
            )
        words = set(_words(spec.name) + _words(spec.description))
        for p in params:
            words |= p.words
        asked = set(words)
        for template in spec.templates:
            asked.update(_words(re.sub(r"\{\w*\}", " ", template)))
        entries.append(_LibTool(spec, frozenset(words), frozenset(asked), tuple(params)))
    frequency: Counter[str] = Counter()
    for entry in entries:
        frequency.update(entry.asked)
    count = len(entries)
    idf = {word: math.log((1 + count) / (1 + n)) + 0.2 for word, n in frequency.items()}
    return tuple(entries), idf


@cache
def _unseen_idf() -> float:
    return math.log(1 + len(_library()[0])) + 0.2


def _idf(word: str) -> float:
    return _library()[1].get(word) or _unseen_idf()


def _overlap(a: Iterable[str], b: frozenset[str] | set[str]) -> float:
    return sum(_idf(w) for w in set(a) if w in b)


@lru_cache(maxsize=65536)
def _norm(words: frozenset[str]) -> float:
    return math.sqrt(sum(_idf(w) ** 2 for w in words))


def _similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """IDF-weighted cosine of two word sets."""
    if not a or not b:
        return 0.0
    shared = sum(_idf(w) ** 2 for w in a & b)
    return shared / (_norm(a) * _norm(b)) if shared else 0.0


@dataclass(frozen=True, slots=True)
class _Pool:
    """Values seen in answers of the calibration round for parameters described alike."""

    texts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Find:
    """A value found in text: its span(s), the value, and how sure its type makes it (0-4)."""

    start: int
    end: int
    value: Any
    strength: float
    spans: tuple[tuple[int, int], ...] = ()

    def cover(self) -> tuple[tuple[int, int], ...]:
        return self.spans or ((self.start, self.end),)


Finder = Callable[[str], list[_Find]]


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    return dict(tool.get("function", tool))


def _request(messages: Sequence[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end, said) edit made, from the end backwards; an edit that
    overlaps one already made is skipped. Ties are broken by the edit itself, so the result
    never depends on a set's order."""
    out = text
    last = len(text) + 1
    for start, end, said in sorted(set(edits), key=lambda e: (-e[0], -e[1], e[2])):
        if end > last:
            continue
        out = out[:start] + said + out[end:]
        last = start
    return out
