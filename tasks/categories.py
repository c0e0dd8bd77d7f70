"""The category registry: how each kind of task is built, scored, shown and how often it appears.

Adding a category is adding an entry to ``CATEGORIES``: a builder that draws a ``Draft`` from a
seeded ``random.Random``, the category name ``scoring.check`` dispatches on, a default share, and
how the dashboard and the localnet leaderboard name it (a title and a short column label).

The multi-turn episodes' categories have a registry of their own
(``tasks.episodes.generate.EPISODE_CATEGORIES``); ``tasks.catalog`` lists both as they are shown.
The scorer keeps its own table of how each is judged (``scoring.category_rules.CATEGORY_RULES``:
scoring never imports tasks); tests/tasks/test_category_registry.py checks it knows every
``scoring_category`` here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from random import Random
from types import MappingProxyType
from typing import Any

from tasks.builtin import (
    JOINERS,
    Instance,
    decorate,
    instantiate,
    is_meta,
    join_requests,
    near_misses,
    pick_tool,
    richness,
    templates_with,
)
from tasks.devices import devices_for
from tasks.distractors import KINDS, lookalike, lookalikes
from tasks.library import by_domain, tools
from tasks.rand import below, between, permute
from tasks.spec import MAX_REQUEST_CHARS, ToolSpec
from tasks.synth import draw_synth, is_synth, siblings

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
    #: The category as a row or column title (the validator's dashboard).
    title: str
    #: A short column header (the localnet leaderboard's plain-text table).
    label: str
    #: The most values one request states through devices (``tasks.devices.Scene.worked``):
    #: three in a task of one request, two where several requests share a rewording's length.
    worked: int = 3


#: The share of gold tools (and of irrelevance tasks' asked tools) synthesised (``tasks.synth``)
#: rather than drawn from the library.
SYNTH_SHARE = 0.3
#: The share of irrelevance tasks whose offered tools are lookalikes of the asked tool
#: (``tasks.distractors``) rather than tools from other domains.
LOOKALIKE_IRRELEVANCE_SHARE = 0.7
#: The shares of irrelevance tasks that ask for a lookalike's action with only the tool that does
#: the thing itself offered (``_turned_away``), and whose offered tools do something else with
#: the very thing asked about (``_other_action``): both share the request's words and types.
TURNED_IRRELEVANCE_SHARE = 0.55
SIBLING_IRRELEVANCE_SHARE = 0.15
#: The share of those asking for a lookalike's action that also offer a lookalike of the asked kind
#: made from another tool of the same thing (``_turned_away``).
SAME_KIND_SHARE = 0.5
#: The share of missing_param tasks that withhold a value a "withheld" device fits (a date, time,
#: city, name, address or number: ``tasks.devices.unsaid``), where a tool with one is drawn.
UNSAID_MISSING_SHARE = 0.85
#: The share of multiple tasks whose request asks for a lookalike's action ("remind me later to
#: ...", "how much would this cost? don't do it yet: ..."): the lookalike is the gold tool and
#: the tool it was made from a distractor, so "a lookalike is never the answer" does not hold.
LOOKALIKE_GOLD_SHARE = 0.25

#: The gold tool of a single-request task (and the tool an irrelevance request asks for) is kept
#: with probability min(values its requests can state through devices, RICH_WORKED) / RICH_WORKED,
#: else drawn again, at most RICH_DRAWS times: a lexical miner is right on about 70% of requests
#: that state one value through a device, 35-50% with two, 20-35% with three (seed heldout-27).
RICH_WORKED = 3
RICH_DRAWS = 4


def _gold(
    rng: Random, exclude: tuple[ToolSpec, ...] = (), allow_meta: bool = True, rich: bool = False
) -> ToolSpec:
    """A gold tool: synthesised with probability ``SYNTH_SHARE``, else from the library; never
    one in (or conflicting with) ``exclude``. ``rich`` (the request of a single-request task):
    a tool taken in proportion to the values a request to it can state through devices, up to
    ``RICH_WORKED`` (``tasks.builtin.richness``), so few requests state only one that way."""
    for _ in range(RICH_DRAWS if rich else 1):
        spec = _draw_gold(rng, exclude, allow_meta)
        if not rich or rng.random() * RICH_WORKED < min(richness(spec), RICH_WORKED):
            return spec
    return spec


def _draw_gold(rng: Random, exclude: tuple[ToolSpec, ...], allow_meta: bool) -> ToolSpec:
    if rng.random() < SYNTH_SHARE:
        for _ in range(8):
            spec = draw_synth(rng)
            if spec not in exclude:
                return spec
    for _ in range(64):
        spec = pick_tool(rng, exclude)
        if allow_meta or not is_meta(spec):
            return spec
    raise LookupError("no library tool fits")  # pragma: no cover - the library has many


def _distractors(
    golds: tuple[ToolSpec, ...],
    count: int,
    rng: Random,
    looking_alike: int,
    allow_meta: bool = True,
) -> list[ToolSpec]:
    """``count`` tools that cannot serve the request: ``looking_alike`` of them lookalikes of the
    gold tools (same words and types, another intent), then near misses: a synthesised gold
    tool's siblings (same thing, another action), then the library's (``near_misses``)."""
    chosen = lookalikes(golds, min(count, looking_alike), rng, golds)
    near = [sibling for gold in golds for sibling in siblings(gold) if sibling not in golds]
    permute(rng, near)
    for sibling in near:
        if len(chosen) >= count:
            return chosen
        if sibling not in chosen:
            chosen.append(sibling)
    library_golds = tuple(gold for gold in golds if not is_synth(gold))
    if len(chosen) < count:
        chosen += near_misses(
            library_golds,
            count - len(chosen),
            rng,
            same_domain_first=bool(library_golds),
            allow_meta=allow_meta,
        )
    return chosen


def _simple(rng: Random) -> Draft:
    spec = _gold(rng, rich=True)
    instance = instantiate(spec, rng)
    return Draft(decorate(instance.text, rng), (spec,), [instance.call], [instance.ask])


def _asked_lookalike(
    spec: ToolSpec, instance: Instance, rng: Random
) -> tuple[int, ToolSpec, str, dict[str, Any]] | None:
    """The request of ``instance`` wrapped to ask for a lookalike of ``spec`` (a kind with
    ``asks``): the kind's index, the lookalike, the text, and the ask that names it (the wrapper's
    words as a value the rewording must keep). None where no such kind applies to ``spec``."""
    kinds = [index for index, kind in enumerate(KINDS) if kind.asks and lookalike(index, spec) is not None]
    if not kinds:
        return None
    index = kinds[below(rng, len(kinds))]
    made = lookalike(index, spec)
    assert made is not None
    kind = KINDS[index]
    wrapper = kind.asks[below(rng, len(kind.asks))]
    text = wrapper.format(request=instance.text)
    cue = {
        "slot": "asked_action",
        "about": "what the person wants done instead of the action itself",
        "said": wrapper.split("{request}")[0].rstrip(": "),
        "mentions": [["flag", list(kind.keeps)]],
    }
    ask = {
        **instance.ask,
        "tool": made.name,
        "purpose": made.description,
        "example": text,
        "values": [cue, *instance.ask["values"]],
    }
    return index, made, text, ask


def _turned(spec: ToolSpec, instance: Instance, rng: Random) -> Draft | None:
    """A multiple task that asks for a lookalike of ``spec`` (a kind with ``asks``) with the values
    of ``instance``: the lookalike answers, ``spec`` is offered as a distractor. None where no
    such kind applies to ``spec``."""
    asked = _asked_lookalike(spec, instance, rng)
    if asked is None:
        return None
    _, made, text, ask = asked
    count = between(rng, 1, 3)
    others = [
        other
        for other in _distractors((spec,), count + 1, rng, looking_alike=between(rng, 0, 2))
        if other is not made
    ][:count]
    offered = [made, spec, *others]
    permute(rng, offered)
    return Draft(decorate(text, rng), tuple(offered), [{made.name: instance.call[spec.name]}], [ask])


def _multiple(rng: Random) -> Draft:
    spec = _gold(rng, rich=True)
    instance = instantiate(spec, rng)
    if rng.random() < LOOKALIKE_GOLD_SHARE:
        turned = _turned(spec, instance, rng)
        if turned is not None:
            return turned
    distractors = _distractors((spec,), between(rng, 2, 4), rng, looking_alike=between(rng, 2, 3))
    offered = [spec, *distractors]
    permute(rng, offered)
    return Draft(decorate(instance.text, rng), tuple(offered), [instance.call], [instance.ask])


def _calls_of(spec: ToolSpec, count: int, rng: Random) -> list[Instance]:
    """``count`` distinct requests to one tool, with distinct templates while they last."""
    order = list(range(len(spec.templates)))
    permute(rng, order)
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


#: Characters the joined requests of a parallel task may take: the phrasing verification's bound
#: on a request (``MAX_REQUEST_CHARS``) less the longest opener and closer ``decorate`` adds. Four
#: requests that each carry a four-candidate choice can run past it; the last ones are dropped.
_PARALLEL_BUDGET = MAX_REQUEST_CHARS - 100


def _parallel(rng: Random) -> Draft:
    spec = _gold(rng)
    instances = _calls_of(spec, between(rng, 2, 4), rng)
    joiner = max(map(len, JOINERS))
    while len(instances) > 2 and sum(len(i.text) + joiner for i in instances) > _PARALLEL_BUDGET:
        instances.pop()
    text = join_requests([instance.text for instance in instances], rng)
    return Draft(
        decorate(text, rng),
        (spec,),
        [instance.call for instance in instances],
        [instance.ask for instance in instances],
    )


def _companion(rng: Random, first: ToolSpec, chosen: list[ToolSpec]) -> ToolSpec:
    """Another gold tool for a parallel_multiple task: half the time from ``first``'s own domain
    (its siblings when synthesised), else from anywhere."""
    if rng.random() < 0.5:
        if is_synth(first):
            near = [spec for spec in siblings(first) if spec not in chosen]
            if near:
                return near[below(rng, len(near))]
        else:
            pool = by_domain()[first.domain]
            if len(pool) > len(chosen) + 1:
                return pick_tool(rng, exclude=tuple(chosen), pool=pool)
    return _gold(rng, exclude=tuple(chosen))


def _parallel_multiple(rng: Random) -> Draft:
    first = _gold(rng)
    chosen = [first]
    for _ in range(between(rng, 1, 2)):
        chosen.append(_companion(rng, first, chosen))
    pieces: list[Instance] = []
    for index, spec in enumerate(chosen):
        count = 2 if index == 0 and len(chosen) == 2 and rng.random() < 0.5 else 1
        pieces.extend(_calls_of(spec, count, rng))
    permute(rng, pieces)
    golds = tuple(chosen)
    distractors = _distractors(golds, between(rng, 1, 3), rng, looking_alike=between(rng, 1, 2))
    offered = [*chosen, *distractors]
    permute(rng, offered)
    text = join_requests([piece.text for piece in pieces], rng)
    return Draft(
        decorate(text, rng), tuple(offered), [piece.call for piece in pieces], [piece.ask for piece in pieces]
    )


def _irrelevance(rng: Random) -> Draft:
    point = rng.random()
    if point < TURNED_IRRELEVANCE_SHARE:
        turned = _turned_away(rng)
        if turned is not None:
            return turned
    elif point < TURNED_IRRELEVANCE_SHARE + SIBLING_IRRELEVANCE_SHARE:
        return _other_action(rng)
    asked = _gold(rng, allow_meta=False, rich=True)
    instance = instantiate(asked, rng)
    offered: list[ToolSpec] = []
    if rng.random() < LOOKALIKE_IRRELEVANCE_SHARE:
        # Tools about the very thing asked for, none of which does it.
        offered += lookalikes((asked,), between(rng, 1, 3), rng, (asked,))
    for spec in near_misses(
        (asked,), between(rng, 1, 4) - len(offered), rng, same_domain_first=False, allow_meta=False
    ):
        if spec.domain != asked.domain:
            offered.append(spec)
    if not offered:
        unrelated = [spec for spec in tools() if spec.domain != asked.domain and not is_meta(spec)]
        offered.append(unrelated[below(rng, len(unrelated))])
    permute(rng, offered)
    return Draft(decorate(instance.text, rng), tuple(offered), [], [instance.ask])


def _turned_away(rng: Random) -> Draft | None:
    """An irrelevance task that asks for a lookalike's action ("remind me later to ...", "don't do
    it, only check whether it would be accepted: ...") where only the tool that does the thing
    itself is offered (with other distractors, never that lookalike): every value fits it, its
    words are the request's, and calling it does what the person said not to do now. The
    ``multiple`` category asks the same way with the lookalike offered (``_turned``), so the
    wrapper's words decide nothing by themselves. None where no kind applies to the drawn tool."""
    spec = _gold(rng, allow_meta=False, rich=True)
    instance = instantiate(spec, rng)
    asked = _asked_lookalike(spec, instance, rng)
    if asked is None:
        return None
    index, made, text, ask = asked
    count = between(rng, 0, 2)
    others = [
        other
        for other in _distractors((spec,), count + 1, rng, looking_alike=between(rng, 0, 2), allow_meta=False)
        if other is not made and other.name != made.name
    ][:count]
    if rng.random() < SAME_KIND_SHARE:
        # The asked kind is offered too, for another action on the same thing (a reminder to
        # cancel the hotel, not to book it): "a tool of the asked kind is offered -> call it"
        # fails as well.
        near = [lookalike(index, other) for other in _neighbours(spec)]
        kind_of_other = [other for other in near if other is not None and other.name != made.name]
        if kind_of_other:
            others.append(kind_of_other[below(rng, len(kind_of_other))])
    offered = [spec, *others]
    permute(rng, offered)
    return Draft(decorate(text, rng), tuple(offered), [], [ask])


