"""Test equipment for `python -m subnet.evaluate`: a local stand-in for an OpenAI-compatible server,
and the miner's real signed gate around the same canned answers.

The stand-in is a real aiohttp server on 127.0.0.1 (in a thread with its own event loop, so the
command's own `asyncio.run` drives the client side). It knows the evaluation's tasks (the tests
generate the same ones from the same seed) and answers each one right or wrong by category,
as structured `tool_calls` or as python-call text, so the accuracies the table must show are
known exactly.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from subnet import evaluate

ROOT = Path(__file__).resolve().parents[2]
SEED = 1234
RIGHT_CATEGORIES = {"simple", "parallel", "irrelevance"}

Reply = tuple[int, Any, float]  # HTTP status, JSON payload (or raw bytes), delay in seconds
Policy = Callable[[Any], Reply]


# --------------------------------------------------------------------------- the stand-in server


class StandInServer:
    """An OpenAI-compatible chat-completions server on loopback, answering with `policy`."""

    def __init__(self, tasks_by_key: dict[str, Any], policy: Callable[[Any, int], Reply]) -> None:
        self.tasks_by_key = tasks_by_key
        self.policy = policy
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.arrivals: list[float] = []
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    async def _models(self, _request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "stand-in-model", "object": "model"}]})

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        self.arrivals.append(time.monotonic())
        task = self.tasks_by_key.get(task_key(body["messages"], body["tools"]))
        status, payload, delay = self.policy(task, len(self.requests))
        if delay:
            await asyncio.sleep(delay)
        if isinstance(payload, bytes):
            return web.Response(status=status, body=payload, content_type="application/json")
        return web.json_response(payload, status=status)

    def build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        return app

    async def _start(self) -> str:
        self._runner = web.AppRunner(self.build_app(), shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> StandInServer:
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def task_key(messages: Any, tools: Any) -> str:
    names = [tool["function"]["name"] for tool in tools]
    return json.dumps([messages, names], sort_keys=True)


def tasks_for(settings: evaluate.EvaluateSettings) -> dict[str, Any]:
    """The evaluation's tasks, keyed the way the stand-in recognises a request."""
    return {task_key(task.messages, task.tools): task for task in evaluate.build_tasks(settings)}


# --------------------------------------------------------------------------- answers


def _first_acceptable(values: list[Any]) -> Any:
    return materialise(next(value for value in values if value != ""))


def materialise(value: Any) -> Any:
    """A concrete value from a BFCL answer value: inside dicts, each key lists its acceptable values."""
    if isinstance(value, dict):
        return {
            key: _first_acceptable(values) for key, values in value.items() if any(v != "" for v in values)
        }
    if isinstance(value, list):
        return [materialise(item) for item in value]
    return value


def right_calls(task: Any) -> list[tuple[str, dict[str, Any]]]:
    """One acceptable answer: the first acceptable value of each parameter ("" = leave it out)."""
    calls = []
    for expected in task.expected:
        ((name, params),) = expected.items()
        arguments = {
            param: _first_acceptable(values)
            for param, values in params.items()
            if any(v != "" for v in values)
        }
        calls.append((name, arguments))
    return calls


def as_text(calls: list[tuple[str, dict[str, Any]]]) -> str:
    """The BFCL python-call list, as a pythonic model writes it."""
    rendered = (f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})" for name, args in calls)
    return "[" + ", ".join(rendered) + "]"


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stand-in",
        "object": "chat.completion",
        "created": 0,
        "model": "stand-in-model",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def structured(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    tool_calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)
    ]
    return completion({"content": None, "tool_calls": tool_calls})


def _as_text_for(task: Any) -> bool:
    """Half the tasks answer in text, half with tool_calls, so both paths are scored."""
    return hashlib.sha256(task.id.encode()).digest()[0] % 2 == 0


def right_or_wrong(task: Any, _count: int) -> Reply:
    """Right on RIGHT_CATEGORIES, wrong elsewhere."""
    calls = right_calls(task)
    if task.category in RIGHT_CATEGORIES:
        if not calls:  # irrelevance: say so, call nothing
            return 200, completion({"content": "None of these tools can do that."}), 0.0
        if _as_text_for(task):
            return 200, completion({"content": as_text(calls)}), 0.0
        return 200, structured(calls), 0.0
    if not calls:  # irrelevance / missing_param answered with a call: wrong
        first = task.tools[0]["function"]["name"]
        return 200, structured([(first, {})]), 0.0
    wrong = [("no_such_function", args) for _name, args in calls]
    return 200, (completion({"content": as_text(wrong)}) if _as_text_for(task) else structured(wrong)), 0.0


def settings(url: str, **overrides: Any) -> evaluate.EvaluateSettings:
    values: dict[str, Any] = {"endpoint": evaluate.chat_completions_url(url), "n": 60, "seed": SEED}
    values.update(overrides)
    return evaluate.EvaluateSettings(**values)


def expected_accuracy(task_list: list[Any]) -> dict[str, float]:
    categories = {task.category for task in task_list}
    return {category: 1.0 if category in RIGHT_CATEGORIES else 0.0 for category in categories}


# --------------------------------------------------------------------------- a real miner gate


class SignedMiner(StandInServer):
    """The miner's real aiohttp app (bt.http_auth gate, permission check) around canned answers."""

    def __init__(self, tasks_by_key: dict[str, Any], miner_hotkey: str, validator_hotkey: str) -> None:
        super().__init__(tasks_by_key, right_or_wrong)
        self.miner_hotkey = miner_hotkey
        self.validator_hotkey = validator_hotkey
        self.callers: list[str] = []

    def build_app(self) -> web.Application:
        from subnet.protocol import ChatCompletionRequest, ChatCompletionResponse
        from subnet.transport.policy import AuthPolicy, DirectoryEntry, ServerPolicy, StaticDirectory
        from subnet.transport.server import build_miner_app

        async def handler(request: ChatCompletionRequest, caller: Any) -> ChatCompletionResponse:
            self.callers.append(caller.hotkey)
            body = request.model_dump(mode="json", exclude_none=True)
            task = self.tasks_by_key[task_key(body["messages"], body["tools"])]
            _status, payload, _delay = right_or_wrong(task, 0)
            return ChatCompletionResponse.model_validate(payload)

        directory = StaticDirectory([DirectoryEntry(uid=0, hotkey=self.validator_hotkey, stake=100.0)])
        return build_miner_app(
            hotkey_ss58=self.miner_hotkey,
            directory=directory,
            policy=ServerPolicy(auth=AuthPolicy(min_stake=0.0)),
            handler=handler,
        )
