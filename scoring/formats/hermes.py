"""Hermes: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, one pair of tags per call
(Qwen 2.5 / 3, Hermes, HRM-style models). scoring.decoding reads ``<tool_call>`` blocks."""

from __future__ import annotations

import json
from typing import Any

from scoring.formats.spec import Format, Prompting, tool_lines
from scoring.formats.writing import json_text
from scoring.model import Call


def render(calls: list[Call]) -> str:
    # "<" only occurs inside JSON strings, so escaping it keeps "</tool_call>" out of the payload.
    blocks = (
        json_text({"name": call.name, "arguments": call.arguments}).replace("<", "\\u003c") for call in calls
    )
    return "\n".join(f"<tool_call>\n{block}\n</tool_call>" for block in blocks)


def system_prompt(tools: list[dict[str, Any]]) -> str:
    return (
        "You may call functions to answer the user. The functions are described as JSON schemas "
        "between <tools> and </tools>:\n"
        f"<tools>\n{tool_lines(tools)}\n</tools>\n"
        "To call a function, write a JSON object with its name and arguments between "
        "<tool_call> and </tool_call>, one pair of tags per call:\n"
        '<tool_call>\n{"name": "function_name", "arguments": {"parameter": "value"}}\n</tool_call>\n'
        "Take argument values from the user's words; do not invent them. If no function fits the "
        "request, or a required argument is missing, answer in plain text and call nothing."
    )


def tool_result(name: str, content: str) -> str:
    return f"<tool_response>\n{content}\n</tool_response>"


def forced_prefix(function_name: str | None) -> str:
    if function_name is None:
        return '<tool_call>\n{"name": "'
    return '<tool_call>\n{"name": ' + json.dumps(function_name) + ', "arguments": '


FORMAT = Format(
    name="hermes",
    render=render,
    writes='`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, one per call',
    families="Qwen 2.5/3, Hermes, HRM-Text-agent",
    auto_when="`<tool_call>`",
    fingerprints=(("<tool_call>",),),
    fingerprint_rank=110,  # after Qwen3-Coder and GLM, whose templates also write <tool_call>
    prompting=Prompting(
        system_prompt=system_prompt,
        forced_prefix=forced_prefix,
        tool_result=tool_result,
        guided=True,
        call_bias=0.8,
    ),
)