def _neighbours(spec: ToolSpec) -> list[ToolSpec]:
    """Tools doing something else with the thing ``spec`` acts on: a synthesised tool's siblings,
    a library tool's domain (never one the library marks as able to serve its requests)."""
    if is_synth(spec):
        return [other for other in siblings(spec) if not is_meta(other)]
    return [
        other
        for other in by_domain()[spec.domain]
        if other is not spec and not is_meta(other) and not _conflicting(other, spec)
    ]


def _other_action(rng: Random) -> Draft:
    """An irrelevance task whose offered tools act on the very thing the request names but do
    something else with it (track an order, not cancel it): a synthesised tool's siblings, or a
    library tool's neighbours in its domain (never one marked as able to serve the same
    request); first those whose required parameters the request's values could fill by type,
    so that "every required slot got a value" does not tell either."""
    asked = draw_synth(rng) if rng.random() < 0.5 else _gold(rng, allow_meta=False)
    instance = instantiate(asked, rng)
    count = between(rng, 1, 3)
    near = _neighbours(asked)
    permute(rng, near)
    near.sort(key=lambda spec: not _fillable(spec, asked))
    offered = near[:count]
    if len(offered) < count:
        offered += near_misses(
            (asked, *offered), count - len(offered), rng, same_domain_first=False, allow_meta=False
        )
    permute(rng, offered)
    return Draft(decorate(instance.text, rng), tuple(offered), [], [instance.ask])


