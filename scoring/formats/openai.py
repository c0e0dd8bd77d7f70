"""OpenAI ``tool_calls``: the wire shape of a chat completion's calls, not a model's text.

The miner answers with it; the scorer renders expected answers in it. No miner is started with it.
"""

from __future__ import annotations

import json
from typing import Any

from scoring.formats.spec import Format
from scoring.model import Call


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


FORMAT = Format(name="openai", render=to_openai_tool_calls)
