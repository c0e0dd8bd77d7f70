"""Composed scenarios: a conversation built per seed from parts, so its plan follows the data.

A fixed list of scenario kinds, each with one plan, is a lookup table a script can replay. Here a
scenario is a random composition of 2-4 parts drawn from an environment's registry:

* a **goal** (``@goal``): one thing the user wants done or told, written as a clause ("send 40.00
  to Ana Lopez from my checking account"). It may need a **selection** only visible by calling
  and comparing ("the cheapest kettle in stock", "whoever sent the mail about the invoice"),
  small arithmetic ("my share of the 120.00 dinner we split four ways") or a relative date, and
  may come back in a later turn as a **correction** ("actually, make it three in total");
* a **condition** (``@condition``): a test on the observed state ("if my savings balance is
  under 900.00") that joins two goals, "if C, A; otherwise B", or guards one, "if C, A". The
  reference plan holds the probe's reads and the branch the seeded state takes; the text states
  both branches, so which calls follow depends on what the reads return.

The parts are played, as they are drawn, on the environment the scenario function was given (its
state is put back afterwards): each part's reads and writes run on the state the earlier parts
left, and a part computes its arguments from those observations, as a correct agent would. The
composed plan, replayed on a fresh copy, reaches the same state.

Parts are registry entries in one module per environment (``GOAL_MODULES``), so an environment
grows by adding functions; ``compose(env, rng)`` is what an environment's ``scenario`` calls.
"""

from __future__ import annotations

import importlib
import pickle
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from random import Random
from typing import Any

from tasks.episodes.environment import Environment, ToolError
from tasks.episodes.scenario import Scenario, TurnDraft, offered_tools
from tasks.rand import between, choose

__all__ = [
    "COMPOSED_SHARE",
    "GOAL_MODULES",
    "MAX_TURN_CALLS",
    "Abandon",
    "Condition",
    "Context",
    "Goal",
    "Part",
    "Probe",
    "Withhold",
    "compose",
    "condition",
    "goal",
    "goals_of",
    "plan_shape",
    "scenario_of",
]

#: Where each environment's parts live; an environment absent here keeps its fixed scenarios.
GOAL_MODULES: dict[str, str] = {
    "bank": "tasks.episodes.goals.bank",
    "shop": "tasks.episodes.goals.shop",
    "mail_calendar": "tasks.episodes.goals.mail_calendar",
    "home": "tasks.episodes.goals.home",
    "workspace": "tasks.episodes.goals.workspace",
}
#: Reads that change something besides the observable state (reading a mail marks it read): a
#: branch the state does not take does not run them.
SIDE_EFFECTS = frozenset({"read_mail"})
#: The most calls a composed turn's plan makes (a category's step cap is 8 steps a turn, and a
#: tool design may add a call or two: tasks.episodes.designs).
MAX_TURN_CALLS = 5
#: The share of an environment's scenarios that are composed (the rest are its fixed kinds).
COMPOSED_SHARE = 0.95


class Abandon(Exception):
    """A part does not apply to the state as it stands (raised before it changed anything)."""


@dataclass
class Withhold:
    """How a part's clause reads with one value left out (a miss_param episode's first turn)."""

    text: str
    entry: dict[str, Any]
    supply_text: str
    supply_values: list[dict[str, Any]]


@dataclass
class Part:
    """A goal as drawn: its clause, the values the clause states, what the user asked to be told,
    and optionally its withheld form and a correction for a later turn. The plan is the calls the
    goal ran through ``Context.run``."""

    text: str
    values: list[dict[str, Any]]
    needed: list[Any] = field(default_factory=list)
    purpose: str = ""
    withhold: Withhold | None = None
    #: A later turn that changes this goal's outcome ("actually, make it Thursday"), drawn when
    #: that turn comes (on the state then).
    correction: Callable[[Context], Part | None] | None = None
    plan: list[dict[str, Any]] = field(default_factory=list)
    #: Tools of the branch not taken (offered too, so the offer does not give the branch away).
    also_offered: list[str] = field(default_factory=list)


@dataclass
class Probe:
    """A condition as observed: the predicate in words, the values it states, whether it holds."""

    text: str
    values: list[dict[str, Any]]
    holds: bool


