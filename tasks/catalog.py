"""Every category as shown: the single-turn ones (``tasks.categories.CATEGORIES``) and the
multi-turn episodes' (``tasks.episodes.generate.EPISODE_CATEGORIES``), read from their registries.

:func:`ordered_categories` lists both, the single-turn ones first, each in registry order;
:func:`order_categories`, :func:`category_title` and :func:`category_label` are what the
dashboard, the localnet leaderboard and the validator's score state
(``subnet.validator.state.EPISODE_CATEGORIES``) read instead of lists of their own. It sits above
both registries, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from tasks.categories import CATEGORIES
from tasks.episodes.generate import EPISODE_CATEGORIES

__all__ = [
    "CategoryInfo",
    "category_label",
    "category_title",
    "episode_category_names",
    "order_categories",
    "ordered_categories",
]


@dataclass(frozen=True, slots=True)
class CategoryInfo:
    """A category as shown: its name, its title and short label, and whether it is an episode's."""

    name: str
    title: str
    label: str
    episode: bool


@cache
def ordered_categories() -> tuple[CategoryInfo, ...]:
    """Every category, the single-turn ones (``CATEGORIES``) first and then the multi-turn
    episodes' (``tasks.episodes.generate.EPISODE_CATEGORIES``), each in registry order."""
    return (
        *(CategoryInfo(entry.name, entry.title, entry.label, False) for entry in CATEGORIES.values()),
        *(CategoryInfo(entry.name, entry.title, entry.label, True) for entry in EPISODE_CATEGORIES.values()),
    )


@cache
def _by_name() -> dict[str, CategoryInfo]:
    return {info.name: info for info in ordered_categories()}


@cache
def episode_category_names() -> frozenset[str]:
    """The names of the multi-turn episodes' categories."""
    return frozenset(info.name for info in ordered_categories() if info.episode)


def category_title(name: str) -> str:
    """A category as a row or column title; one the registries do not know shows as named."""
    info = _by_name().get(name)
    return info.title if info is not None else name


def category_label(name: str) -> str:
    """A category as a short column header; one the registries do not know shows as named."""
    info = _by_name().get(name)
    return info.label if info is not None else name


@cache
def _positions() -> tuple[dict[str, int], dict[str, int]]:
    single = [info.name for info in ordered_categories() if not info.episode]
    episodes = [info.name for info in ordered_categories() if info.episode]
    return {name: index for index, name in enumerate(single)}, {
        name: index for index, name in enumerate(episodes)
    }


def _order_key(name: str) -> tuple[int, int, str]:
    single, episodes = _positions()
    if name in episodes:
        return (1, episodes[name], name)
    return (0, single.get(name, len(single)), name)


def order_categories(names: Iterable[str]) -> list[str]:
    """Category names without repeats, as tables list them: the single-turn ones first (the
    registry's in its order, then any other, such as BFCL's ``live_simple``, alphabetically),
    the episodes' last in their registry's order."""
    return sorted(set(names), key=_order_key)
