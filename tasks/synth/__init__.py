"""Synthesised tools: tools no public library holds, composed per task from open vocabularies.

A family (one module under ``tasks.synth.families``) names a domain, its things (composed from
parts: "basement" + "chiller") and its actions, each a tool name, description, parameters (nested
objects, arrays of objects, enums, flags) and request templates written around the thing. A
synthesised tool is one action applied to one thing: ``report_basement_chiller_fault``. Its
values are drawn and its gold answer built exactly as for a library tool (``tasks.builtin``), so
the same checker and every output format apply.

``FAMILIES`` is the registry: adding a family is adding a module and its entry here; the
generator is not touched. The space is finite, so each tool is built once (same key, same
``ToolSpec`` object) and the caches keyed by tool stay bounded.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from random import Random

from tasks.rand import below
from tasks.spec import ToolSpec
from tasks.synth.families import courses, facilities, garden, lab, logistics
from tasks.synth.model import THING, Action, Family

__all__ = ["FAMILIES", "SYNTH_DOMAIN_PREFIX", "Action", "Family", "draw_synth", "is_synth", "siblings"]

#: The families, in order: tasks draw families, actions and things by index.
FAMILIES: tuple[Family, ...] = (
    facilities.FAMILY,
    lab.FAMILY,
    logistics.FAMILY,
    garden.FAMILY,
    courses.FAMILY,
)

#: A synthesised tool's ``domain`` is this prefix and its family's domain.
SYNTH_DOMAIN_PREFIX = "synth."


#: Each synthesised tool's (family, action, thing), filled as ``synth_tool`` builds them.
_KEYS: dict[ToolSpec, tuple[int, int, int]] = {}


def _identifier_words(text: str) -> str:
    return "_".join(re.findall(r"[a-z0-9]+", text.lower()))


@cache
def synth_tool(family: int, action: int, thing: int) -> ToolSpec:
    """The tool of ``FAMILIES[family]``'s action ``action`` applied to its thing ``thing``."""
    entry = FAMILIES[family]
    act: Action = entry.actions[action]
    said = entry.things[thing]
    params = tuple(
        replace(param, description=param.description.replace(THING, said))
        if THING in param.description
        else param
        for param in act.params
    )
    spec = ToolSpec(
        act.name.replace(THING, _identifier_words(said)),
        SYNTH_DOMAIN_PREFIX + entry.domain,
        act.description.replace(THING, said),
        params,
        tuple(template.replace(THING, said) for template in act.templates),
    )
    _KEYS[spec] = (family, action, thing)
    return spec


def draw_synth(rng: Random) -> ToolSpec:
    """A synthesised tool: a family, one of its actions and one of its things, drawn uniformly."""
    family = below(rng, len(FAMILIES))
    entry = FAMILIES[family]
    key = (family, below(rng, len(entry.actions)), below(rng, len(entry.things)))
    return synth_tool(*key)


def is_synth(spec: ToolSpec) -> bool:
    """Whether a tool was synthesised (not a library tool)."""
    return spec.domain.startswith(SYNTH_DOMAIN_PREFIX)


def siblings(spec: ToolSpec) -> tuple[ToolSpec, ...]:
    """The other actions of a synthesised tool's family on the same thing: near misses that
    share its words (the thing) but do something else. () for any other tool."""
    key = _KEYS.get(spec)
    if key is None:
        return ()
    family, action, thing = key
    return tuple(
        synth_tool(family, other, thing) for other in range(len(FAMILIES[family].actions)) if other != action
    )
