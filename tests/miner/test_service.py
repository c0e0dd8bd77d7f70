"""The protocol layer: wire request -> plain dicts -> backend -> wire response; model errors ->
the transport's refusals with the right status."""

from __future__ import annotations

import json
from typing import Any

import pytest

from subnet.metrics import Reading
from subnet.miner import (
    BadModelRequest,
    EngineTimeout,
    EngineUnavailable,
    GenerationRequest,
    GenerationResult,
    ModelError,
    ModelOptions,
    Usage,
)
from subnet.miner.service import MinerModel, to_generation_request
from subnet.protocol import ChatCompletionRequest, ChatCompletionResponse
from subnet.transport import REFUSAL_STATUS, Refusal

REQUEST = ChatCompletionRequest.model_validate(
    {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        ],
        "tools": [
            {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
        ],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "max_tokens": 20,
        "temperature": 0.0,
    }
)


class ScriptedBackend:
    """A backend that answers (or fails) as told and records what it was asked."""

    def __init__(self, outcome: GenerationResult | ModelError) -> None:
        self.options = ModelOptions(name="scripted-model")
        self.outcome = outcome
        self.asked: list[GenerationRequest] = []

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    def describe(self) -> str:
        return "scripted"

    def readings(self) -> list[Reading]:
        return []

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        self.asked.append(request)
        if isinstance(self.outcome, ModelError):
            raise self.outcome
        return self.outcome


def test_the_wire_request_becomes_plain_openai_dicts() -> None:
    plain = to_generation_request(REQUEST)
    assert plain.messages[0] == {"role": "system", "content": "Be brief."}
    assert plain.messages[1]["content"] == [{"type": "text", "text": "Weather in Paris?"}]
    assert plain.tools[0]["function"]["name"] == "get_weather"
    assert plain.tool_choice == {"type": "function", "function": {"name": "get_weather"}}
    assert (plain.max_tokens, plain.temperature) == (20, 0.0)


async def test_tool_calls_become_the_completion_message() -> None:
    call = {
        "id": "call_0",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    backend = ScriptedBackend(
        GenerationResult(tool_calls=[call], content=None, usage=Usage(12, 5), finish_reason="tool_calls")
    )
    response = await MinerModel(backend).handle(REQUEST, caller=None)
    assert isinstance(response, ChatCompletionResponse)
    # What the validator parses is exactly what was produced.
    parsed = ChatCompletionResponse.model_validate_json(response.to_body())
    assert parsed.model == "scripted-model" and parsed.id.startswith("chatcmpl-")
    tool_call = parsed.message.tool_calls[0]  # type: ignore[index]
    assert (tool_call.id, tool_call.function.name) == ("call_0", "get_weather")
    assert json.loads(tool_call.function.arguments) == {"city": "Paris"}
    assert parsed.message.content is None and parsed.choices[0].finish_reason == "tool_calls"
    assert parsed.usage is not None and parsed.usage.total_tokens == 17


async def test_text_becomes_content() -> None:
    backend = ScriptedBackend(
        GenerationResult(tool_calls=None, content="No function fits.", usage=Usage(3, 4))
    )
    response = await MinerModel(backend).handle(REQUEST, caller=None)
    assert response.message.content == "No function fits." and response.message.tool_calls is None


@pytest.mark.parametrize(
    ("error", "refusal_type"),
    [
        (BadModelRequest("prompt too long"), "invalid_request"),
        (EngineUnavailable("engine down"), "overloaded"),
        (EngineTimeout("engine slow"), "handler_timeout"),
        (ModelError("generation failed: boom"), "internal_error"),
    ],
)
async def test_model_errors_become_refusals_with_a_status(error: ModelError, refusal_type: str) -> None:
    with pytest.raises(Refusal) as refused:
        await MinerModel(ScriptedBackend(error)).handle(REQUEST, caller=None)
    assert refused.value.error_type == refusal_type
    assert refused.value.message == error.message
    assert refused.value.status == REFUSAL_STATUS[refusal_type] == _expected_status(error)


def _expected_status(error: Any) -> int:
    return {400: 400, 503: 503, 504: 504, 500: 500}[error.status]
