"""Fast, portable draws from an explicitly seeded ``random.Random``.

``Random.randrange`` and ``Random.shuffle`` spend most of their time in rejection sampling;
these helpers scale ``Random.random()`` instead, which is several times faster and just as
deterministic for a given seed (the generator's throughput target needs it).

Not to be confused with tasks/shuffle.py, the tool_shuffle transform (surface names of a
task's tools): :func:`permute` here only reorders a list in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from random import Random
from typing import Any, TypeVar

__all__ = ["below", "between", "choose", "distinct", "permute"]

T = TypeVar("T")


def below(rng: Random, n: int) -> int:
    """An integer in [0, n)."""
    return int(rng.random() * n)


def between(rng: Random, low: int, high: int) -> int:
    """An integer in [low, high], both ends included."""
    return low + int(rng.random() * (high - low + 1))


def choose(rng: Random, items: Sequence[T]) -> T:
    """One item of a non-empty sequence."""
    return items[int(rng.random() * len(items))]


def permute(rng: Random, items: list[Any]) -> None:
    """Reorder ``items`` in place (Fisher-Yates: j = int(random() * (i + 1)) for i from the end down to 1)."""
    random = rng.random
    size = len(items)
    for i in range(size - 1, 2, -1):
        j = int(random() * (i + 1))
        items[i], items[j] = items[j], items[i]
    # The steps i = 2 and i = 1 unrolled (most lists here are that short); for i = 1,
    # int(random() * 2) is 0 exactly when random() < 0.5.
    if size > 2:
        j = int(random() * 3)
        items[2], items[j] = items[j], items[2]
    if size > 1 and random() < 0.5:
        items[0], items[1] = items[1], items[0]


def distinct(rng: Random, items: Sequence[T], count: int) -> list[T]:
    """``count`` different items (all of them when there are fewer), in random order: the front
    of a Fisher-Yates shuffle, so drawing a few ids from thousands costs a few draws, not a
    shuffle of the thousands."""
    pool = list(items)
    size, random = len(pool), rng.random
    for i in range(min(count, size)):
        j = i + int(random() * (size - i))
        pool[i], pool[j] = pool[j], pool[i]
    return pool[: min(count, size)]
