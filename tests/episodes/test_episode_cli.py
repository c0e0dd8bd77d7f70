"""Episodes on the command line: tasks sample/export --episodes, and evaluate --episodes against
an OpenAI-compatible stand-in that plays the reference plan (every episode passes) or only talks."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from subnet import evaluate
from subnet.tasks_cli import main as tasks_main
from tasks.episodes import generate_episodes, variant
from tasks.episodes.reference import ReferencePlayer


class _Endpoint:
    """Answers chat completions in a thread of its own, with the reference player of the episode
    a request belongs to (``players``; None: always answer in words)."""

    def __init__(self, players: list[tuple[str, set[str], ReferencePlayer]] | None) -> None:
        self.players = players
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        message: Any = {"role": "assistant", "content": "I would rather not."}
        if self.players is not None:
            first = next(m["content"] for m in body["messages"] if m["role"] == "user")
            names = {tool["function"]["name"] for tool in body["tools"]}
            player = next(p for user, known, p in self.players if user == first and names <= known)
            message = await player.ask(body["messages"], body["tools"])
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return web.json_response({"id": "x", "object": "chat.completion", "model": "m", "choices": [choice]})

    async def _models(self, _request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "m", "object": "model"}]})

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> _Endpoint:
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def _players(seed: int, count: int) -> list[tuple[str, set[str], ReferencePlayer]]:
    """Per episode: its first message, every tool name its variant shows (drawn per variant, so
    they tell apart episodes that begin alike) and its reference player."""
    variant_seed = (seed * 1_000_003 + 11) % 2**63
    players = []
    for episode in generate_episodes(seed, count):
        shown = variant(episode, variant_seed)
        names = {tool["function"]["name"] for turn in range(len(shown.turns)) for tool in shown.offered(turn)}
        players.append((shown.turns[0].user, names, ReferencePlayer(shown)))
    return players


def test_evaluate_plays_episodes_and_reports_per_category(capsys: pytest.CaptureFixture[str]) -> None:
    with _Endpoint(_players(5, 30)) as endpoint:
        assert evaluate.main(["--endpoint", endpoint.url, "--episodes", "30", "--seed", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {row["category"]: row for row in report["categories"]}
    assert rows["all"]["episodes"] == 30 and rows["all"]["success"] == 1.0 and rows["all"]["unsafe"] == 0
    with _Endpoint(None) as endpoint:
        assert evaluate.main(["--endpoint", endpoint.url, "--episodes", "30", "--seed", "5"]) == 0
    table = capsys.readouterr().out
    assert "multi_turn_base" in table and "success" in table
    assert " 0.0%" in table.splitlines()[-1] or "all" in table


def test_sample_and_export_episodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tasks_main(["sample", "--episodes", "4", "--seed", "e"]) == 0
    shown = capsys.readouterr().out
    assert shown.count("turn 1 user:") == 4 and "plan:" in shown and "tools:" in shown
    out = tmp_path / "trajectories.jsonl"
    assert tasks_main(["export", "--episodes", "25", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 25 and all(row["messages"][0]["role"] == "user" for row in rows)
    assert any(message["role"] == "tool" for row in rows for message in row["messages"])
    assert tasks_main(["export", "--out", str(out)]) == 2
    assert "give --tasks.count N" in capsys.readouterr().err
