"""Calls -> text (or OpenAI tool calls) the way each model family writes them.

``render(calls, fmt)`` is the inverse of :func:`scoring.decode` for every format in
:data:`FORMATS`: ``decode(render(calls, fmt)) == calls``, and for the model families' native
formats in :data:`NATIVE_FORMATS` given the offered tools: ``decode(render(calls, fmt),
tools=tools) == calls``. The task generator uses it to show that
every task is solvable in every format; the miner uses :func:`to_openai_tool_calls` to turn the
calls it decoded from a model's text into an OpenAI ``tool_calls`` list.

Each format's renderer lives in its module of :mod:`scoring.formats` (the registry).
Python-syntax formats (pythonic, codeact, llama4) need names that are dotted identifiers and
argument names that are identifiers but not keywords; values must be JSON-like (NaN has no
literal) and dict keys strings, numbers, booleans or None. Otherwise :func:`render` raises
``ValueError``.
"""

from __future__ import annotations

from typing import Any

from scoring.formats import REGISTRY, native_formats, tool_free_formats
from scoring.formats.openai import to_openai_tool_calls
from scoring.model import Call

# The formats decode reads back without the offered tools.
FORMATS: tuple[str, ...] = tool_free_formats()
# Formats whose text some values do not survive without the offered schema (a string "42" in
# Qwen3-Coder's XML reads back as 42 unless the schema says string): decode them with tools=.
NATIVE_FORMATS: tuple[str, ...] = native_formats()

__all__ = ["FORMATS", "NATIVE_FORMATS", "render", "to_openai_tool_calls"]


def render(calls: list[Call], fmt: str) -> str | list[dict[str, Any]]:
    """Render calls as a model of family ``fmt`` would emit them ("openai" gives tool-call dicts)."""
    spec = REGISTRY.get(fmt)
    if spec is None:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS + NATIVE_FORMATS)}")
    return spec.render(calls)
