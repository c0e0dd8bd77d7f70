"""The transformers backend reads a native family's answer with its special tokens kept.

Several families write their call markup as special tokens (Kimi K2's <|tool_call_begin|>, Llama's
<|python_tag|>); decoding the generated ids with skip_special_tokens, as the backend did for every
format, removed the markers and left the calls unreadable."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from subnet.miner import ModelOptions
from subnet.miner.transformers_backend import Prompt, TransformersBackend

pytest.importorskip("torch")
pytest.importorskip("transformers")

KIMI_MARKERS = (
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
)
KIMI_TEMPLATE = (
    "{%- for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}"
    "{%- if message.tool_calls %}<|tool_calls_section_begin|>{% for tc in message.tool_calls %}"
    "<|tool_call_begin|>{{ tc.id }}<|tool_call_argument_begin|>{{ tc.function.arguments }}"
    "<|tool_call_end|>{% endfor %}<|tool_calls_section_end|>{% endif %}<|im_end|>\n"
    "{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    },
}


async def test_a_kimi_answer_made_of_special_tokens_is_read(
    tmp_path: Path, tiny_model_builder: Callable[..., Path]
) -> None:
    folder = tiny_model_builder(tmp_path / "kimi", chat_template=KIMI_TEMPLATE, extra_specials=KIMI_MARKERS)
    backend = TransformersBackend(ModelOptions(path=str(folder)))
    await backend.start()
    try:
        assert backend.adapter is not None and backend.adapter.name == "kimi"
        tokenizer = backend.tokenizer
        answer = (
            "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
            '<|tool_call_argument_begin|>{"city": "Paris", "days": 3}<|tool_call_end|>'
            "<|tool_calls_section_end|>"
        )
        ids = tokenizer.encode(answer, add_special_tokens=False)
        assert tokenizer.decode(ids, skip_special_tokens=True).count("<|") == 0  # what was lost before
        prompt = Prompt(text="", prefix="", allow_calls=True, tools=(WEATHER,))
        result = backend._finish(prompt, 0, ids, 64)
        assert result.tool_calls is not None
        (call,) = result.tool_calls
        assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == (
            "get_weather",
            {"city": "Paris", "days": 3},
        )
        assert result.content == "Checking."
    finally:
        await backend.close()
