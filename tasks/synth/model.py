"""The records a synthesised family module exports (``FAMILY``)."""

from __future__ import annotations

from dataclasses import dataclass

from tasks.spec import Param

__all__ = ["THING", "Action", "Family"]

#: The marker for the family's thing (``Family.things``) in names, descriptions and templates.
THING = "<thing>"


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a synthesised tool can do with a family's thing.

    ``name`` is the tool name with ``THING`` where the thing's words go ("schedule_<thing>_service");
    ``description`` and each parameter's description may hold ``THING`` too. ``templates`` are
    request templates (``{param}`` placeholders, ``THING`` for the thing's words): each names every
    required parameter and never the tool's name.
    """

    name: str
    description: str
    params: tuple[Param, ...]
    templates: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Family:
    """A domain no public tool library holds: its things (an open vocabulary, composed from parts
    by the family module) and what tools do with them."""

    domain: str
    things: tuple[str, ...]
    actions: tuple[Action, ...]
