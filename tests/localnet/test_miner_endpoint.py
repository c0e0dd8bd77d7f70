"""`python -m subnet.localnet --model.base_url URL`: a miner in front of one's own OpenAI-compatible
engine, scored and weighted on the devchain like the demo miners. Here the engine is a stand-in
served by the test on loopback (it calls the offered tool the request names, with the values the
request's words give, and wants an API key); `test_real_engine.py` runs the same against a real
llama.cpp server."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from subnet.localnet.settings import UsageError, parse_settings
from tasks.catalog import ordered_categories

REPO = Path(__file__).resolve().parents[2]
# The episodes' column titles on the leaderboard: their short labels in the category registry.
EPISODE_LABELS = {info.label for info in ordered_categories() if info.episode}
KEY = "engine-secret"


class StandInEngine:
    """An OpenAI-compatible engine on loopback: /v1/models names one model; a chat completion
    with ``tool_choice`` "required" (the localnet's probe) calls the first offered tool with "x"
    for each required parameter at once; any other answers in words, so the miner never calls:
    right on the round's no-call tasks (a junk call earns nothing, and would leave the miner
    without weight). Its two rounds end before the devchain's weights rate limit (10
    blocks of 0.5 s) has passed since the validator's registration: the validator waits the few
    blocks left and sets its weights."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.keys: set[str | None] = set()

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "standin-7b", "object": "model"}]})

    async def chat(self, request: web.Request) -> web.Response:
        self.keys.add(request.headers.get("Authorization"))
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        body = await request.json()
        self.requests.append(body)

        tools = body.get("tools") or []
        message: dict[str, Any] = {"role": "assistant", "content": "No tool fits."}
        if tools and body.get("tool_choice") == "required":
            function = tools[0]["function"]
            required = function.get("parameters", {}).get("required", [])
            arguments = {name: "x" for name in required}
            call = {
                "id": "c0",
                "type": "function",
                "function": {"name": function["name"], "arguments": json.dumps(arguments)},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return web.json_response(
            {"id": "s", "object": "chat.completion", "model": body.get("model"),
             "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        )  # fmt: skip

    async def serve(self) -> tuple[web.AppRunner, str]:
        app = web.Application()
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/chat/completions", self.chat)
        runner = web.AppRunner(app, shutdown_timeout=0.1)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/v1"


async def _localnet(state: Path, *args: str, env_key: str | None = KEY) -> tuple[int, str]:
    env = {"ENGINE_KEY": env_key} if env_key else {}
    import os

    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "subnet.localnet", "--state.dir", str(state), "--dashboard.port", "0", *args,
        cwd=REPO, env={**os.environ, **env}, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await asyncio.wait_for(process.communicate(), timeout=600)
    return process.returncode or 0, output.decode()


async def test_an_endpoint_miner_is_scored_and_weighted(tmp_path: Path) -> None:
    engine = StandInEngine()
    runner, url = await engine.serve()
    try:
        code, output = await _localnet(
            tmp_path / "state", "--miners", "0", "--model.base_url", url, "--rounds", "2",
            "--round.tasks", "6",
            "--model.api_key_env", "ENGINE_KEY",
        )  # fmt: skip
    finally:
        await runner.cleanup()
    assert code == 0, output
    assert f"engine 1: {url} serves standin-7b" in output
    assert "engine1 ready" in output
    assert "round 2 scored" in output
    assert "2 rounds of 6 tasks and 2 episodes per miner" in output
    table = output.split("leaderboard (netuid", 1)[1].splitlines()
    row = next(line for line in table if " engine1 " in line)
    assert f"standin-7b @ {url}" in row
    # The episodes played (their categories are drawn per round) have columns after the tasks'.
    header = table[1].split()
    columns = header[header.index("valid") + 1 : header.index("latency")]
    episodes = [title for title in columns if title in EPISODE_LABELS]
    assert episodes and columns[-len(episodes) :] == episodes, header
    cells = row.split()
    assert re.search(r"\s\d+/16\s", row), row  # valid: 2 rounds x (6 tasks + 2 episodes)
    assert "round 1 scored" in output and "+ 2 episodes:" in output
    weight, incentive = float(cells[-2]), float(cells[-1])
    assert weight == pytest.approx(1.0) and incentive > 0, output  # the only miner: all the weight
    assert re.search(r"\d\.\d{3}", row)
    assert engine.requests and {request["model"] for request in engine.requests} == {"standin-7b"}
    assert engine.keys == {f"Bearer {KEY}"}
    assert "warning: engine" not in output  # the stand-in lets the tools reach its "model"
    assert KEY not in output and KEY not in (tmp_path / "state" / "logs" / "engine1.log").read_text()


async def test_an_engine_that_does_not_answer_is_one_line(tmp_path: Path, unused_tcp_port: int) -> None:
    code, output = await _localnet(
        tmp_path / "state", "--miners", "0", "--model.base_url", f"http://127.0.0.1:{unused_tcp_port}/v1"
    )
    assert code == 2, output
    lines = [line for line in output.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "the engine does not answer" in lines[0] and "Serve your own model" in lines[0]


async def test_an_engine_wanting_a_key_is_one_line(tmp_path: Path) -> None:
    async def locked(request: web.Request) -> web.Response:
        return web.json_response({"error": {"message": "no key"}}, status=401)

    app = web.Application()
    app.router.add_get("/v1/models", locked)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        code, output = await _localnet(
            tmp_path / "state",
            "--miners",
            "0",
            "--model.base_url",
            f"http://127.0.0.1:{runner.addresses[0][1]}",
        )
    finally:
        await runner.cleanup()
    assert code == 2 and "wants an API key (HTTP 401)" in output and "--model.api_key_env" in output, output


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--miners", "0"], "--miners 0 needs at least one --model.base_url"),
        (["--model.base_url", "ftp://x"], "expected an http:// or https:// URL"),
        (["--model.name", "m"], "more --model.name names than --model.base_url URLs"),
        (["--model.api_key_env", "NOT-A-NAME"], "expected the name of an environment variable"),
    ],
)
def test_endpoint_flags_are_checked(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_settings(argv)


def test_endpoint_miners_give_up_before_the_validator() -> None:
    settings = parse_settings(["--model.base_url", "http://127.0.0.1:8080", "--query.timeout", "60"])
    assert settings.endpoints == ("http://127.0.0.1:8080",)
    assert settings.miner_timeout < settings.query_timeout


async def _serve(routes: list[web.RouteDef]) -> tuple[web.AppRunner, str]:
    app = web.Application()
    app.add_routes(routes)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/v1"


_GET_TIME = {"name": "get_time", "arguments": '{"city": "Paris"}'}
_HERMES_CALL = '<tool_call>{"name": "get_time", "arguments": {"city": "Paris"}}</tool_call>'


def _answering(message: dict[str, Any], status: int = 200) -> web.RouteDef:
    async def chat(request: web.Request) -> web.Response:
        if status != 200:
            return web.json_response({"error": {"message": "tools are not supported"}}, status=status)
        return web.json_response({"choices": [{"index": 0, "message": {"role": "assistant", **message}}]})

    return web.post("/v1/chat/completions", chat)


@pytest.mark.parametrize(
    ("message", "status", "problem"),
    [
        ({"tool_calls": [{"type": "function", "function": _GET_TIME}]}, 200, None),
        ({"content": _HERMES_CALL}, 200, None),
        ({"content": "It is noon in Paris."}, 200, "without one, so the tools may not reach the model"),
        ({}, 400, "refused a request with tools (tool_choice 'required': HTTP 400: tools are not supported"),
    ],
)  # fmt: skip
async def test_the_localnet_checks_that_tools_reach_the_model(
    message: dict[str, Any], status: int, problem: str | None
) -> None:
    from subnet.localnet.endpoints import tools_reach_the_model

    runner, url = await _serve([_answering(message, status)])
    try:
        found = await tools_reach_the_model(url, "m", None)
    finally:
        await runner.cleanup()
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found and "docs/miner.md" in found


async def test_a_url_with_no_engine_is_one_line(tmp_path: Path) -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="not here", status=404)

    runner, url = await _serve([web.get("/{tail:.*}", page)])
    try:
        code, output = await _localnet(tmp_path / "state", "--miners", "0", "--model.base_url", url)
    finally:
        await runner.cleanup()
    assert code == 2 and "no OpenAI-compatible engine there" in output and "check the URL" in output, output