def _conflicting(spec: ToolSpec, asked: ToolSpec) -> bool:
    """Whether the library marks ``spec`` as able to serve ``asked``'s requests."""
    return bool(spec.conflicts) and not set(spec.conflicts).isdisjoint(asked.conflicts)


def _fillable(spec: ToolSpec, asked: ToolSpec) -> bool:
    """Whether ``asked``'s parameters have a JSON type for each of ``spec``'s required ones."""
    have = Counter(param.type for param in asked.params)
    need = Counter(param.type for param in spec.params if param.required)
    return all(have[kind] >= count for kind, count in need.items())


def _missing_param(rng: Random) -> Draft:
    # Most tasks withhold a value that a "withheld" device can allude to beside a stated value
    # of its type (tasks.devices.unsaid): a withheld value with nothing of its type in the text
    # is one that "no value of the slot's type -> no call" finds.
    beside = rng.random() < UNSAID_MISSING_SHARE
    for attempt in range(64):
        spec = _gold(rng, allow_meta=False)
        candidates = [p for p in spec.params if p.required and p.gen.vague and templates_with(spec, p.name)]
        if beside and attempt < 48:
            candidates = [p for p in candidates if devices_for(p, "withheld")]
        if candidates:
            break
    else:  # pragma: no cover - the library always has such tools
        raise LookupError("no tool with a required parameter that can be alluded to")
    param = candidates[below(rng, len(candidates))]
    options = templates_with(spec, param.name)
    instance = instantiate(spec, rng, options[below(rng, len(options))], vague=param.name)
    offered = [
        spec,
        *_distractors((spec,), between(rng, 0, 2), rng, looking_alike=between(rng, 0, 1), allow_meta=False),
    ]
    permute(rng, offered)
    return Draft(decorate(instance.text, rng), tuple(offered), [], [instance.ask])


