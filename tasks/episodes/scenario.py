"""What an environment's scenario generator returns: the turns of a conversation and their plans.

An environment module provides ``scenario(env, rng) -> Scenario``. It may look at the state it
just built (it knows where it planted the bug, which mail holds the code) to write the reference
plan: the calls a correct agent makes, whose later arguments depend on what earlier calls
observe. The episode categories (tasks.episodes.categories) derive their variants from it:
miss_param from ``withheld``, miss_func by holding back the first call's tool, long_context by
a larger ``size``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Scenario", "TurnDraft", "stated"]


@dataclass
class TurnDraft:
    """One user turn as written by the generator (template wording, phrased later)."""

    #: What the user says.
    text: str
    #: The values the text states, as ``tasks.builtin.Instance.ask`` values: ``{"slot", "about",
    #: "said", "mentions": [[kind, [forms...]]]}`` (``stated`` builds one), for the phrasing stage.
    values: list[dict[str, Any]]
    #: The reference calls, in order: ``{"name": tool, "arguments": {...}}``.
    plan: list[dict[str, Any]]
    #: Values the user asked to be told: each must appear in an observation of the miner's calls
    #: in this turn or in its text answer (numbers compared as numbers, text case-insensitively).
    needed: list[Any] = field(default_factory=list)
    #: What the person wants, in words (the phrasing model's "purpose").
    purpose: str = ""


@dataclass
class Scenario:
    """A conversation in one environment."""

    #: Tool names offered in every turn (the plan's tools and some near misses).
    tools: list[str]
    turns: list[TurnDraft]
    #: For miss_param: the first turn's text with one value left out (only alluded to), the entry
    #: describing it (``{"slot", "about", "said": the allusion, "forbidden": [forms...]}``), and the
    #: follow-up turn that supplies it (with its stated values). None: no miss_param variant.
    withheld_text: str | None = None
    withheld: dict[str, Any] | None = None
    supply_text: str | None = None
    supply_values: list[dict[str, Any]] = field(default_factory=list)


def stated(slot: str, about: str, said: str, *forms: str, kind: str = "text") -> dict[str, Any]:
    """A stated value: ``said`` is the text used, ``forms`` other accepted spellings."""
    return {"slot": slot, "about": about, "said": said, "mentions": [[kind, [said, *forms]]]}