@dataclass(frozen=True)
class Goal:
    name: str
    build: Callable[[Context], Part | None]
    weight: float
    #: Whether the goal may be a branch of a condition (not where its clause is a condition itself).
    branch: bool
    #: Whether its part can withhold a value (``Part.withhold``): such goals open half the
    #: conversations, so that most have a missing-parameter variant.
    withholds: bool
    #: The most calls its plan makes (a condition's branch must fit a turn with the probe's reads).
    longest: int


@dataclass(frozen=True)
class Condition:
    name: str
    probe: Callable[[Context], Probe | None]
    weight: float


_GOALS: dict[str, list[Goal]] = {}
_CONDITIONS: dict[str, list[Condition]] = {}


def goal(
    environment: str,
    weight: float = 1.0,
    *,
    branch: bool = True,
    withholds: bool = False,
    longest: int = 4,
) -> Callable[[Callable[[Context], Part | None]], Any]:
    """Register a goal of ``environment``: ``build(ctx)`` runs its calls with ``ctx.run`` and
    returns its ``Part`` (None, or ``Abandon`` before any change, where the state does not allow it)."""

    def register(build: Callable[[Context], Part | None]) -> Callable[[Context], Part | None]:
        _GOALS.setdefault(environment, []).append(
            Goal(build.__name__, build, weight, branch, withholds, longest)
        )
        return build

    return register


def condition(environment: str, weight: float = 1.0) -> Callable[[Callable[[Context], Probe | None]], Any]:
    """Register a condition of ``environment``: ``probe(ctx)`` reads the state (``ctx.run``, reads
    only) and returns the predicate and whether it holds."""

    def register(probe: Callable[[Context], Probe | None]) -> Callable[[Context], Probe | None]:
        _CONDITIONS.setdefault(environment, []).append(Condition(probe.__name__, probe, weight))
        return probe

    return register


@cache
def goals_of(environment: str) -> tuple[tuple[Goal, ...], tuple[Condition, ...]]:
    """The registered goals and conditions of an environment (its module imported once)."""
    module = GOAL_MODULES.get(environment)
    if module is None:
        return (), ()
    importlib.import_module(module)
    return tuple(_GOALS.get(environment, ())), tuple(_CONDITIONS.get(environment, ()))


@cache
def _stand_ins(environment: str) -> dict[str, str]:
    """A parts module's ``STAND_INS``: tools another tool can stand in for (the workspace's shell
    runs the tests too)."""
    module = GOAL_MODULES.get(environment)
    return dict(getattr(importlib.import_module(module), "STAND_INS", {})) if module else {}


class Context:
    """What a part sees: the environment as the earlier parts left it, the draw, and what the
    conversation already observed (``known``: a read done once need not be repeated)."""

    def __init__(
        self, env: Environment, rng: Random, known: dict[str, Any] | None = None, *, dry: bool = False
    ) -> None:
        self.env = env
        #: Drawing the words of a branch the state does not take: calls that change anything (and
        #: reads with a side effect, ``SIDE_EFFECTS``) are recorded but not run.
        self.dry = dry
        self.rng = rng
        self.known: dict[str, Any] = {} if known is None else known
        self.calls: list[dict[str, Any]] = []
        self.changed = False
        self._tools = type(env)._tools
        self._serial = 0
        self._fresh: set[str] = set(self.known)

    def slot(self, name: str) -> str:
        """A slot name no other value of the conversation has (a withheld value is found by it)."""
        self._serial += 1
        return f"{name}{self._serial}"

    def run(self, tool: str, /, **arguments: Any) -> Any:
        """Run one call of the plan on the state and record it; its result. A refused read
        abandons the part; a refused write after the part changed the state is a bug."""
        info = self._tools[tool]
        if self.dry and (info.mutates or tool in SIDE_EFFECTS):
            self.calls.append({"name": tool, "arguments": arguments})
            return defaultdict(str)
        try:
            result = info.function(self.env, **{key: _copied(value) for key, value in arguments.items()})
        except ToolError as error:
            if self.changed:
                raise RuntimeError(f"a composed plan's {tool} was refused: {error}") from None
            raise Abandon(str(error)) from None
        self.calls.append({"name": tool, "arguments": arguments})
        self.changed = self.changed or info.mutates
        return result

    def note(self, tool: str, /, **arguments: Any) -> None:
        """Record a read whose result the generator already knows (the file a function is in),
        without running it: some reads (a grep over a repository) cost more than the rest of the
        composition."""
        assert not self._tools[tool].mutates and tool not in SIDE_EFFECTS, tool
        self.calls.append({"name": tool, "arguments": arguments})

    def once(self, key: str, tool: str, /, **arguments: Any) -> Any:
        """A read the conversation needs once (the account ids): run it the first time, then
        remember its result."""
        if key not in self.known:
            self.known[key] = self.run(tool, **arguments)
        return self.known[key]

    def take(self) -> list[dict[str, Any]]:
        """The calls recorded since the last take (they now belong to a part)."""
        calls, self.calls, self.changed = self.calls, [], False
        self._fresh = set(self.known)
        return calls

    def discard(self, known: set[str] | None = None) -> None:
        """Drop the calls recorded since the last take, and what they taught (``known`` keys
        not in the given set, by default those learnt since the last take)."""
        keep = self._fresh if known is None else known
        for key in [key for key in self.known if key not in keep]:
            del self.known[key]
        self.calls, self.changed = [], False


