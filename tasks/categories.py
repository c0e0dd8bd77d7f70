"""The category registry: how each kind of task is built, scored and how often it appears.

Adding a category is adding an entry to ``CATEGORIES``: a builder that draws a ``Draft`` from a
seeded ``random.Random``, the category name ``scoring.check`` dispatches on, and a default share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from random import Random
from types import MappingProxyType
from typing import Any

from tasks.builtin import (
    Instance,
    decorate,
    instantiate,
    is_meta,
    join_requests,
    near_misses,
    pick_tool,
    templates_with,
)
from tasks.library import by_domain, tools
from tasks.rand import below, between, shuffle
from tasks.spec import ToolSpec

__all__ = ["CATEGORIES", "Category", "Draft", "default_mix"]


# Not frozen (built per task; a frozen dataclass takes 2.5x as long). Treat it as immutable.
@dataclass(slots=True)
class Draft:
    """A built task before its surface is shuffled: request, tools offered, expected calls."""

    request: str
    tools: tuple[ToolSpec, ...]
    expected: list[dict[str, Any]]
    #: What the request asks, piece by piece (``Instance.ask``), for the phrasing stage.
    asks: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Category:
    """One registry entry."""

    name: str
    build: Callable[[Random], Draft]
    scoring_category: str
    share: float
    description: str


def _simple(rng: Random) -> Draft:
    spec = pick_tool(rng)
    instance = instantiate(spec, rng)
    return Draft(decorate(instance.text, rng), (spec,), [instance.call], [instance.ask])


def _multiple(rng: Random) -> Draft:
    spec = pick_tool(rng)
    instance = instantiate(spec, rng)
    distractors = near_misses((spec,), between(rng, 2, 4), rng)
    offered = [spec, *distractors]
    shuffle(rng, offered)
    return Draft(decorate(instance.text, rng), tuple(offered), [instance.call], [instance.ask])


def _calls_of(spec: ToolSpec, count: int, rng: Random) -> list[Instance]:
    """``count`` distinct requests to one tool, with distinct templates while they last."""
    order = list(range(len(spec.templates)))
    shuffle(rng, order)
    instances: list[Instance] = []
    calls: list[dict[str, Any]] = []
    for index in range(count):
        template = spec.templates[order[index % len(order)]]
        for _ in range(8):
            instance = instantiate(spec, rng, template)
            if instance.call not in calls:
                break
        instances.append(instance)
        calls.append(instance.call)
    return instances


def _parallel(rng: Random) -> Draft:
    spec = pick_tool(rng)
    instances = _calls_of(spec, between(rng, 2, 4), rng)
    text = join_requests([instance.text for instance in instances], rng)
    return Draft(
        decorate(text, rng),
        (spec,),
        [instance.call for instance in instances],
        [instance.ask for instance in instances],
    )


def _parallel_multiple(rng: Random) -> Draft:
    first = pick_tool(rng)
    pool = by_domain()[first.domain] if rng.random() < 0.5 else tools()
    chosen = [first]
    for _ in range(between(rng, 1, 2)):
        chosen.append(
            pick_tool(rng, exclude=tuple(chosen), pool=pool if len(pool) > len(chosen) + 1 else None)
        )
    pieces: list[Instance] = []
    for index, spec in enumerate(chosen):
        count = 2 if index == 0 and len(chosen) == 2 and rng.random() < 0.5 else 1
        pieces.extend(_calls_of(spec, count, rng))
    shuffle(rng, pieces)
    distractors = near_misses(tuple(chosen), between(rng, 0, 2), rng)
    offered = [*chosen, *distractors]
    shuffle(rng, offered)
    text = join_requests([piece.text for piece in pieces], rng)
    return Draft(
        decorate(text, rng), tuple(offered), [piece.call for piece in pieces], [piece.ask for piece in pieces]
    )


def _irrelevance(rng: Random) -> Draft:
    asked = pick_tool(rng)
    instance = instantiate(asked, rng)
    offered: list[ToolSpec] = []
    for spec in near_misses((asked,), between(rng, 1, 4), rng, same_domain_first=False, allow_meta=False):
        if spec.domain != asked.domain:
            offered.append(spec)
    if not offered:
        unrelated = [spec for spec in tools() if spec.domain != asked.domain and not is_meta(spec)]
        offered.append(unrelated[below(rng, len(unrelated))])
    return Draft(decorate(instance.text, rng), tuple(offered), [], [instance.ask])


def _missing_param(rng: Random) -> Draft:
    for _ in range(64):
        spec = pick_tool(rng)
        if is_meta(spec):
            continue
        candidates = [p for p in spec.params if p.required and p.gen.vague and templates_with(spec, p.name)]
        if candidates:
            break
    else:  # pragma: no cover - the library always has such tools
        raise LookupError("no tool with a required parameter that can be alluded to")
    param = candidates[below(rng, len(candidates))]
    options = templates_with(spec, param.name)
    instance = instantiate(spec, rng, options[below(rng, len(options))], vague=param.name)
    offered = [spec, *near_misses((spec,), between(rng, 0, 2), rng, allow_meta=False)]
    shuffle(rng, offered)
    return Draft(decorate(instance.text, rng), tuple(offered), [], [instance.ask])


# Shares sum to 1. The no-call categories (irrelevance, missing_param) together get 20%, so a
# miner that never calls a tool cannot score well by refusing everything.
CATEGORIES: Mapping[str, Category] = MappingProxyType(
    {
        entry.name: entry
        for entry in (
            Category("simple", _simple, "simple", 0.20, "one tool, one call"),
            Category("multiple", _multiple, "multiple", 0.25, "one right call among near-miss tools"),
            Category("parallel", _parallel, "parallel", 0.15, "the same function several times"),
            Category(
                "parallel_multiple",
                _parallel_multiple,
                "parallel_multiple",
                0.20,
                "several functions, one or more calls each",
            ),
            Category("irrelevance", _irrelevance, "irrelevance", 0.10, "no offered tool fits: make no call"),
            Category(
                "missing_param",
                _missing_param,
                "irrelevance",
                0.10,
                "a required value is missing from the request: ask, make no call",
            ),
        )
    }
)


def default_mix() -> dict[str, float]:
    """Category -> default share, from the registry."""
    return {name: entry.share for name, entry in CATEGORIES.items()}
