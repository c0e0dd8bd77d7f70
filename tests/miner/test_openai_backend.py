"""The openai backend against a real local HTTP server standing in for an engine (vLLM, llama.cpp):
canned tool calls and text, server errors, a hang past the timeout, a refused connection."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from subnet.miner import EngineTimeout, EngineUnavailable, GenerationRequest, ModelOptions, build_backend
from subnet.miner.base import EngineFailed, ModelError, ModelLoadError
from subnet.miner.openai_backend import OpenAIBackend, completions_url

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
REQUEST = GenerationRequest(
    messages=[{"role": "user", "content": "Weather in Paris?"}],
    tools=[WEATHER],
    tool_choice="auto",
    max_tokens=64,
)


def _completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 31, "completion_tokens": 9, "total_tokens": 40},
    }


@dataclass
class FakeEngine:
    """An OpenAI-compatible engine whose next answers the test chooses."""

    mode: str = "tool_calls"
    received: list[dict[str, Any]] = field(default_factory=list)

    async def chat(self, request: web.Request) -> web.StreamResponse:
        self.received.append(await request.json())
        if self.mode == "tool_calls":
            call = {
                "id": "chatcmpl-tool-7",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
            return web.json_response(_completion({"content": None, "tool_calls": [call]}, "tool_calls"))
        if self.mode == "object_arguments":
            call = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
            return web.json_response(_completion({"content": None, "tool_calls": [call]}, "tool_calls"))
        if self.mode == "text_call":  # an engine run without a tool parser
            return web.json_response(
                _completion(
                    {
                        "content": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}'
                        "\n</tool_call>"
                    }
                )
            )
        if self.mode == "text":
            return web.json_response(_completion({"content": "No function can book a table."}))
        if self.mode == "error500":
            return web.Response(status=500, text="CUDA out of memory")
        if self.mode == "template_error":  # llama-cpp-python's chatml-function-calling on a tool message
            said = "'dict object' has no attribute 'content'"
            body = {"error": {"message": said, "type": "internal_server_error"}}
            return web.json_response(body, status=500)
        if self.mode == "assertion":
            return web.Response(status=500, text="AssertionError")
        if self.mode == "error503":
            return web.json_response({"error": {"message": "Service Unavailable"}}, status=503)
        if self.mode == "error400":
            return web.json_response({"error": {"message": "max_tokens is too large"}}, status=400)
        if self.mode == "garbage":
            return web.Response(text="<html>gateway</html>", content_type="text/html")
        if self.mode == "hang":
            await asyncio.sleep(30)
        raise AssertionError(f"unknown mode {self.mode}")


@pytest.fixture
async def engine(serve_engine: Callable[..., Awaitable[str]]) -> tuple[FakeEngine, str]:
    fake = FakeEngine()
    return fake, await serve_engine(fake.chat)  # tests/miner/conftest.py


@pytest.fixture
async def backend(engine: tuple[FakeEngine, str]) -> AsyncIterator[OpenAIBackend]:
    options = ModelOptions(
        # 3 s: the fake engine answers at once, but a loaded machine must not turn that into a
        # timeout; the hanging engine sleeps 30 s
        backend="openai", base_url=engine[1], name="qwen-tool", timeout=3.0, max_new_tokens=128
    )
    client = build_backend(options)
    assert isinstance(client, OpenAIBackend)
    await client.start()
    yield client
    await client.close()


async def test_engine_tool_calls_pass_through_with_the_request_forwarded(
    engine: tuple[FakeEngine, str], backend: OpenAIBackend
) -> None:
    fake, _ = engine
    result = await backend.generate(REQUEST)
    assert result.tool_calls == [
        {
            "id": "chatcmpl-tool-7",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    assert result.content is None and result.finish_reason == "tool_calls"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (31, 9)
    sent = fake.received[-1]
    assert sent["model"] == "qwen-tool" and sent["tools"] == [WEATHER] and sent["tool_choice"] == "auto"
    assert sent["messages"] == REQUEST.messages and sent["max_tokens"] == 64 and sent["temperature"] == 0.0


async def test_object_arguments_become_a_json_string(
    engine: tuple[FakeEngine, str], backend: OpenAIBackend
) -> None:
    engine[0].mode = "object_arguments"
    result = await backend.generate(REQUEST)
    assert result.tool_calls is not None
    assert json.loads(result.tool_calls[0]["function"]["arguments"]) == {"city": "Oslo"}
    assert result.tool_calls[0]["id"] == "call_0"


async def test_engine_text_goes_through_the_decoder(
    engine: tuple[FakeEngine, str], backend: OpenAIBackend
) -> None:
    engine[0].mode = "text_call"
    result = await backend.generate(REQUEST)
    assert result.tool_calls is not None and result.tool_calls[0]["function"]["name"] == "get_weather"
    assert json.loads(result.tool_calls[0]["function"]["arguments"]) == {"city": "Rome"}
    engine[0].mode = "text"
    result = await backend.generate(REQUEST)
    assert result.tool_calls is None and result.content == "No function can book a table."


async def test_max_tokens_is_capped_by_the_miners_limit(
    engine: tuple[FakeEngine, str], backend: OpenAIBackend
) -> None:
    await backend.generate(GenerationRequest(messages=REQUEST.messages, max_tokens=10_000))
    assert engine[0].received[-1]["max_tokens"] == 128
    assert "tools" not in engine[0].received[-1]


@pytest.mark.parametrize(
    ("mode", "error", "words"),
    [
        ("template_error", EngineFailed, "its chat template could not render the messages"),
        ("assertion", EngineFailed, "HTTP 500, it failed on this request: AssertionError"),
        ("error503", EngineUnavailable, "HTTP 503: Service Unavailable"),
        ("error500", EngineUnavailable, "HTTP 500: CUDA out of memory"),
    ],
)
async def test_engine_failures_are_named_as_what_they_are(
    engine: tuple[FakeEngine, str], backend: OpenAIBackend, mode: str, error: type, words: str
) -> None:
    """A template error or an assertion is the engine failing on that request (502 engine_error,
    in its own words), not a sign of load (503 overloaded)."""
    from subnet.miner.service import MinerModel
    from subnet.protocol import ChatCompletionRequest
    from subnet.transport import REFUSAL_STATUS, Refusal

    engine[0].mode = mode
    with pytest.raises(error, match=re.escape(words)):
        await backend.generate(REQUEST)
    request = ChatCompletionRequest.model_validate(
        {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": []}
    )
    with pytest.raises(Refusal) as refused:
        await MinerModel(backend).handle(request, caller=None)
    expected = "engine_error" if error is EngineFailed else "overloaded"
    assert refused.value.error_type == expected
    assert refused.value.status == REFUSAL_STATUS[expected] == (502 if error is EngineFailed else 503)
    if mode == "template_error":
        assert "'dict object' has no attribute 'content'" in refused.value.message


async def test_server_errors_are_unavailable_and_logged_once_per_outage(
    engine: tuple[FakeEngine, str], backend: OpenAIBackend, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="subnet.miner.openai_backend")
    engine[0].mode = "error500"
    for _ in range(3):
        with pytest.raises(EngineUnavailable, match="HTTP 500: CUDA out of memory") as caught:
            await backend.generate(REQUEST)
        assert caught.value.status == 503
    engine[0].mode = "garbage"
    with pytest.raises(EngineUnavailable, match="not a chat completion"):
        await backend.generate(REQUEST)
    failing = [record for record in caplog.records if "model engine failing" in record.message]
    assert len(failing) == 1
    engine[0].mode = "tool_calls"
    await backend.generate(REQUEST)
    assert any("answers again" in record.message for record in caplog.records)
    engine[0].mode = "error500"
    with pytest.raises(EngineUnavailable):
        await backend.generate(REQUEST)
    assert len([record for record in caplog.records if "model engine failing" in record.message]) == 2


async def test_a_refused_request_is_that_requests_error_only(
    engine: tuple[FakeEngine, str], backend: OpenAIBackend
) -> None:
    engine[0].mode = "error400"
    with pytest.raises(ModelError, match="refused the request with HTTP 400") as caught:
        await backend.generate(REQUEST)
    assert not isinstance(caught.value, EngineUnavailable)


async def test_a_hanging_engine_times_out(engine: tuple[FakeEngine, str], backend: OpenAIBackend) -> None:
    engine[0].mode = "hang"
    started = asyncio.get_running_loop().time()
    with pytest.raises(EngineTimeout, match=r"within 3(\.0)? s") as caught:
        await backend.generate(REQUEST)
    assert caught.value.status == 504
    assert asyncio.get_running_loop().time() - started < 15


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_an_engine_that_is_down_is_unavailable_not_a_crash() -> None:
    client = build_backend(
        ModelOptions(backend="openai", base_url=f"http://127.0.0.1:{_closed_port()}", timeout=2)
    )
    await client.start()
    try:
        with pytest.raises(EngineUnavailable, match="unreachable"):
            await client.generate(REQUEST)
        with pytest.raises(EngineUnavailable):  # and again: still no crash
            await client.generate(REQUEST)
    finally:
        await client.close()


def test_base_url_forms_and_a_missing_url() -> None:
    assert completions_url("http://h:8000") == "http://h:8000/v1/chat/completions"
    assert completions_url("http://h:8000/v1/") == "http://h:8000/v1/chat/completions"
    assert completions_url("http://h/v1/chat/completions") == "http://h/v1/chat/completions"
    with pytest.raises(ModelLoadError, match=r"needs --model\.base_url"):
        build_backend(ModelOptions(backend="openai"))


# --- an engine started with an API key (--model.api_key_env) --------------------------------------


def _keyed_engine(key: str) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def chat(request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {key}":
            return web.json_response({"error": {"message": "invalid api key"}}, status=401)
        return web.json_response(_completion({"content": "hello"}))

    return chat


async def test_the_api_key_is_read_from_the_named_variable(serve_engine, monkeypatch, caplog) -> None:
    url = await serve_engine(_keyed_engine("s3cret-key"))
    monkeypatch.setenv("ENGINE_KEY", "s3cret-key")
    backend = OpenAIBackend(ModelOptions(backend="openai", base_url=url, api_key_env="ENGINE_KEY"))
    await backend.start()
    try:
        with caplog.at_level(logging.DEBUG):
            result = await backend.generate(REQUEST)
        assert result.content == "hello"
        assert "s3cret-key" not in caplog.text
    finally:
        await backend.close()


async def test_a_missing_key_variable_is_one_line_at_start(monkeypatch) -> None:
    monkeypatch.delenv("ENGINE_KEY", raising=False)
    backend = OpenAIBackend(
        ModelOptions(backend="openai", base_url="http://127.0.0.1:9/v1", api_key_env="ENGINE_KEY")
    )
    with pytest.raises(ModelLoadError, match=r"--model.api_key_env ENGINE_KEY: the environment variable"):
        await backend.start()


@pytest.mark.parametrize("key_env", [None, "ENGINE_KEY"])
async def test_a_refused_key_says_which_flag_gives_it(serve_engine, monkeypatch, key_env) -> None:
    url = await serve_engine(_keyed_engine("right"))
    monkeypatch.setenv("ENGINE_KEY", "wrong")
    backend = OpenAIBackend(ModelOptions(backend="openai", base_url=url, api_key_env=key_env))
    await backend.start()
    try:
        with pytest.raises(
            ModelError, match=r"refused .* \(HTTP 401\); give the engine's key with --model.api_key_env"
        ):
            await backend.generate(REQUEST)
    finally:
        await backend.close()
