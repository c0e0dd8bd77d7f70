"""Tool designs: each round, an environment offers its canonical actions through one of several
API surfaces, so that a call sequence written for one round does not carry over to the next.

A design (one module each, registered in ``DESIGNS``) declares the tools it offers (schemas and
descriptions), translates each offered call into the environment's canonical call (and the
observation back into its own shape: pages, summaries), and translates a canonical reference plan
into its own calls (``translate_scenario``). Scenarios are written against canonical tool names,
so every scenario works under every design; the episode records its design (``Episode.design``)
and ``designed_class`` builds the environment it is played on.

Adding a design is adding its module and a line in ``DESIGNS`` (with its share of the draws).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import cache
from random import Random
from typing import Any

from tasks.episodes.designs.base import Design, DesignedEnvironment, DesignTool, wanted_values
from tasks.episodes.environment import Environment, ToolError
from tasks.episodes.environments import environment_class
from tasks.episodes.scenario import Scenario, TurnDraft
from tasks.errors import TaskConfigError
from tasks.registry import registered_class

__all__ = [
    "DESIGNS",
    "DESIGN_SHARES",
    "Design",
    "DesignTool",
    "DesignedEnvironment",
    "design",
    "designed_class",
    "draw_design",
    "translate_scenario",
]

#: Design name -> module (each defines one ``Design`` subclass whose ``name`` is the key).
DESIGNS: dict[str, str] = {
    "canonical": "tasks.episodes.designs.canonical",
    "single_tool": "tasks.episodes.designs.single_tool",
    "paged": "tasks.episodes.designs.paged",
    "summary_get": "tasks.episodes.designs.summary_get",
    "search_filters": "tasks.episodes.designs.search_filters",
}
#: How often each design is drawn for an episode (the environment's own surface is one of them).
DESIGN_SHARES: Mapping[str, float] = {name: 1.0 for name in DESIGNS}

#: The most reference calls a turn may have after translation: the smallest step cap (8) less the
#: step of the final answer. A translation longer than that falls back to the canonical design.
MAX_TURN_CALLS = 7


@cache
def design(name: str) -> Design:
    """The design registered as ``name``."""
    try:
        return registered_class(DESIGNS, name, Design, "tool design")()
    except KeyError as error:  # a design flag's mistake: one line, not a lookup's traceback
        raise TaskConfigError(str(error.args[0])) from None


@cache
def designed_class(environment: str, name: str) -> type[DesignedEnvironment]:
    """The environment ``environment`` as offered by design ``name``: a class built once, whose
    instances wrap a fresh environment (same constructor, ``from_config`` too)."""
    base, chosen = environment_class(environment), design(name)
    tools = chosen.tools(base)
    attributes = {
        "base": base,
        "design": chosen,
        "name": base.name,
        "observable": base.observable,
        "FORBIDDEN": base.FORBIDDEN,
        "_tools": tools,
    }
    return type(f"{base.__name__}As{name.title().replace('_', '')}", (DesignedEnvironment,), attributes)


def draw_design(rng: Random, shares: Mapping[str, float] | None = None) -> str:
    """A design name drawn by ``shares`` (default ``DESIGN_SHARES``)."""
    table = [(name, float(share)) for name, share in (shares or DESIGN_SHARES).items() if share > 0]
    unknown = [name for name, _ in table if name not in DESIGNS]
    if unknown or not table:
        raise TaskConfigError(f"tool design shares must name known designs ({', '.join(DESIGNS)})")
    point = rng.random() * sum(share for _, share in table)
    for name, share in table:
        point -= share
        if point < 0:
            return name
    return table[-1][0]


def offered_names(cls: type[Environment], name: str, canonical: list[str]) -> list[str]:
    """The design's tools that serve the canonical tools ``canonical``, in their order."""
    tools = designed_class(cls.name, name).tools()
    chosen: dict[str, None] = {}
    for wanted in canonical:
        for tool in tools.values():
            if wanted in tool.serves:
                chosen.setdefault(tool.name)
    return list(chosen)


def _observe(env: Environment, call: dict[str, Any]) -> Any:
    """A reference call's observation, the tool run directly (its arguments are the generator's
    own: no journal for an undo, no bound on the result); a refusal is an error observation."""
    try:
        return type(env).tools()[call["name"]].function(env, **copy.deepcopy(call["arguments"]))
    except ToolError as error:
        return {"error": str(error)}


def translate_scenario(env: Environment, name: str, scenario: Scenario) -> Scenario | None:
    """``scenario`` (canonical names) as design ``name`` offers it, or None when a turn's plan
    would grow past ``MAX_TURN_CALLS``. ``env`` is the environment the scenario was drawn on, in
    its initial state: a design whose plan reads observations replays the canonical plan on it
    (so it is changed; the generator does not use it again)."""
    chosen = design(name)
    cls = type(env)
    turns: list[TurnDraft] = []
    later = [call for turn in scenario.turns for call in turn.plan]
    # Only a listing's observation shapes a plan: replay up to the last listing call, no further.
    reads = [index for index, call in enumerate(later) if call["name"] in cls.listings]
    replayed = reads[-1] + 1 if chosen.reads_observations and reads else 0
    done = 0
    for draft in scenario.turns:
        if done < replayed:
            env.begin_turn()
        plan: list[dict[str, Any]] = []
        for call in draft.plan:
            done += 1
            observation = _observe(env, call) if done <= replayed else None
            wanted = wanted_values(later[done:], draft.needed) if observation is not None else []
            plan.extend(chosen.plan_call(cls, call, observation, wanted))
        if len(plan) > MAX_TURN_CALLS:
            return None
        turns.append(copy.copy(draft))
        turns[-1].plan = plan
    translated = copy.copy(scenario)
    translated.tools = offered_names(cls, name, scenario.tools)
    translated.turns = turns
    return translated