# Shares sum to 1. The no-call categories (irrelevance, missing_param) together get 20%, so a
# miner that never calls a tool cannot score well by refusing everything.
CATEGORIES: Mapping[str, Category] = MappingProxyType(
    {
        entry.name: entry
        for entry in (
            Category("simple", _simple, "simple", 0.20, "one tool, one call", title="simple", label="simple"),
            Category(
                "multiple",
                _multiple,
                "multiple",
                0.25,
                "one right call among near-miss tools",
                title="multiple",
                label="multi",
            ),
            Category(
                "parallel",
                _parallel,
                "parallel",
                0.15,
                "the same function several times",
                title="parallel",
                label="par",
                worked=2,
            ),
            Category(
                "parallel_multiple",
                _parallel_multiple,
                "parallel_multiple",
                0.20,
                "several functions, one or more calls each",
                title="parallel_multiple",
                label="par-multi",
                worked=2,
            ),
            Category(
                "irrelevance",
                _irrelevance,
                "irrelevance",
                0.10,
                "no offered tool fits: make no call",
                title="irrelevance",
                label="irrel",
            ),
            Category(
                "missing_param",
                _missing_param,
                "irrelevance",
                0.10,
                "a required value is missing from the request: ask, make no call",
                title="missing_param",
                label="miss-param",
            ),
        )
    }
)


def default_mix() -> dict[str, float]:
    """Category -> default share, from the registry."""
    return {name: entry.share for name, entry in CATEGORIES.items()}
