"""The localnet's checks of a user's own engine (--model.base_url): that it answers, which model it
serves, and whether the tools it is sent reach the model. Every failure is one line that says
what to do."""

from __future__ import annotations

import json
import os

import aiohttp

from scoring import DecodeError
from scoring.decoding import decode
from subnet.miner.openai_backend import completions_url, engine_error_text


class EndpointError(Exception):
    """The engine at a --model.base_url cannot serve a miner; the message says what to do."""


def one_line(text: str) -> str:
    return " ".join(text.split())


async def engine_model(url: str, given: str | None, api_key_env: str | None) -> str:
    """The model an OpenAI-compatible engine serves: ``given``, else the first of its /v1/models.
    The engine must answer either way; every failure is one line that says what to do."""
    models_url = completions_url(url).removesuffix("/chat/completions") + "/models"
    key = os.environ.get(api_key_env or "", "") if api_key_env else ""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    where = f"--model.base_url {url}"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10.0), headers=headers) as session,
            session.get(models_url) as response,
        ):
            status = response.status
            body = await response.read()
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        reason = one_line(str(exc)) or type(exc).__name__
        raise EndpointError(
            f"{where}: the engine does not answer ({reason}); start it first "
            "(docs/miner.md, 'Serve your own model')"
        ) from None
    if status in (401, 403):
        raise EndpointError(
            f"{where}: the engine wants an API key (HTTP {status}); give it with --model.api_key_env"
        )
    if status == 404 and not given:
        raise EndpointError(
            f"{where}: no OpenAI-compatible engine there ({models_url} answered HTTP 404); check the URL, "
            "or name the model with --model.name if the engine has no /v1/models"
        )
    if given:
        return given
    try:
        models = [str(entry["id"]) for entry in json.loads(body)["data"]]
    except (ValueError, KeyError, TypeError):
        models = []
    if status != 200 or not models:
        raise EndpointError(
            f"{where}: {models_url} named no model (HTTP {status}); give one with --model.name NAME"
        )
    return models[0]


# A request that must call the one tool offered: an engine that lets tools reach the model answers
# it with a call (as tool_calls, or as call markup in its text, which the miner reads too).
_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The current time in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
_PROBE = {
    "messages": [{"role": "user", "content": "What time is it in Paris?"}],
    "tools": [_PROBE_TOOL],
    "max_tokens": 64,
    "temperature": 0,
}
# "required" first (the model must call: a clear test); an engine that refuses it (llama-cpp-python's
# chatml-function-calling format asserts on it, HTTP 500) is asked again with "auto", which is
# what validators send.
_TOOL_CHOICES = ("required", "auto")
_TOOL_ADVICE = "start the engine with tool support (docs/miner.md, 'Serve your own model')"


def engine_error(body: bytes, limit: int = 300) -> str:
    """The engine's own words for a refusal, on one line (the miner's reading of them)."""
    return engine_error_text(body, limit)


async def tools_reach_the_model(url: str, model: str, api_key_env: str | None) -> str | None:
    """None when the engine answers a request with one tool with a call to it (``tool_choice``
    "required", else "auto" where the engine refuses "required"); else why not, in a line that
    quotes the engine's own error and says what to do (a warning: a weak model may also fail)."""
    key = os.environ.get(api_key_env or "", "") if api_key_env else ""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    refused: list[str] = []
    for tool_choice in _TOOL_CHOICES:
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120.0), headers=headers) as session,
                session.post(
                    completions_url(url), json={**_PROBE, "tool_choice": tool_choice, "model": model}
                ) as response,
            ):
                status, body = response.status, await response.read()
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            return f"the engine did not answer a test request ({one_line(str(exc)) or type(exc).__name__})"
        if status != 200:
            refused.append(f"tool_choice {tool_choice!r}: HTTP {status}: {engine_error(body)}")
            continue
        try:
            message = json.loads(body)["choices"][0]["message"]
            calls = decode(message, tools=[_PROBE_TOOL])
        except (ValueError, KeyError, IndexError, TypeError, DecodeError):
            calls = []
        if calls:
            return None
        earlier = f" (it refused {refused[0]})" if refused else ""
        return (
            f"the engine answered a request that requires a tool call without one{earlier}, so the tools "
            f"may not reach the model; {_TOOL_ADVICE}"
        )
    return (
        f"the engine refused a request with tools ({'; '.join(refused)}): its own error says why "
        "(docs/miner.md, 'Serve your own model', lists the engine settings that let tools through)"
    )
