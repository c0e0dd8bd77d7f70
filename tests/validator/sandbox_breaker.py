"""Test equipment: imported by a sandbox's workers, makes every environment's dispatch raise on a
marker value, as a tool with a bug would on hostile input (a 401-digit amount, a superscript)."""

from __future__ import annotations

from typing import Any

from tasks.episodes.environment import Environment

MODULE = __name__
#: A string argument containing this, or an integer this large, makes dispatch raise.
MARKER = "BREAK\u00b2"
HUGE = 10**400


def breaks(arguments: dict[str, Any]) -> bool:
    return any(
        (isinstance(value, str) and MARKER in value) or (isinstance(value, int) and abs(value) >= HUGE)
        for value in arguments.values()
    )


_dispatch = Environment.dispatch


def _breaking_dispatch(self: Environment, name: str, arguments: dict[str, Any]) -> Any:
    if breaks(arguments):
        raise OverflowError("int too large to convert to float")
    return _dispatch(self, name, arguments)


Environment.dispatch = _breaking_dispatch  # type: ignore[method-assign]
