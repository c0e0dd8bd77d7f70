"""The openai backend: forwards requests to an OpenAI-compatible engine (vLLM, SGLang, llama.cpp
server, Ollama) at ``--model.base_url``.

The engine's structured ``tool_calls`` pass through (arguments normalised to JSON strings); text it
answers goes through the output adapter, so an engine started without a tool parser still serves
calls. One pooled aiohttp session; every request is bounded by ``--model.timeout``. An engine that
is down, slow or broken becomes a `EngineUnavailable` / `EngineTimeout` for the caller, and one
log line per outage (plus one when it is back), never a crash.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

import aiohttp

from subnet.metrics import Reading
from subnet.miner.adapters import OutputAdapter, format_for_template
from subnet.miner.base import (
    BadModelRequest,
    EngineFailed,
    EngineTimeout,
    EngineUnavailable,
    GenerationRequest,
    GenerationResult,
    ModelError,
    ModelLoadError,
    ModelOptions,
    Usage,
)
from subnet.registry import missing_setting

log = logging.getLogger(__name__)

_MAX_ENGINE_BODY = 4 << 20
# Engine statuses that refuse what the request holds (bad request, too large, unprocessable).
_REFUSED_CONTENT = frozenset({400, 413, 422})
# Engine statuses that say it is down, busy or slow (an outage: "overloaded" to the caller); any
# other 5xx is the engine failing on this one request, named with its own words.
_OUTAGE = frozenset({408, 429, 502, 503, 504})
# Words of an engine error that come from rendering the chat template (jinja), e.g. llama-cpp-python's
# chatml-function-calling on a tool message: "'dict object' has no attribute 'content'".
_TEMPLATE_WORDS = ("template", "jinja", "has no attribute", "undefined")
# Words of a 500 that is load after all (the engine out of memory or capacity): an outage too.
_LOAD_WORDS = ("out of memory", "overloaded", "capacity", "too many requests", "busy")
_ERROR_SNIPPET = 200


def completions_url(base_url: str) -> str:
    """``.../chat/completions`` under the base URL; a bare host gets the usual ``/v1``."""
    base = base_url.rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if not base.rsplit("/", 1)[-1].startswith("v"):
        base += "/v1"
    return base + "/chat/completions"


class OpenAIBackend:
    """Forwards chat completions to an OpenAI-compatible engine. See the module docstring."""

    def __init__(self, options: ModelOptions) -> None:
        if not options.base_url:
            raise ModelLoadError(missing_setting("openai", "base_url"))
        self.options = options
        self.url = completions_url(options.base_url)
        # The engine's template is unknown here: auto reads every format scoring.decode knows.
        self.adapter: OutputAdapter = format_for_template(options.format, None)
        self._session: aiohttp.ClientSession | None = None
        self._outage: str | None = None  # what went wrong, while the engine is failing

    async def start(self) -> None:
        headers = {}
        name = self.options.api_key_env
        if name is not None:
            key = os.environ.get(name, "")
            if not key:
                raise ModelLoadError(
                    f"--model.api_key_env {name}: the environment variable {name} is not set or empty; "
                    "export it with the engine's API key before starting the miner"
                )
            headers["Authorization"] = f"Bearer {key}"
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.options.timeout),
            connector=aiohttp.TCPConnector(limit=64),
            headers=headers,
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def describe(self) -> str:
        return f"{self.options.served_name} (openai-compatible engine at {self.options.base_url})"

    def readings(self) -> list[Reading]:
        return []  # the engine behind it shows its own batching

    def _payload(self, request: GenerationRequest) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.options.name or self.options.path or "default",
            "messages": [_forwarded(message) for message in request.messages],
            "max_tokens": min(request.max_tokens or self.options.max_new_tokens, self.options.max_new_tokens),
            "temperature": request.temperature if request.temperature is not None else 0.0,
        }
        if request.tools:
            payload["tools"] = request.tools
            if request.tool_choice is not None:
                payload["tool_choice"] = request.tool_choice
        return payload

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        if self._session is None:
            raise ModelError("the engine client is not started")
        try:
            async with self._session.post(self.url, json=self._payload(request)) as response:
                body = await response.content.read(_MAX_ENGINE_BODY + 1)
                status = response.status
        except TimeoutError as error:
            raise self._failed(
                EngineTimeout(f"the model engine did not answer within {self.options.timeout:g} s")
            ) from error
        except aiohttp.ClientError as error:
            raise self._failed(
                EngineUnavailable(f"the model engine at {self.options.base_url} is unreachable: {error}")
            ) from error
        said = engine_error_text(body)
        if status in _OUTAGE or (status >= 500 and any(word in said.lower() for word in _LOAD_WORDS)):
            raise self._failed(EngineUnavailable(f"the model engine answered HTTP {status}: {said}"))
        if status >= 500:
            what = (
                "its chat template could not render the messages (for episodes, use an engine setting "
                "that carries tool messages: docs/miner.md, 'Engines and episodes')"
                if any(word in said.lower() for word in _TEMPLATE_WORDS)
                else "it failed on this request"
            )
            raise EngineFailed(f"the model engine answered HTTP {status}, {what}: {said}")
        if status >= 400:
            # The engine refused this request (not an outage): that request's problem only. A
            # refusal of its content is the caller's fault (400); others (401, 404: the engine's
            # key or model name) are the miner's set-up (500).
            if status in (401, 403):
                key = f"the key in ${self.options.api_key_env}" if self.options.api_key_env else "no API key"
                raise self._failed(
                    ModelError(
                        f"the model engine refused {key} (HTTP {status}); give the engine's key with "
                        "--model.api_key_env NAME"
                    )
                )
            error_kind = BadModelRequest if status in _REFUSED_CONTENT else ModelError
            raise error_kind(f"the model engine refused the request with HTTP {status}: {_snippet(body)}")
        try:
            result = self._read(body, request.tools)
        except ModelError as error:
            raise self._failed(error) from None
        if self._outage is not None:
            log.warning("model engine at %s answers again", self.options.base_url)
            self._outage = None
        return result

    def _failed(self, error: ModelError) -> ModelError:
        if self._outage is None:
            log.warning("model engine failing: %s (logged once until it recovers)", error.message)
        self._outage = error.message
        return error

    def _read(self, body: bytes, tools: list[dict[str, Any]]) -> GenerationResult:
        if len(body) > _MAX_ENGINE_BODY:
            raise EngineUnavailable("the model engine's answer is too large")
        try:
            data = json.loads(body)
            choice = data["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise EngineUnavailable(
                f"the model engine's answer is not a chat completion: {_snippet(body)}"
            ) from None
        usage_data = data.get("usage") or {}
        usage = Usage(
            prompt_tokens=int(usage_data.get("prompt_tokens") or 0),
            completion_tokens=int(usage_data.get("completion_tokens") or 0),
        )
        finish = str(choice.get("finish_reason") or "stop")
        engine_calls = message.get("tool_calls") or []
        if engine_calls:
            return GenerationResult(
                tool_calls=[_normalised_call(call, index) for index, call in enumerate(engine_calls)],
                content=None,
                usage=usage,
                finish_reason="tool_calls",
            )
        text = message.get("content") or ""
        text = text if isinstance(text, str) else json.dumps(text)
        answer = self.adapter.read(text, tools=tools)
        return GenerationResult(
            tool_calls=answer.tool_calls,
            content=answer.content,
            usage=usage,
            finish_reason="tool_calls" if answer.tool_calls else finish,
            raw_text=text,
        )


def _forwarded(message: dict[str, Any]) -> dict[str, Any]:
    """A history message as the engine takes it: the same message, unless an earlier call's
    arguments are an object (OpenAI's API takes them as a JSON string only)."""
    tool_calls = message.get("tool_calls")
    if not tool_calls or all(
        isinstance((call.get("function") or {}).get("arguments"), str) for call in tool_calls
    ):
        return message
    return {
        **message,
        "tool_calls": [
            {**call, "function": {**call["function"], "arguments": _arguments_text(call["function"])}}
            if isinstance(call.get("function"), dict)
            else call
            for call in tool_calls
        ],
    }


def _arguments_text(function: dict[str, Any]) -> str:
    arguments = function.get("arguments", "{}")
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _normalised_call(call: Any, index: int) -> dict[str, Any]:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        raise EngineUnavailable("the model engine sent a malformed tool call")
    function = call["function"]
    return {
        "id": str(call.get("id") or f"call_{index}"),
        "type": "function",
        "function": {"name": str(function.get("name", "")), "arguments": _arguments_text(function)},
    }


def engine_error_text(body: bytes, limit: int = _ERROR_SNIPPET) -> str:
    """The engine's own words for a failure: the ``error.message`` (or ``detail``/``message``) of
    an OpenAI-style JSON body, else the text itself; one line, at most ``limit`` characters."""
    text = body[:_MAX_ENGINE_BODY].decode("utf-8", "replace")
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error")
        found = error.get("message") if isinstance(error, dict) else error
        text = str(found or payload.get("detail") or payload.get("message") or text)
    said = " ".join(text.split()) or "(empty body)"
    return said if len(said) <= limit else said[: limit - 3] + "..."


def _snippet(body: bytes) -> str:
    text = body[:_ERROR_SNIPPET].decode("utf-8", "replace").strip().replace("\n", " ")
    return text or "(empty body)"
