"""tasks.rand: the generator's fast draws stay draws (deterministic per seed, uniform enough)."""

from __future__ import annotations

from collections import Counter
from random import Random

from tasks.rand import distinct, permute


def test_distinct_draws_different_items_deterministically() -> None:
    drawn = distinct(Random(5), range(1000, 10000, 7), 4)
    assert len(drawn) == len(set(drawn)) == 4
    assert all(item in range(1000, 10000, 7) for item in drawn)
    assert drawn == distinct(Random(5), range(1000, 10000, 7), 4)
    assert sorted(distinct(Random(1), [3, 1, 2], 10)) == [1, 2, 3]  # fewer items than asked: all
    assert distinct(Random(1), [], 3) == []


def test_distinct_is_the_front_of_a_uniform_shuffle() -> None:
    # every item is about as likely first: 6 items, 12,000 draws, each near 2,000
    rng = Random(11)
    firsts = Counter(distinct(rng, "abcdef", 1)[0] for _ in range(12_000))
    assert set(firsts) == set("abcdef") and all(1_800 < count < 2_200 for count in firsts.values())


def test_permute_keeps_the_items() -> None:
    items = list(range(50))
    permute(Random(3), items)
    assert sorted(items) == list(range(50)) and items != list(range(50))
