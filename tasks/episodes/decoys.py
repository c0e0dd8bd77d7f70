"""Decoys: near-duplicate entities planted in an environment's state (two payees with similar
names, products differing in one attribute, two threads with the same subject, two events with the
same title), so that an agent that picks by shape or by first match picks wrong.

A decoy kind is a function ``plant(env, rng)`` registered on its environment class
(``Environment.decoys``); each runs after ``build`` with a stream of its own (the seed and the
function's name), so the state ``build`` draws stays what it was. A decoy differs from the entity
it copies in one attribute the user can name (a name, a variant, a date, a sender): the scenarios
name entities by that attribute, so each stays unambiguous. Helpers here write the near names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from random import Random
from typing import Any

from tasks.rand import below, choose

__all__ = ["Plant", "near_name", "near_word"]

#: A decoy kind: adds near duplicates to ``env``'s state, drawing from ``rng``.
Plant = Callable[[Any, Random], None]

_VOWELS = "aeiou"


def near_word(word: str, rng: Random) -> str:
    """``word`` with one letter changed: a vowel for another vowel, else a doubled consonant
    ("Lopez" -> "Lopes" or "Lapez"); never ``word`` itself."""
    vowels = [index for index, char in enumerate(word) if char.lower() in _VOWELS and index > 0]
    if vowels:
        index = choose(rng, vowels)
        others = [v for v in _VOWELS if v != word[index].lower()]
        return word[:index] + choose(rng, others) + word[index + 1 :]
    index = 1 + below(rng, max(1, len(word) - 1))
    return word[:index] + word[index - 1] + word[index:]


def near_name(name: str, rng: Random, taken: Iterable[str] = ()) -> str | None:
    """A name one letter away from ``name`` in one of its words (the same first name with another
    surname, or the other way round), none of ``taken`` (compared case-insensitively); None when
    a few draws found none."""
    used = {item.lower() for item in taken} | {name.lower()}
    words = name.split()
    for _ in range(8):
        index = below(rng, len(words))
        changed = [*words[:index], near_word(words[index], rng), *words[index + 1 :]]
        candidate = " ".join(changed)
        if candidate.lower() not in used:
            return candidate
    return None
