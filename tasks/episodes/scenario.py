"""What an environment's scenario generator returns: the turns of a conversation and their plans.

An environment module provides ``scenario(env, rng) -> Scenario``. It may look at the state it
just built (it knows where it planted the bug, which mail holds the code) to write the reference
plan: the calls a correct agent makes, whose later arguments depend on what earlier calls
observe. The episode categories (tasks.episodes.categories) derive their variants from it:
miss_param from ``withheld``, miss_func by holding back the first call's tool, long_context by
a larger ``size``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import TYPE_CHECKING, Any, TypeVar

from tasks.rand import between, permute

if TYPE_CHECKING:
    from tasks.episodes.environment import Environment

__all__ = ["Scenario", "TurnDraft", "call", "first_applicable", "offered_tools", "quoted", "stated"]

E = TypeVar("E")


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


def quoted(slot: str, about: str, text: str) -> dict[str, Any]:
    """A stated value the text puts in double quotes (a title, a reference, a reply's body): said
    as ``"text"``, the bare text accepted too."""
    return stated(slot, about, f'"{text}"', text, kind="quoted")


def call(tool: str, /, **arguments: Any) -> dict[str, Any]:
    """One call of a reference plan (``TurnDraft.plan``): ``{"name": tool, "arguments": {...}}``."""
    return {"name": tool, "arguments": arguments}


def offered_tools(
    cls: type[Environment], plan_tools: Iterable[str], rng: Random, *, excluded: Iterable[str] = ()
) -> list[str]:
    """The tools offered in a scenario (``Scenario.tools``): the plan's tools (each once) and one
    to three other tools of ``cls``, none of ``excluded``, all in a drawn order."""
    planned = list(dict.fromkeys(plan_tools))
    left_out = {*planned, *excluded}
    others = [name for name in cls.tools() if name not in left_out]
    permute(rng, others)
    offered = planned + others[: between(rng, 1, 3)]
    permute(rng, offered)
    return offered


def first_applicable(
    kinds: Sequence[Callable[[E, Random], Scenario | None]],
    env: E,
    rng: Random,
    failure: str,
    *,
    attempts: int = 1,
) -> Scenario:
    """An environment module's ``scenario``: the scenario of the first of ``kinds`` that applies
    to ``env`` (a kind returns None where the state does not allow it), the kinds tried in a
    drawn order. With ``attempts`` above one, a round in which none applied is followed by
    another (the order shuffled again, each kind drawing anew). ValueError(``failure``) when no
    round found one."""
    order = list(kinds)
    for _ in range(attempts):
        permute(rng, order)
        for kind in order:
            drawn = kind(env, rng)
            if drawn is not None:
                return drawn
    raise ValueError(failure)
