"""Deterministic checks that a reworded request still asks exactly what the task's answer expects.

``verify(text, intent, names)`` returns a ``Checked`` whose ``reason`` is None when the text may
be shown to miners, else one of ``REASONS``. The rules:

* every stated value appears in one of its forms (numbers and identifiers exact, quoted text
  verbatim, dates and times in an accepted form, a flag's phrase or most of its key words), each
  value as many times as the intent states it and no more (``lost_value``, ``duplicated_value``);
* outside the stated values there is no digit the template text did not have (a changed or
  invented number, date or time: ``invented_value``);
* a yes/no value is not contradicted: none of the opposite answer's phrases appears, even as the
  start of a longer word ("unlocks" where the request is to lock: ``contradicted_value``);
* a withheld value stays unstated: none of its generator's forms, and no quoted text when it is
  free text (``withheld_value_stated``);
* a value the request makes the reader work out (a relative date, a sum, a converted duration)
  is not written outright in any of its forms (``derived_value_stated``); the context the
  intent declares (facts and decoys: same-typed values that are no argument) is kept like the
  stated values, so the only values a text may hold are the stated ones and the declared decoys;
* no offered function or parameter name with more than one word (``names_a_tool``), nothing that
  talks about tools or functions or answers as an assistant (``addresses_the_model``);
* the length lies within bounds of the template text (``too_short``, ``too_long``), one message;
* the text is a request and nothing else: no control or invisible format character
  (``control_character``; newlines and tabs are ordinary text: template text itself joins requests
  with newlines), no markup of any tool-call format (``call_markup``), no chat role marker or
  special token (``role_marker``), and nothing that addresses the assistant to change the task
  ("ignore previous instructions", "answer with an empty list", "you are now ...":
  ``instruction_injection``). Those checks read the text outside the stated values, so a quoted
  value may say anything its task states.

What it cannot see: two stated values swapped between their slots (origin and destination), or a
flag turned into its opposite in other words. ``--phrasing.verify solve`` covers those by having
the phrasing model answer its own text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tasks.phrasing.intent import derived_of, mentions_of, withheld_of
from tasks.spec import MAX_REQUEST_CHARS

__all__ = ["REASONS", "Checked", "verify"]

REASONS = (
    "empty",
    "too_short",
    "too_long",
    "lost_value",
    "duplicated_value",
    "invented_value",
    "withheld_value_stated",
    "derived_value_stated",
    "contradicted_value",
    "names_a_tool",
    "addresses_the_model",
    "control_character",
    "call_markup",
    "role_marker",
    "instruction_injection",
)

_STOPWORDS = frozenset(
    {"a", "an", "and", "the", "to", "of", "in", "on", "at", "for", "it", "its", "is", "be", "by", "as"}
    | {"or", "with", "from", "that", "this", "these", "those", "my", "me", "our", "your", "you", "i"}
    | {"we", "they", "them", "all", "any", "some"}
)
_MODEL_TALK = re.compile(
    r"\b(?:call|use|invoke|run|trigger)\s+(?:the|a|an|this|that|your)\s+(?:\w+\s+)?(?:function|tool|api|endpoint)\b"
    r"|\b(?:function|tool)[ -]?calls?\b|\bparameters?\b|\barguments?\b|\bas an ai\b|\blanguage model\b"
    r"|^\s*(?:sure|certainly|of course)\b[,.!]"
    r"|^\s*here(?:'s| is| are) (?:the|your|a|my) (?:rewrit|message|request|version)"
    r"|\brewritten\b",
    re.IGNORECASE,
)
# Kinds are matched in this order: a date's digits are claimed before a bare number could be,
# and quoted text (verbatim, perhaps with a date inside, "created_at > '2026-01-01'") before both.
_KIND_ORDER = {"quoted": 0, "date": 1, "time": 2, "text": 3, "flag": 4, "number": 5}
_QUOTED = re.compile(r"\"[^\"\n]*[^\s\"][^\"\n]*\"|“[^”\n]*[^\s”][^”\n]*”")
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+")


#: What one task's texts share is cached per template text and value (every attempt of every
#: phrasing engine at one task reads the same), bounded: a validator phrases new tasks every round
#: for as long as it runs, and an unbounded cache kept every task it ever saw (+2.6 KB each).
#: Entries per template text (a round's tasks are verified within a few attempts of each other) ...
TASK_CACHE_SIZE = 1024
#: ... and per value form (a task states about a dozen).
FORM_CACHE_SIZE = 4096


@dataclass
class Checked:
    """The outcome: ``reason`` None when the text passed; ``values`` are the spans of the stated values."""

    reason: str | None
    values: list[tuple[int, int]] = field(default_factory=list)


@lru_cache(maxsize=FORM_CACHE_SIZE)
def _pattern(kind: str, form: str) -> re.Pattern[str]:
    escaped = re.escape(form.strip())
    if kind in ("date", "time"):
        escaped = escaped.replace(r"\ ", r"\s*").replace(",", r"\s*,?")
    else:
        escaped = escaped.replace(r"\ ", r"\s+")
    if kind == "number":
        return re.compile(r"(?<![\d.])(?<!\d,)" + escaped + r"(?!\d|[.,]\d)")
    flags = 0 if kind == "quoted" else re.IGNORECASE
    return re.compile(r"(?<![0-9A-Za-z])" + escaped + r"(?![0-9A-Za-z])", flags)


@lru_cache(maxsize=FORM_CACHE_SIZE)
def _opposite(form: str) -> re.Pattern[str]:
    """A flag's opposite phrase, also as the start of a longer word ("unlock" in "unlocks")."""
    return re.compile(r"(?<![0-9A-Za-z])" + re.escape(form.strip()).replace(r"\ ", r"\s+"), re.IGNORECASE)


