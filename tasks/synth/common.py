"""Value generators that several synthesised families share."""

from __future__ import annotations

from itertools import product

from tasks.library.common import choices
from tasks.value_generators import Composed, Integer

__all__ = ["PRIORITY", "compose", "site_code", "ticket"]

PRIORITY = choices(
    ("low", ("low priority", "whenever convenient")),
    ("normal", ("normal priority", "the usual priority")),
    ("high", ("high priority", "as a priority")),
    ("critical", ("critical priority", "top priority")),
)

_LETTERS = tuple("ABCDEFGHJKLMNPQRSTUVWXYZ")
_DIGITS = tuple("0123456789")


def site_code(prefix: str, vague: tuple[str, ...]) -> Composed:
    """Codes like ``NW-B7-214``: a prefix, a letter and digit block, three digits."""
    return Composed((_LETTERS, _DIGITS, _DIGITS, _DIGITS, _DIGITS), prefix + "-{0}{1}-{2}{3}{4}", vague=vague)


def ticket(prefix: str, vague: tuple[str, ...]) -> Composed:
    """Identifiers like ``WO-K48213``."""
    return Composed((_LETTERS, *(_DIGITS,) * 5), prefix + "-{0}{1}{2}{3}{4}{5}", vague=vague)


def compose(*parts: tuple[str, ...]) -> tuple[str, ...]:
    """Every phrase made of one word from each part, in order ("cold" + "room" -> "cold room")."""
    return tuple(" ".join(word for word in words if word) for words in product(*parts))


HOURS = Integer(1, 8, "{} hours")