def _copied(value: Any) -> Any:
    """An argument as a tool may keep it (a list of attendees) without sharing the plan's."""
    return list(value) if isinstance(value, list) else value


def _attempt(ctx: Context, build: Callable[[Context], Part | None]) -> Part | None:
    """One goal on the state; None (nothing recorded) where it does not apply."""
    try:
        part = build(ctx)
    except Abandon:
        part = None
    if part is None:
        if ctx.changed and not ctx.dry:
            raise RuntimeError(f"{build.__name__} gave up after changing the state")
        ctx.discard()
        return None
    part.plan = ctx.take()
    return part


def _dry(ctx: Context, build: Callable[[Context], Part | None]) -> Part | None:
    """A goal drawn on the state without changing it: its words, for the branch the state does not
    take (its writes are not run, so what it would read after them is not checked)."""
    shadow = Context(ctx.env, ctx.rng, dict(ctx.known), dry=True)
    return _attempt(shadow, build)


def _pick(rng: Random, entries: tuple[Any, ...]) -> Any:
    total = sum(entry.weight for entry in entries)
    point = rng.random() * total
    for entry in entries:
        point -= entry.weight
        if point < 0:
            return entry
    return entries[-1]


def _draw_goal(ctx: Context, goals: tuple[Goal, ...], tries: int = 6) -> Part | None:
    for _ in range(tries):
        part = _attempt(ctx, _pick(ctx.rng, goals).build)
        if part is not None:
            return part
    return None


def _conditional(ctx: Context, goals: tuple[Goal, ...], conditions: tuple[Condition, ...]) -> Part | None:
    """``if C, A; otherwise B`` (or ``if C, A``): the probe's reads, then the branch that holds."""
    entry = _pick(ctx.rng, conditions)
    before = set(ctx.known)
    try:
        probe = entry.probe(ctx)
    except Abandon:
        probe = None
    if probe is None:
        ctx.discard()
        return None
    reads = ctx.take()
    otherwise = ctx.rng.random() < 0.6
    room = MAX_TURN_CALLS - len(reads)
    branches = tuple(entry for entry in goals if entry.branch and entry.longest <= room)
    if not branches:
        ctx.discard(before)
        return None
    first = _pick(ctx.rng, branches).build
    second = _pick(ctx.rng, branches).build if otherwise else None
    taken, untaken = (first, second) if probe.holds else (second, first)
    dry = _dry(ctx, untaken) if untaken is not None else None
    live = None
    if untaken is None or dry is not None:
        live = _attempt(ctx, taken) if taken is not None else None
    if (untaken is not None and dry is None) or (taken is not None and live is None):
        ctx.discard(before)
        return None
    then, other = (live, dry) if probe.holds else (dry, live)
    assert then is not None
    text = f"if {probe.text}, {then.text}"
    if other is not None:
        text += f"; otherwise, {other.text}"
    values = [*probe.values, *then.values, *(other.values if other is not None else ())]
    plan = reads + (live.plan if live is not None else [])
    part = Part(text, values, list(live.needed) if live is not None else [], "act on what the state shows")
    part.plan = plan
    part.also_offered = [c["name"] for c in dry.plan] if dry is not None else []
    return part


_OPENERS = ("", "Please ", "Could you ", "I need you to ", "Hi! ")
_THENS = ("Then", "After that,", "Next,", "Once that's done,", "Also,")


def _sentence(clauses: list[str], rng: Random) -> str:
    """The clauses of one turn as the user's message."""
    first = clauses[0]
    opener = "" if first.startswith("if ") else choose(rng, _OPENERS)
    head = opener + (first[0].upper() + first[1:] if opener in ("", "Hi! ") else first)
    end = "?" if opener == "Could you " else "."
    text = head + end
    for clause in clauses[1:]:
        text += f" {choose(rng, _THENS)} {clause}."
    return text