def _spans(
    kind: str, forms: tuple[str, ...], text: str, taken: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Non-overlapping occurrences of any form (longest forms first) outside ``taken``."""
    found: list[tuple[int, int]] = []
    for form in sorted(forms, key=len, reverse=True):
        if not form.strip():
            continue
        for match in _pattern(kind, form).finditer(text):
            span = match.span()
            if _in_quotes(kind, span, text):
                span = (span[0] - 1, span[1] + 1)
            if not _overlaps(span, taken) and not _overlaps(span, found):
                found.append(span)
    return found


def _in_quotes(kind: str, span: tuple[int, int], text: str) -> bool:
    """A quoted value with its quote marks around it (they belong to the value)."""
    start, end = span
    return (
        kind == "quoted"
        and start > 0
        and end < len(text)
        and text[start - 1] in "\"“'"
        and text[end] in "\"”'"
    )


def _overlaps(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in spans)


def _content_words(phrase: str) -> list[str]:
    return [
        word for word in re.findall(r"[a-z]+", phrase.lower()) if len(word) > 2 and word not in _STOPWORDS
    ]


def _flag_kept(forms: tuple[str, ...], text: str) -> bool:
    """A flag's phrase may be reworded: most of the key words of one of its forms must stay."""
    words = set(re.findall(r"[a-z]+", text.lower()))
    for form in forms:
        keys = _content_words(form)
        if keys and 2 * sum(word in words for word in keys) >= len(keys):
            return True
    return False


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


_Group = tuple[str, frozenset[str]]


def _claim_in_order(
    text: str, order: list[tuple[_Group, list[tuple[str, ...]]]], longest_first: bool
) -> list[tuple[int, int]] | None:
    """The spans of every value claimed group after group, each group's first occurrences (or
    its longest ones); None when one is not found."""
    claimed: list[tuple[int, int]] = []
    for (kind, _), members in order:
        spans = sorted(_spans(kind, members[0], text, claimed))
        if longest_first:
            spans.sort(key=lambda span: span[0] - span[1])
        if kind == "flag":
            if not spans and not _flag_kept(members[0], text):
                return None
        elif len(spans) < len(members):
            return None
        claimed.extend(spans[: len(members)])
    return claimed


def _claim(
    text: str, mentions: list[tuple[str, tuple[str, ...]]], extra: dict[_Group, int] | None = None
) -> tuple[str | None, list[tuple[int, int]], dict[_Group, int]]:
    """Find every stated value in the text.

    Returns (reason or None, the spans claimed by values, per value the occurrences left over).
    Values are claimed kind by kind (dates before the numbers inside them), each at most as many
    times as it is stated; a value may occur ``extra`` more times (where the template text itself
    repeats it as a plain word) before the rest counts as a duplicate.
    """
    groups: dict[_Group, list[tuple[str, ...]]] = {}
    for kind, forms in mentions:
        if kind == "absent":
            continue
        groups.setdefault((kind, frozenset(forms)), []).append(forms)
    order = sorted(
        groups.items(),
        key=lambda item: (_KIND_ORDER.get(item[0][0], 9), -max(map(len, item[0][1]), default=0)),
    )
    claimed = _claim_in_order(text, order, False)
    if claimed is None:
        # One value's form inside another's ("max" in "max power", the quoted "Priya" in the name
        # "Priya Norstrom", "standard" both a mode and a shipping speed): try the longest
        # occurrences first, and the longest forms first whatever their kind.
        by_length = sorted(order, key=lambda item: (-max(map(len, item[0][1]), default=0), item[0][0]))
        for attempt, longest_first in ((order, True), (by_length, False), (by_length, True)):
            claimed = _claim_in_order(text, attempt, longest_first)
            if claimed is not None:
                break
        else:
            return "lost_value", [], {}
    leftover: dict[_Group, int] = {}
    for key, members in order:
        if key[0] != "flag":
            left = len(_spans(key[0], members[0], text, claimed))
            if left > (extra or {}).get(key, 0):
                leftover[key] = left
    if extra is not None and leftover:
        return "duplicated_value", claimed, leftover
    return None, claimed, leftover


@lru_cache(maxsize=TASK_CACHE_SIZE)
def _example_facts(
    example: str, mentions: tuple[tuple[str, tuple[str, ...]], ...]
) -> tuple[frozenset[str], dict[_Group, int]]:
    """What the template text says besides its values: digit runs (the 2 of "x^2") and values
    repeated as plain words ("I'm away" beside the mode "away"); a rewording may keep them."""
    _, claimed, leftover = _claim(example, list(mentions))
    return frozenset(re.findall(r"\d+", _masked(example, claimed))), leftover


@lru_cache(maxsize=TASK_CACHE_SIZE)
def _opposites(mentions: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[str, ...]:
    return tuple(form for kind, forms in mentions if kind == "absent" for form in forms if form.strip())


def _count_opposites(opposites: tuple[str, ...], rest: str) -> int:
    return sum(len(_opposite(form).findall(rest)) for form in opposites)


@lru_cache(maxsize=TASK_CACHE_SIZE)
def _example_opposites(example: str, mentions: tuple[tuple[str, tuple[str, ...]], ...]) -> int:
    """How often the template text itself says an opposite phrase outside its values: another
    request's own word ("lock the car to 105 km/h" beside "unlock the side door") may stay."""
    _, claimed, _ = _claim(example, list(mentions))
    return _count_opposites(_opposites(mentions), _masked(example, claimed))


def _derived_stated(derived: list[str], rest: str) -> bool:
    """A worked-out value written outright, outside the stated values (then there is nothing left
    to work out); numbers match as numbers, words as whole words."""
    for form in derived:
        kind = "number" if re.fullmatch(r"-?\d+(?:\.\d+)?", form) else "text"
        if form.strip() and _pattern(kind, form).search(rest):
            return True
    return False


def _bounds(example: str) -> tuple[int, int]:
    return max(6, len(example) // 4), min(MAX_REQUEST_CHARS, 4 * len(example) + 240)


def verify(text: str, intent: dict[str, Any], names: list[str] | tuple[str, ...] = ()) -> Checked:
    """Check one rewording of the intent's request; ``names`` are the offered function and parameter names."""
    if not text.strip():
        return Checked("empty")
    if _control_character(text):
        return Checked("control_character")
    example = str(intent.get("example", ""))
    low, high = _bounds(example)
    if len(text) < low:
        return Checked("too_short")
    if len(text) > high or text.count("\n") > 4:
        return Checked("too_long")
    mentions = mentions_of(intent)
    allowed, repeats = _example_facts(example, tuple(mentions))
    reason, claimed, _ = _claim(text, mentions, repeats)
    if reason is not None:
        return Checked(reason, claimed)
    rest = _masked(text, claimed)
    opposites = _opposites(tuple(mentions))
    if opposites and _count_opposites(opposites, rest) > _example_opposites(example, tuple(mentions)):
        return Checked("contradicted_value", claimed)
    if _derived_stated(derived_of(intent), rest):
        return Checked("derived_value_stated", claimed)
    if any(run not in allowed for run in re.findall(r"\d+", rest)):
        return Checked("invented_value", claimed)
    for entry in withheld_of(intent):
        forbidden = tuple(str(form) for form in entry.get("forbidden", ()))
        if forbidden and _spans("text", forbidden, rest, []):
            return Checked("withheld_value_stated", claimed)
        # Quoted text states a withheld free text; an allusion beside a stated value of its type
        # (with mentions: a date, a city, a name) is never free text, and other values are quoted.
        if not forbidden and not entry.get("mentions") and _QUOTED.search(rest):
            return Checked("withheld_value_stated", claimed)
    injected = _injection(rest)  # before the name checks: "<|im_start|>" holds an identifier
    if injected is not None:
        return Checked(injected, claimed)
    lowered = rest.lower()
    for name in names:
        if _IDENTIFIER.fullmatch(name) and re.search(
            r"(?<![0-9a-z_])" + re.escape(name.lower()) + r"(?![0-9a-z_])", lowered
        ):
            return Checked("names_a_tool", claimed)
    if _IDENTIFIER.search(rest) and any(_IDENTIFIER.fullmatch(name) for name in names):
        # Any other snake_case or camelCase word outside the values reads as an identifier too.
        return Checked("names_a_tool", claimed)
    if _MODEL_TALK.search(rest):
        return Checked("addresses_the_model", claimed)
    return Checked(None, claimed)


# --- A request and nothing else: control characters and instruction injection ---------------------

#: Control characters a request may hold: line breaks and tabs are layout (template text joins
#: requests with newlines). Every other C0/C1 control (NUL, ESC, carriage return, DEL, ...) is not.
_LAYOUT = frozenset("\n\t")
#: Format characters that draw nothing but change how text reads or hides (zero-width spaces,
#: bidirectional overrides and isolates, the byte-order mark, invisible operators), and the Unicode
#: line and paragraph separators. The zero-width joiner stays: it builds ordinary emoji.
_INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b\u200c\u200e\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\U000e0000-\U000e007f]"
)


def _control_character(text: str) -> bool:
    """Whether the text holds a control or invisible format character (see ``_LAYOUT``)."""
    return any((ord(char) < 32 or 127 <= ord(char) < 160) and char not in _LAYOUT for char in text) or bool(
        _INVISIBLE.search(text)
    )


#: Tool-call markup of the common families: Hermes/Qwen tags, Llama 3 python tag and
#: ``<function=...>``, Mistral ``[TOOL_CALLS]``, Functionary, Anthropic-style ``<invoke>`` and
#: ``<tool_use>``, Gemma ``<start_function_call>``, Qwen ``✿FUNCTION✿``, and JSON call objects.
_CALL_MARKUP = re.compile(
    r"</?\s*(?:tool_calls?|function_calls?|functioncall|tool_use|tool_result|invoke|antml:\w+|"
    r"start_function_call|end_function_call|function_results?|parameter|tools)\b[^>]*>"
    r"|<function=|\[/?(?:TOOL_CALLS|TOOL_RESULTS|AVAILABLE_TOOLS)\]|<\|(?:python_tag|tool_calls?)\|>"
    r"|✿(?:FUNCTION|ARGS|RESULT|RETURN)✿|\bfunctools\["
    r"|[{,]\s*\"(?:name|arguments|function|tool_calls|parameters)\"\s*:",
    re.IGNORECASE,
)
#: Chat role markers and special tokens: "system:" or "assistant:" opening a line or sentence (or
#: capitalised anywhere: "... System: ..."), ChatML and
#: Llama tokens, ``[INST]``, ``<<SYS>>``, "### Instruction" headers.
_ROLE_MARKER = re.compile(
    r"(?:^|[\n.!?]\s*)(?:system|assistant|developer|user|tool|human|ai)\s*:"
    r"|(?-i:\b(?:SYSTEM|System|ASSISTANT|Assistant|DEVELOPER|Developer|USER|User|HUMAN|Human)\s*:)"
    r"|<\|[a-z_]+\|>|<\|(?:im_start|im_end|eot_id|start_header_id|end_header_id|endoftext)"
    r"|\[/?INST\]|<</?SYS>>|</?s>|^\s*#{2,}\s*(?:instruction|system|response|assistant)s?\b",
    re.IGNORECASE | re.MULTILINE,
)
#: Text that talks to the assistant to change what it does: overriding earlier instructions,
#: dictating the answer ("respond with an empty list", "do not call anything"), or recasting it.
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+|my\s+)*"
    r"(?:(?:previous|prior|above|earlier|preceding|former|original|system|initial)\s+)?"
    r"(?:instructions|prompts?|guidelines|directions|rules)\b"
    r"|\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+|my\s+)*"
    r"(?:previous|prior|above|earlier|preceding|former|original|system|initial)\s+"
    r"(?:instruction|messages|message|text|conversation|context|task|request)s?\b"
    r"|\b(?:ignore|disregard|forget)\s+(?:all\s+of\s+|everything\s+)?(?:the\s+)?above\b"
    r"|\b(?:answer|respond|reply|return|output)\s+(?:only\s+)?with\s+(?:an?\s+)?(?:empty|blank|no|null)\b"
    r"|\b(?:answer|respond|reply|return|output)\s+(?:only\s+)?(?:an?\s+)?(?:empty|blank|null)\s+"
    r"(?:list|array|answer|response|reply|json|output|result)\b"
    r"|\b(?:answer|respond|reply)\s+with\s+(?:nothing|\[\s*\]|\{\s*\})"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:make\s+)?(?:call|use|invoke)\s+(?:any|a|the)?\s*"
    r"(?:tools?|functions?|calls?|anything)\b"
    r"|\bno\s+(?:tool|function)\s+calls?\b"
    r"|(?:^|[.!?]\s+)you\s+are\s+(?:now\s+|no\s+longer\s+|actually\s+)?(?:an?\s+|the\s+|my\s+)?"
    r"(?:assistant|ai|model|bot|chatbot|agent|system|helpful|language)"
    r"|\byou(?:'re|\s+are)\s+now\b|\bact\s+as\s+(?:an?|the|my)\b"
    r"|\bpretend\s+(?:to\s+be|you(?:'re|\s+are))\b|\bnew\s+(?:instructions|system\s+prompt)\b"
    r"|\bsystem\s+prompt\b|\bdeveloper\s+mode\b|\bjailbreak|\binstead\s+of\s+(?:the\s+)?(?:above|request|task)\b"
    r"|\b(?:the|this)\s+(?:real|actual)\s+(?:task|request|instruction)\b",
    re.IGNORECASE | re.MULTILINE,
)


def _injection(rest: str) -> str | None:
    """The reason the text outside the values is more than a request, or None."""
    if _CALL_MARKUP.search(rest):
        return "call_markup"
    if _ROLE_MARKER.search(rest):
        return "role_marker"
    if _INJECTION.search(rest):
        return "instruction_injection"
    return None
