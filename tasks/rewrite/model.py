"""The record a rewrite rule set module exports (``RULES``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RuleSet"]


@dataclass(frozen=True, slots=True)
class RuleSet:
    """One rule set: groups of interchangeable phrases and sentence frames.

    ``phrases``: each group lists phrases of one meaning; wherever a description has one of them
    (a whole phrase, any case), the rewrite may put any member of its group. ``tool_frames`` and
    ``param_frames``: sentence shapes for a tool's and a parameter's description (see
    ``tasks.rewrite.rules.frames``). A phrase in several groups belongs to the first listed.
    ``leading``: the phrases are swapped only where the description starts with them (verbs:
    "Sets a reminder" is a tool's action, "only sets the reminder" later on is not).
    """

    name: str
    phrases: tuple[tuple[str, ...], ...] = ()
    tool_frames: tuple[str, ...] = ()
    param_frames: tuple[str, ...] = ()
    leading: bool = False
