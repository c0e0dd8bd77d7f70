"""Calls -> text (or OpenAI tool calls) the way each model family writes them.

``render(calls, fmt)`` is the inverse of :func:`scoring.decode` for every format in
:data:`FORMATS`: ``decode(render(calls, fmt)) == calls``, and for the model families' native
formats in :data:`NATIVE_FORMATS` given the offered tools: ``decode(render(calls, fmt),
tools=tools) == calls``. The task generator uses it to show that
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


# --- the native formats of open model families (scoring.native reads them) ---------------------


def _text_value(value: Any) -> str:
    """A value as families that write values as text write it: a string as is, the rest JSON."""
    return value if isinstance(value, str) else _json(value)


def _text_blocks(calls: list[Call], block: str, pair: str) -> str:
    """Calls whose values are written as text: ``block`` (with ``{name}`` and ``{pairs}``) per
    call, ``pair`` (with ``{key}`` and ``{value}``) per argument; blocks one per line."""
    return "\n".join(
        block.format(
            name=call.name,
            pairs="".join(pair.format(key=k, value=_text_value(v)) for k, v in call.arguments.items()),
        )
        for call in calls
    )


def _render_qwen3_coder(calls: list[Call]) -> str:
    return _text_blocks(
        calls,
        "<tool_call>\n<function={name}>\n{pairs}</function>\n</tool_call>",
        "<parameter={key}>\n{value}\n</parameter>\n",
    )


def _render_llama3(calls: list[Call]) -> str:
    return "<|python_tag|>" + "; ".join(_json({"name": c.name, "parameters": c.arguments}) for c in calls)


def _render_llama4(calls: list[Call]) -> str:
    return f"<|python_start|>{_render_pythonic(calls)}<|python_end|>"


def _render_mistral(calls: list[Call]) -> str:
    return "".join(f"[TOOL_CALLS]{call.name}[ARGS]{_json(call.arguments)}" for call in calls)


def _render_deepseek(calls: list[Call]) -> str:
    inner = "".join(
        f"<｜tool▁call▁begin｜>{call.name}<｜tool▁sep｜>{_json(call.arguments)}<｜tool▁call▁end｜>"
        for call in calls
    )
    return f"<｜tool▁calls▁begin｜>{inner}<｜tool▁calls▁end｜>"


def _render_deepseek_dsml(calls: list[Call]) -> str:
    invokes = []
    for call in calls:
        parameters = "".join(
            f'<｜DSML｜parameter name="{key}" string="{"true" if isinstance(value, str) else "false"}">'
            f"{_text_value(value)}</｜DSML｜parameter>\n"
            for key, value in call.arguments.items()
        )
        invokes.append(f'<｜DSML｜invoke name="{call.name}">\n{parameters}</｜DSML｜invoke>\n')
    return "<｜DSML｜function_calls>\n" + "".join(invokes) + "</｜DSML｜function_calls>"


def _render_kimi(calls: list[Call]) -> str:
    inner = "".join(
        f"<|tool_call_begin|>functions.{call.name}:{index}<|tool_call_argument_begin|>"
        f"{_json(call.arguments)}<|tool_call_end|>"
        for index, call in enumerate(calls)
    )
    return f"<|tool_calls_section_begin|>{inner}<|tool_calls_section_end|>"


def _render_glm(calls: list[Call]) -> str:
    return _text_blocks(
        calls,
        "<tool_call>{name}\n{pairs}</tool_call>",
        "<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>\n",
    )


def _render_harmony(calls: list[Call]) -> str:
    return "".join(
        f"<|start|>assistant<|channel|>commentary to=functions.{call.name} <|constrain|>json"
        f"<|message|>{_json(call.arguments)}<|call|>"
        for call in calls
    ).removeprefix("<|start|>assistant")  # the prompt's prefill: an answer opens at its channel


def _gemma_value(value: Any) -> str:
    if isinstance(value, str):
        return f'<|"|>{value}<|"|>'
    if isinstance(value, list | tuple):
        return "[" + ",".join(_gemma_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{key}:{_gemma_value(item)}" for key, item in value.items()) + "}"
    return _json(value)


def _render_gemma4(calls: list[Call]) -> str:
    return "".join(
        f"<|tool_call>call:{call.name}{_gemma_value(call.arguments)}<tool_call|>" for call in calls
    )


# Formats whose text some values do not survive without the offered schema (a string "42" in
# Qwen3-Coder's XML reads back as 42 unless the schema says string): decode them with tools=.
NATIVE_FORMATS: tuple[str, ...] = (
    "qwen3_coder",
    "llama3",
    "llama4",
    "mistral",
    "deepseek",
    "deepseek_dsml",
    "kimi",
    "glm",
    "harmony",
    "gemma4",
)

_RENDERERS: dict[str, Callable[[list[Call]], str | list[dict[str, Any]]]] = {
    "qwen3_coder": _render_qwen3_coder,
    "llama3": _render_llama3,
    "llama4": _render_llama4,
    "mistral": _render_mistral,
    "deepseek": _render_deepseek,
    "deepseek_dsml": _render_deepseek_dsml,
    "kimi": _render_kimi,
    "glm": _render_glm,
    "harmony": _render_harmony,
    "gemma4": _render_gemma4,
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
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS + NATIVE_FORMATS)}")
    return renderer(calls)
