"""JSON: one object per call, ``{"name": ..., "arguments": {...}}``, a list for several (OpenAI
keys; ``parameters`` and BusyBeaver's ``tool``/``args`` are read too). No template shows it:
a miner is started with it by name."""

from __future__ import annotations

import json
from typing import Any

from scoring.formats.spec import Format, Prompting, functions_of
from scoring.formats.writing import json_text
from scoring.model import Call


def render(calls: list[Call]) -> str:
    return json_text([{"name": call.name, "arguments": call.arguments} for call in calls])


def system_prompt(tools: list[dict[str, Any]]) -> str:
    listing = json.dumps(functions_of(tools), ensure_ascii=False)
    return (
        "You choose function calls. The functions, as JSON schemas:\n"
        f"{listing}\n"
        'To call a function, answer with one JSON object only: {"name": "<function name>", '
        '"arguments": {"<parameter>": <value>}}. For several calls, answer with a JSON list of '
        "such objects. Write no other text. If no function fits, or a required argument is "
        "missing, answer in plain text."
    )


def history_calls(calls: list[tuple[str, Any]]) -> str:
    """Earlier calls as the prompt asks for them: one object alone, a list for several."""
    objects = [{"name": name, "arguments": arguments} for name, arguments in calls]
    return json.dumps(objects[0] if len(objects) == 1 else objects, ensure_ascii=False)


def forced_prefix(function_name: str | None) -> str:
    if function_name is None:
        return '{"name": "'
    return '{"name": ' + json.dumps(function_name) + ', "arguments": '


FORMAT = Format(
    name="json",
    render=render,
    writes=(
        'one object, or a list, `{"name": ..., "arguments": {...}}` (`parameters`, BusyBeaver\'s '
        "`tool`/`args` read too)"
    ),
    families="BusyBeaver, generic",
    auto_when="(named only)",
    prompting=Prompting(
        system_prompt=system_prompt,
        forced_prefix=forced_prefix,
        history_calls=history_calls,
        guided=True,
        call_bias=2.6,
    ),
)
