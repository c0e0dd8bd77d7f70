"""The style a request is rewritten in, drawn from the secret round seed.

Register, length, politeness, an extra context sentence and a few typos vary per task and per
round, so that no fixed grammar describes what miners read. Typos are applied by the stage itself
(``add_typos``), outside every stated value, after the rewording was verified.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from random import Random
from typing import Any

__all__ = ["Style", "add_typos", "draw_style"]

_REGISTERS = (
    "casual, like a text message to a friend",
    "neutral and plain",
    "formal, like an email to a colleague",
    "terse, like a note jotted down in a hurry",
    "chatty and a little rambling",
    "businesslike and direct",
    "warm and friendly",
    "slightly impatient",
)
_LENGTHS = ("as short as possible", "one or two sentences", "two or three sentences")
_POLITENESS = (
    "no greeting or thanks",
    "a polite please",
    "a greeting and a thank-you",
    "an apology for bothering",
)
_CONTEXTS = (
    "",
    "",
    "why the person needs it",
    "what the person is in the middle of",
    "who else is waiting on it",
    "how the day is going",
    "what happened the last time",
)


@dataclass(frozen=True)
class Style:
    """How one request is to be written."""

    register: str
    length: str
    politeness: str
    context: str
    typos: int

    def describe(self) -> str:
        """The style as instructions for the phrasing model."""
        parts = [f"Tone: {self.register}.", f"Length: {self.length}.", f"Courtesy: {self.politeness}."]
        if self.context:
            parts.append(f"Add one short sentence of context about {self.context}, with no numbers in it.")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def draw_style(rng: Random) -> Style:
    """A style from a seeded generator (the same seed, the same style, on any machine)."""

    def pick(options: tuple[str, ...]) -> str:
        return options[int(rng.random() * len(options))]

    register, length, politeness, context = (
        pick(_REGISTERS),
        pick(_LENGTHS),
        pick(_POLITENESS),
        pick(_CONTEXTS),
    )
    typos = (0, 0, 0, 1, 1, 2)[int(rng.random() * 6)]
    return Style(register, length, politeness, context, typos)


_WORD = re.compile(r"[A-Za-z]{5,}")


def add_typos(text: str, count: int, rng: Random, protected: list[tuple[int, int]]) -> str:
    """``count`` swaps of two adjacent inner letters, in words of five letters or more that lie
    outside every ``protected`` span (the stated values)."""
    if count <= 0:
        return text
    candidates = [
        match
        for match in _WORD.finditer(text)
        if not any(start < match.end() and match.start() < end for start, end in protected)
    ]
    chars = list(text)
    for _ in range(min(count, len(candidates))):
        match = candidates.pop(int(rng.random() * len(candidates)))
        at = match.start() + 1 + int(rng.random() * (len(match.group()) - 3))
        chars[at], chars[at + 1] = chars[at + 1], chars[at]
    return "".join(chars)
