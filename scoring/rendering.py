"""Calls -> text (or OpenAI tool calls) the way each model family writes them.

``render(calls, fmt)`` is the inverse of :func:`scoring.decode` for every format in
:data:`FORMATS`: ``decode(render(calls, fmt)) == calls``. The task generator uses it to show that
every task is solvable in every format; the miner uses :func:`to_openai_tool_calls` to turn the
calls it decoded from a model's text into an OpenAI ``tool_calls`` list.

Python-syntax formats (pythonic, codeact) need names that are dotted identifiers and argument
names that are identifiers but not keywords; values must be JSON-like (NaN has no literal) and
dict keys strings, numbers, booleans or None. Otherwise :func:`render` raises ``ValueError``.
"""

from __future__ import annotations

import json
import keyword
import math
from collections.abc import Callable
from typing import Any

from scoring.model import Call

FORMATS: tuple[str, ...] = ("openai", "pythonic", "json", "hermes", "codeact", "busybeaver")


def to_openai_tool_calls(calls: list[Call]) -> list[dict[str, Any]]:
    """OpenAI chat-completion ``tool_calls``: ids ``call_0``, ``call_1``, ..., arguments as a JSON string."""
    return [
        {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
        }
        for index, call in enumerate(calls)
    ]


def _python_literal(value: Any) -> str:
    """Source text of a literal that :mod:`scoring.literals` reads back as ``value``."""
    if value is None or isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            raise ValueError("NaN has no python literal")
        if math.isinf(value):
            return "1e999" if value > 0 else "-1e999"
        return repr(value)
    if isinstance(value, str):
        # Backticks escaped so that a string can never close a markdown fence around the code.
        return repr(value).replace("`", "\\x60")
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_python_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        for key in value:
            if not (key is None or isinstance(key, str | int | float | bool)):
                raise ValueError(f"dict key {key!r} has no python literal")
        return "{" + ", ".join(f"{_python_literal(k)}: {_python_literal(v)}" for k, v in value.items()) + "}"
    raise ValueError(f"a {type(value).__name__} has no python literal")


def _python_call(call: Call) -> str:
    if not call.name or not all(
        part.isidentifier() and not keyword.iskeyword(part) for part in call.name.split(".")
    ):
        raise ValueError(f"{call.name!r} is not a python function name")
    for name in call.arguments:
        if not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
            raise ValueError(f"{name!r} cannot be a python keyword argument")
    arguments = ", ".join(f"{name}={_python_literal(value)}" for name, value in call.arguments.items())
    return f"{call.name}({arguments})"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


def _render_pythonic(calls: list[Call]) -> str:
    return "[" + ", ".join(_python_call(call) for call in calls) + "]"


def _render_json(calls: list[Call]) -> str:
    return _json([{"name": call.name, "arguments": call.arguments} for call in calls])


def _render_hermes(calls: list[Call]) -> str:
    # "<" only occurs inside JSON strings, so escaping it keeps "</tool_call>" out of the payload.
    blocks = (
        _json({"name": call.name, "arguments": call.arguments}).replace("<", "\\u003c") for call in calls
    )
    return "\n".join(f"<tool_call>\n{block}\n</tool_call>" for block in blocks)


def _render_codeact(calls: list[Call]) -> str:
    return "```python\n" + "".join(_python_call(call) + "\n" for call in calls) + "```"


def _render_busybeaver(calls: list[Call]) -> str:
    actions = [
        {"tool": call.name, "args": call.arguments, "confidence": 1.0, "state_update": ""} for call in calls
    ]
    return _json(actions[0] if len(actions) == 1 else actions)


_RENDERERS: dict[str, Callable[[list[Call]], str | list[dict[str, Any]]]] = {
    "openai": to_openai_tool_calls,
    "pythonic": _render_pythonic,
    "json": _render_json,
    "hermes": _render_hermes,
    "codeact": _render_codeact,
    "busybeaver": _render_busybeaver,
}


def render(calls: list[Call], fmt: str) -> str | list[dict[str, Any]]:
    """Render calls as a model of family ``fmt`` would emit them ("openai" gives tool-call dicts)."""
    renderer = _RENDERERS.get(fmt)
    if renderer is None:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    return renderer(calls)