def plan_shape(scenario: Scenario) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]:
    """What a table of plans would have to hold: per turn, the calls' tools and argument names."""
    return tuple(
        tuple((step["name"], tuple(sorted(step["arguments"]))) for step in turn.plan)
        for turn in scenario.turns
    )


def compose(env: Environment, rng: Random) -> Scenario | None:
    """A composed scenario over ``env``, or None where the environment has no parts or fewer than
    two applied. The parts play on ``env`` itself; its state is put back before this returns (a
    pickled copy of its attributes: several times cheaper than a deep copy or a rebuild)."""
    goals, conditions = goals_of(type(env).name)
    if not goals:
        return None
    saved = pickle.dumps(env.__dict__, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        return _compose(env, rng, goals, conditions)
    finally:
        env.__dict__.clear()
        env.__dict__.update(pickle.loads(saved))


def _compose(
    env: Environment, rng: Random, goals: tuple[Goal, ...], conditions: tuple[Condition, ...]
) -> Scenario | None:
    ctx = Context(env, rng)
    wanted = between(rng, 2, 4)
    # Turns as lists of parts, drawn in order (each part plays on the state the earlier left); a
    # correction is a turn of its own, right after the turn of the goal it corrects.
    groups: list[list[Part]] = [[]]
    corrections: set[int] = set()
    drawn = 0
    for _ in range(2 * wanted + 2):
        if drawn == wanted:
            break
        opening = tuple(entry for entry in goals if entry.withholds) if drawn == 0 else ()
        if opening and rng.random() < 0.5:
            part = _draw_goal(ctx, opening, 1)
        elif conditions and rng.random() < 0.35:
            part = _conditional(ctx, goals, conditions)
        else:
            part = _draw_goal(ctx, goals, 1)
        if part is None:
            continue
        drawn += 1
        if sum(len(earlier.plan) for earlier in groups[-1]) + len(part.plan) > MAX_TURN_CALLS:
            groups.append([])  # within the step cap of a turn (8 steps: the calls and an answer)
        groups[-1].append(part)
        fix = _attempt(ctx, part.correction) if part.correction is not None and rng.random() < 0.5 else None
        if fix is not None:
            corrections.add(len(groups))
            groups += [[fix], []]
        elif drawn < wanted and rng.random() < 0.3:
            groups.append([])
    if drawn < 2:
        return None
    turns: list[TurnDraft] = []
    offered: list[str] = []
    for index, group in enumerate(groups):
        if not group:
            continue
        texts = [part.text for part in group]
        text = texts[0][0].upper() + texts[0][1:] + "." if index in corrections else _sentence(texts, rng)
        values = [value for part in group for value in part.values]
        plan = [step for part in group for step in part.plan]
        needed = [value for part in group for value in part.needed]
        purpose = "; ".join(dict.fromkeys(part.purpose for part in group if part.purpose))
        turns.append(TurnDraft(text, values, plan, needed, purpose))
        offered += [step["name"] for step in plan] + [name for part in group for name in part.also_offered]
    tools = offered_tools(type(env), offered, rng)
    stand_in = _stand_ins(type(env).name).get(turns[0].plan[0]["name"]) if turns[0].plan else None
    if stand_in in tools:
        return None  # holding back the first call's tool would leave one that does the same
    first = groups[0][0] if groups[0] else None
    held = first.withhold if first is not None else None
    if held is None:
        return Scenario(tools, turns)
    withheld_text = _sentence([held.text, *(part.text for part in groups[0][1:])], rng)
    lowered = withheld_text.lower()
    if any(str(form).lower() in lowered for form in held.entry["forbidden"]):
        return Scenario(tools, turns)  # another clause says the withheld value
    return Scenario(
        tools,
        turns,
        withheld_text=withheld_text,
        withheld=held.entry,
        supply_text=held.supply_text,
        supply_values=held.supply_values,
    )


def scenario_of(env: Environment, rng: Random, fixed: Callable[[Environment, Random], Scenario]) -> Scenario:
    """An environment module's ``scenario``: composed (``COMPOSED_SHARE`` of them), else one of
    its fixed kinds (``fixed``)."""
    if rng.random() < COMPOSED_SHARE:
        composed = compose(env, rng)
        if composed is not None:
            return composed
    return fixed(env, rng)
