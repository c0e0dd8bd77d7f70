"""Deterministic task sets: ``generate`` for a round, ``variant`` for one miner.

A set draws from one ``random.Random`` seeded from SHA-256(round seed, "plan"), task after task
(seeding a Random costs as much as drawing a whole task, so it is seeded once per set, not per
task); each task still carries its own seed, SHA-256(round seed, "task", index), which names it
and roots its variants. Nothing depends on hash randomisation or dict order.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from random import Random
from typing import Any

from tasks.categories import CATEGORIES, default_mix
from tasks.devices import scene_scope
from tasks.errors import TaskConfigError
from tasks.model import GENERATOR_VERSION, Task
from tasks.rand import below, permute
from tasks.rewrite import rewrite_property, rewrite_text
from tasks.seeding import reseed, rng_from, seed_bytes, sub_seed, sub_seeder
from tasks.shuffle import ToolPlan, plan_tool, replan_reworded, shuffle_planned, shuffle_surface
from tasks.spec import ToolSpec, openai_tool

__all__ = ["BUILTIN", "Source", "generate", "redraw", "variant"]

BUILTIN = "builtin"


@dataclass(frozen=True)
class Source:
    """A task source and its share of a round. External sources carry their loaded pool."""

    name: str
    share: float
    tasks: tuple[Task, ...] = ()


def _allocate(shares: Sequence[tuple[str, float]], n: int) -> list[str]:
    """``n`` slots split by share with the largest-remainder method (ties by listed order)."""
    total = sum(share for _, share in shares)
    exact = [(name, share * n / total) for name, share in shares]
    counts = {name: int(value) for name, value in exact}
    left = n - sum(counts.values())
    by_remainder = sorted(range(len(exact)), key=lambda i: (-(exact[i][1] - int(exact[i][1])), i))
    for index in by_remainder[:left]:
        counts[exact[index][0]] += 1
    return [name for name, _ in shares for _ in range(counts[name])]


def _check_shares(shares: Mapping[str, float], what: str) -> list[tuple[str, float]]:
    checked: list[tuple[str, float]] = []
    for name, share in shares.items():
        if not isinstance(share, int | float) or share < 0 or share != share:
            raise TaskConfigError(f"{what} share for {name!r} must be a non-negative number, got {share!r}")
        if share > 0:
            checked.append((name, float(share)))
    if not checked:
        raise TaskConfigError(f"{what} shares must not all be zero")
    return checked


def _sources(sources: Sequence[Source] | Mapping[str, float] | None) -> list[Source]:
    if sources is None:
        return [Source(BUILTIN, 1.0)]
    if isinstance(sources, Mapping):
        listed = [Source(name, share) for name, share in sources.items()]
    else:
        listed = list(sources)
    for source in listed:
        if source.name != BUILTIN and source.share > 0 and not source.tasks:
            raise TaskConfigError(f"source {source.name!r} has a share but no tasks were loaded for it")
    return listed


def generate(
    seed: bytes | str | int,
    n: int,
    mix: Mapping[str, float] | None = None,
    sources: Sequence[Source] | Mapping[str, float] | None = None,
) -> list[Task]:
    """``n`` tasks for a seed: the same seed gives the same tasks on any machine.

    ``mix`` maps builtin categories to shares (default: the registry's shares); ``sources``
    splits the round between the builtin generator and loaded external pools (see
    ``tasks.sources.load_sources``). Every task's surface is shuffled with its own seed.
    """
    if n < 0:
        raise TaskConfigError(f"n must not be negative, got {n}")
    with _collection_paused():
        return _generate(seed_bytes(seed), n, mix, sources)


def _generate(
    root: bytes,
    n: int,
    mix: Mapping[str, float] | None,
    sources: Sequence[Source] | Mapping[str, float] | None,
) -> list[Task]:
    mix = default_mix() if mix is None else mix
    unknown = sorted(set(mix) - set(CATEGORIES))
    if unknown:
        raise TaskConfigError(
            f"unknown categories in mix: {', '.join(unknown)} (known: {', '.join(CATEGORIES)})"
        )
    category_shares = _check_shares(mix, "category")
    listed = _sources(sources)
    source_shares = _check_shares({s.name: s.share for s in listed}, "source")
    pools = {source.name: source.tasks for source in listed}
    slots = _allocate(source_shares, n)
    builtin_slots = iter(_allocate(category_shares, slots.count(BUILTIN)))
    plan = [(name, next(builtin_slots) if name == BUILTIN else "") for name in slots]
    rng = rng_from(sub_seed(root, b"plan"))
    permute(rng, plan)
    task_seed = sub_seeder(root, b"task")
    return [
        _make_task(task_seed(index), rng, name, category, pools)
        for index, (name, category) in enumerate(plan)
    ]


_PAUSE_LOCK = threading.Lock()
#: Open ``_collection_paused`` blocks (any thread), and whether the outermost one disabled the
#: collector (it stays as it was found when something else had disabled it).
_pauses = 0
_disabled_here = False


@contextmanager
def _collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a batch of tasks is built, back as it was after.

    Every task built survives (the batch returns them all), so each full collection during a batch
    walks the whole heap, the tasks built so far included, and frees nothing: a full collection
    runs whenever the survivors reach a quarter of the older objects, three times in 2,000 tasks,
    ~25% of the time. Building tasks makes no reference cycles (a test holds it), so nothing is
    left for the collector that it would have freed; reference counting frees the rest as usual.
    """
    global _pauses, _disabled_here
    with _PAUSE_LOCK:
        if _pauses == 0:
            _disabled_here = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _pauses -= 1
            if _pauses == 0 and _disabled_here:
                gc.enable()


def redraw(task: Task, seed: bytes | str | int, sources: Sequence[Source] | None = None) -> Task:
    """A newly drawn task like ``task``: the same builtin category, or a draw from the same
    external pool (``sources`` must hold it). Replaces a task whose request could not be phrased."""
    if task.source == BUILTIN:
        return generate(seed, 1, mix={task.category: 1.0})[0]
    for source in sources or ():
        if source.name == task.source and source.tasks:
            return generate(seed, 1, sources=[Source(source.name, 1.0, source.tasks)])[0]
    raise TaskConfigError(f"no loaded pool for source {task.source!r} to draw a replacement from")


@lru_cache(maxsize=8192)
def _spec_plan(spec: ToolSpec) -> ToolPlan:
    """The shuffle plan of a tool as specified: its OpenAI dict is shared and never mutated.
    Bounded: synthesised tools and lookalikes make a large (finite) space of specs."""
    return plan_tool(openai_tool(spec))


def _offered_plan(spec: ToolSpec, rng: Random) -> ToolPlan:
    """The shuffle plan of a tool as this round offers it: every description reworded
    (``tasks.rewrite``), so the text does not name the library tool it was made from."""
    plan = _spec_plan(spec)
    # What ``rewrite_tool(plan.tool, rng)`` rewords, in its order (the description, then each
    # property), without building the reworded dicts that ``shuffle_planned`` would copy again.
    description = (
        rewrite_text(plan.description, "tool", rng) if isinstance(plan.description, str) else plan.description
    )
    return replan_reworded(
        plan, description, [rewrite_property(schema, rng) for _, schema, _ in plan.properties]
    )


def _make_task(
    task_seed: bytes, rng: Random, source: str, category: str, pools: Mapping[str, tuple[Task, ...]]
) -> Task:
    seed_hex = task_seed.hex()
    if source == BUILTIN:
        # The scene (today, said in a system line) is shared by every request of the task.
        entry = CATEGORIES[category]
        with scene_scope(rng, entry.worked) as scene:
            draft = entry.build(rng)
        surface = shuffle_planned([_offered_plan(spec, rng) for spec in draft.tools], draft.expected, rng)
        messages = [
            {"role": "system", "content": scene.system_line()},
            {"role": "user", "content": draft.request},
        ]
        intent: dict[str, Any] | None = {
            "asks": draft.asks,
            "example": draft.request,
            "today": scene.today.isoformat(),
        }
    else:
        pool = pools[source]
        base = pool[below(rng, len(pool))]
        category = base.category
        surface = shuffle_surface(base.tools, base.expected, rng)
        messages = [dict(message) for message in base.messages]
        intent = None
    return Task(
        id=f"{source}-{category}-{seed_hex[:16]}",
        category=category,
        messages=messages,
        tools=surface.tools,
        expected=surface.expected,
        seed=seed_hex,
        source=source,
        generator_version=GENERATOR_VERSION,
        intent=intent,
    )


_SCRATCH = threading.local()


def _scratch_rng() -> Random:
    """This thread's reusable Random for ``variant`` (reseeded per call, see ``seeding.reseed``).

    Nothing reached from ``variant`` takes it again, so one per thread is enough.
    """
    rng: Random | None = getattr(_SCRATCH, "rng", None)
    if rng is None:
        rng = _SCRATCH.rng = Random()
    return rng


def variant(task: Task, seed: bytes | str | int) -> Task:
    """The same task with a different surface (names, order, descriptions), for one miner.

    Tools and expected answers are renamed together; every function name changes, so an answer
    written for ``task`` (or for another miner's variant) does not pass on this one.
    """
    variant_seed = sub_seed(seed_bytes(seed), f"variant|{task.id}|{task.seed}".encode())
    rng = reseed(_scratch_rng(), variant_seed)
    surface = shuffle_surface(task.tools, task.expected, rng)
    return Task(
        id=task.id,
        category=task.category,
        messages=[dict(message) for message in task.messages],
        tools=surface.tools,
        expected=surface.expected,
        seed=variant_seed.hex(),
        source=task.source,
        generator_version=task.generator_version,
    )
