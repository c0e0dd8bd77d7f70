"""The localnet's start check of a user's engine: an engine that refuses tool_choice "required"
(llama-cpp-python's chatml-function-calling asserts on it, HTTP 500) is asked again with "auto",
and a refusal is reported in the engine's own words."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from subnet.localnet.endpoints import engine_error, tools_reach_the_model

_CALL = {"type": "function", "function": {"name": "get_time", "arguments": '{"city": "Paris"}'}}
_ASSERTION = "AssertionError: tool_choice 'required' is not supported by chatml-function-calling"


class RefusesRequired:
    """An engine that refuses "required" like llama-cpp-python and answers "auto" (or refuses it too)."""

    def __init__(self, auto_works: bool) -> None:
        self.auto_works = auto_works
        self.choices: list[Any] = []

    async def chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.choices.append(body.get("tool_choice"))
        if body.get("tool_choice") == "required":
            return web.json_response({"error": {"message": _ASSERTION, "type": "internal"}}, status=500)
        if not self.auto_works:
            return web.Response(text="'dict object' has no attribute 'content'", status=500)
        message = {"role": "assistant", "content": None, "tool_calls": [_CALL]}
        return web.json_response({"choices": [{"index": 0, "message": message}]})


async def _probe(engine: RefusesRequired) -> str | None:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", engine.chat)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        return await tools_reach_the_model(f"http://127.0.0.1:{runner.addresses[0][1]}/v1", "m", None)
    finally:
        await runner.cleanup()


async def test_an_engine_refusing_required_is_asked_with_auto() -> None:
    engine = RefusesRequired(auto_works=True)
    assert await _probe(engine) is None
    assert engine.choices == ["required", "auto"]


async def test_a_refusal_quotes_the_engines_own_error() -> None:
    engine = RefusesRequired(auto_works=False)
    problem = await _probe(engine)
    assert problem is not None
    assert _ASSERTION in problem  # the JSON error's message, not a byte excerpt
    assert "'dict object' has no attribute 'content'" in problem  # a plain-text refusal, as sent
    assert "tool_choice 'required': HTTP 500" in problem and "tool_choice 'auto': HTTP 500" in problem
    assert "\n" not in problem


def test_engine_error_reads_the_common_shapes() -> None:
    assert engine_error(b'{"error": {"message": "bad template"}}') == "bad template"
    assert engine_error(b'{"detail": "Not Found"}') == "Not Found"
    assert engine_error(b'{"error": "overloaded"}') == "overloaded"
    assert engine_error(b"plain\\ntext") == "plain\\ntext"
    assert engine_error(b"x" * 500, limit=20) == "x" * 17 + "..."
