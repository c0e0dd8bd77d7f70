"""The built-in tool library: every tool the generator can offer, grouped by domain.

``tools()`` returns the library (built on first use); ``by_name`` and ``by_domain`` index it.
"""

from __future__ import annotations

from functools import cache

from tasks.spec import ToolSpec

__all__ = ["by_domain", "by_name", "tools"]


@cache
def tools() -> tuple[ToolSpec, ...]:
    """Every library tool, in a fixed order."""
    from tasks.library.home_things import DATA, HEALTH, MATH, SHOPPING, SMART_HOME, VEHICLES
    from tasks.library.money_weather_travel import FINANCE, TRAVEL, WEATHER
    from tasks.library.work_comms_dev import CALENDAR_EMAIL, DEVELOPER, MESSAGING

    return (
        *FINANCE,
        *WEATHER,
        *TRAVEL,
        *CALENDAR_EMAIL,
        *MESSAGING,
        *DEVELOPER,
        *MATH,
        *SHOPPING,
        *HEALTH,
        *SMART_HOME,
        *VEHICLES,
        *DATA,
    )


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
