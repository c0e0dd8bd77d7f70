"""The built-in tool library: every tool the generator can offer, one module per domain.

Each domain module (named after the ``domain`` of its tools) exposes its tools as ``TOOLS``;
``common`` holds the value generators several domains share. ``DOMAINS`` lists the domain modules
in library order. ``tools()`` returns the library (built on first use); ``by_name`` and ``by_domain``
index it.
"""

from __future__ import annotations

from functools import cache
from typing import Protocol

from tasks.library import (
    calendar_email,
    data,
    developer,
    finance,
    health,
    math,
    messaging,
    shopping,
    smart_home,
    travel,
    vehicles,
    weather,
)
from tasks.spec import ToolSpec

__all__ = ["DOMAINS", "Domain", "by_domain", "by_name", "tools"]


class Domain(Protocol):
    """A domain module: the library tools of one domain."""

    TOOLS: tuple[ToolSpec, ...]


# The order is part of the generator's output: tasks draw tools by index into ``tools()``.
DOMAINS: tuple[Domain, ...] = (
    finance,
    weather,
    travel,
    calendar_email,
    messaging,
    developer,
    math,
    shopping,
    health,
    smart_home,
    vehicles,
    data,
)


@cache
def tools() -> tuple[ToolSpec, ...]:
    """Every library tool, in a fixed order: domain by domain in ``DOMAINS`` order."""
    return tuple(tool for domain in DOMAINS for tool in domain.TOOLS)


@cache
def by_name() -> dict[str, ToolSpec]:
    """Library tools by canonical name."""
    return {tool.name: tool for tool in tools()}


@cache
def by_domain() -> dict[str, tuple[ToolSpec, ...]]:
    """Library tools grouped by domain, domains in first-appearance order."""
    grouped: dict[str, list[ToolSpec]] = {}
    for tool in tools():
        grouped.setdefault(tool.domain, []).append(tool)
    return {domain: tuple(members) for domain, members in grouped.items()}
