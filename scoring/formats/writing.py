"""What the renderers of the formats share: JSON text, python call syntax, values written as text.

Python-syntax formats (pythonic, codeact, llama4) need names that are dotted identifiers and
argument names that are identifiers but not keywords; values must be JSON-like (NaN has no
literal) and dict keys strings, numbers, booleans or None. Otherwise they raise ``ValueError``.
"""

from __future__ import annotations

import json
import keyword
import math
from typing import Any

from scoring.model import Call


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


def python_literal(value: Any) -> str:
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
        return "[" + ", ".join(python_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        for key in value:
            if not (key is None or isinstance(key, str | int | float | bool)):
                raise ValueError(f"dict key {key!r} has no python literal")
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    raise ValueError(f"a {type(value).__name__} has no python literal")


def python_call(call: Call) -> str:
    """``name(key=literal, ...)``."""
    if not call.name or not all(
        part.isidentifier() and not keyword.iskeyword(part) for part in call.name.split(".")
    ):
        raise ValueError(f"{call.name!r} is not a python function name")
    for name in call.arguments:
        if not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
            raise ValueError(f"{name!r} cannot be a python keyword argument")
    arguments = ", ".join(f"{name}={python_literal(value)}" for name, value in call.arguments.items())
    return f"{call.name}({arguments})"


def python_call_list(calls: list[Call]) -> str:
    """``[f(a=1), g(b="x")]``: the BFCL call list."""
    return "[" + ", ".join(python_call(call) for call in calls) + "]"


def text_value(value: Any) -> str:
    """A value as families that write values as text write it: a string as is, the rest JSON."""
    return value if isinstance(value, str) else json_text(value)


def text_blocks(calls: list[Call], block: str, pair: str) -> str:
    """Calls whose values are written as text: ``block`` (with ``{name}`` and ``{pairs}``) per
    call, ``pair`` (with ``{key}`` and ``{value}``) per argument; blocks one per line."""
    return "\n".join(
        block.format(
            name=call.name,
            pairs="".join(pair.format(key=k, value=text_value(v)) for k, v in call.arguments.items()),
        )
        for call in calls
    )
