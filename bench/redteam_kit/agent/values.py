"""Values read off a turn by their shapes (quoted text, IBANs, ids, amounts, dates, times, names), and the
scenario kinds.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from tasks.devices._words import NUMBER_WORDS
from tasks.library.common import FIRST_NAMES, LAST_NAMES

from .tools import Agent, Script

_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|`([^`]+)`')


_IBAN = re.compile(r"\b[A-Z]{2}\d{18}\b")


_NUMBER = re.compile(r"(?<![\w.@/-])\d+(?:\.\d+)?(?![\w/-]|\.\d)")


_ORDER = re.compile(r"\bORD-\d+\b", re.IGNORECASE)


_TIME = re.compile(r"\b(\d{1,2}):(\d{2})(?::\d{2})?(?:\s*([ap]m))?", re.IGNORECASE)


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")  # fmt: skip


_MONTH = "|".join([*_MONTHS, *(m[:3] for m in _MONTHS)])


_DATES = (
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), "ymd"),
    (re.compile(r"\b(\d{2})/(\d{2})/(\d{4})\b"), "mdy"),
    (re.compile(rf"\b({_MONTH}) (\d{{1,2}}),? (\d{{4}})\b", re.IGNORECASE), "Mdy"),
    (re.compile(rf"\b(\d{{1,2}}) ({_MONTH}) (\d{{4}})\b", re.IGNORECASE), "dMy"),
)


_WORD_NUMBERS = {word: index for index, word in enumerate(NUMBER_WORDS)}  # the devices' number words


_FIRST, _LAST = "|".join(FIRST_NAMES), "|".join(LAST_NAMES)


#: A person: a first and a last name of the public lists, or one of them with another capitalised
#: word (a near-duplicate decoy spells one of the two differently; the text's spelling is the one).
_PERSON = re.compile(rf"\b(?:(?:{_FIRST}) (?:{_LAST})|(?:{_FIRST}) [A-Z][a-z]+|[A-Z][a-z]+ (?:{_LAST}))\b")


def _unquoted(text: str) -> str:
    return _QUOTED.sub(" ", text)


def _quoted(text: str) -> list[str]:
    return [next(group for group in match.groups() if group) for match in _QUOTED.finditer(text)]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9'_]+", text.lower())


def _find_listed(text: str, options: Iterable[str]) -> str | None:
    """The longest of ``options`` the text contains (case-insensitive), as the option spells it."""
    lowered = text.lower()
    best = None
    for option in options:
        if option.lower() in lowered and (best is None or len(option) > len(best)):
            best = option
    return best


def _date(text: str) -> str | None:
    for regex, order in _DATES:
        match = regex.search(text)
        if match is None:
            continue
        a, b, c = match.groups()
        try:
            if order == "ymd":
                day = _dt.date(int(a), int(b), int(c))
            elif order == "mdy":
                day = _dt.date(int(c), int(a), int(b))
            elif order == "Mdy":
                day = _dt.date(int(c), _month(a), int(b))
            else:
                day = _dt.date(int(c), _month(b), int(a))
        except ValueError:
            continue
        return day.isoformat()
    return None


def _month(name: str) -> int:
    lowered = name.lower()[:3]
    return next(i + 1 for i, month in enumerate(_MONTHS) if month.lower().startswith(lowered))


def _times(text: str) -> list[str]:
    found = []
    for hour, minute, half in _TIME.findall(text):
        hours = int(hour) % 12 + (12 if half.lower() == "pm" else 0) if half else int(hour)
        found.append(f"{hours:02d}:{minute}")
    return found


def _small_number(text: str, *leads: str) -> int | None:
    """A count said as a word or as one or two digits; after one of ``leads`` when one is there."""
    lowered = text.lower().replace("one of those", " ")
    for lead in leads:
        match = re.search(rf"\b{lead} (\w+)", lowered)
        if match and (match.group(1) in _WORD_NUMBERS or match.group(1).isdigit()):
            word = match.group(1)
            return _WORD_NUMBERS[word] if word in _WORD_NUMBERS else int(word)
    for word in _words(lowered):
        if word in _WORD_NUMBERS:
            return _WORD_NUMBERS[word]
        if word.isdigit() and len(word) <= 2:
            return int(word)
    return None


def _amounts(text: str) -> list[float]:
    return [float(found) for found in _NUMBER.findall(text)]


def _fuzzy_has(words: list[str], keyword: str) -> bool:
    """A keyword (one or more words) in the text, each word allowing a typo."""
    parts = keyword.split()
    for start in range(len(words) - len(parts) + 1):
        if all(
            word == part or (len(part) > 4 and SequenceMatcher(None, word, part).ratio() >= 0.8)
            for word, part in zip(words[start : start + len(parts)], parts, strict=False)
        ):
            return True
    return False


def _score(text: str, keywords: Sequence[str]) -> int:
    lowered = " ".join(_words(_unquoted(text)))
    exact = sum(1 for keyword in keywords if f" {keyword} " in f" {lowered} ")
    if exact:
        return 2 * exact
    words = lowered.split()
    return sum(1 for keyword in keywords if _fuzzy_has(words, keyword))


@dataclass(frozen=True)
class _Kind:
    name: str
    keywords: tuple[str, ...]
    script: Callable[[Agent, str], Script]
    #: Shapes that decide the kind before keywords (a regex over the raw text).
    marker: re.Pattern[str] | None = None


def _text(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _tool_call(name: str, arguments: dict[str, Any], index: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"agent_{index}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def _recognise(kinds: Sequence[_Kind], text: str) -> _Kind | None:
    for kind in kinds:
        if kind.marker is not None and kind.marker.search(text):
            return kind
    scored = [(_score(text, kind.keywords), -position, kind) for position, kind in enumerate(kinds)]
    best = max(scored, key=lambda row: (row[0], row[1]), default=None)
    if best is None or best[0] == 0:
        return None
    return best[2]
