"""`python -m subnet.evaluate` against a local stand-in for an OpenAI-compatible server.

The stand-in is a real aiohttp server on 127.0.0.1 (in a thread with its own event loop, so the
command's own `asyncio.run` drives the client side). It knows the evaluation's tasks (the test
generates the same ones from the same seed) and answers each one right or wrong by category,
as structured `tool_calls` or as python-call text, so the accuracies the table must show are
known exactly.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

pytest.importorskip("tasks", reason="tasks has not landed")
pytest.importorskip("scoring", reason="scoring has not landed")

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


# --------------------------------------------------------------------------- tests


def test_url_forms_normalise_to_chat_completions() -> None:
    assert evaluate.chat_completions_url("http://h:8000") == "http://h:8000/v1/chat/completions"
    assert evaluate.chat_completions_url("http://h:8000/v1/") == "http://h:8000/v1/chat/completions"
    full = "https://h/openai/v1/chat/completions"
    assert evaluate.chat_completions_url(full) == full
    assert evaluate.models_url(full) == "https://h/openai/v1/models"
    for bad in ("h:8000", "ftp://h/v1", "http://", "http://h:99999/v1"):
        with pytest.raises(evaluate.EvaluateError):
            evaluate.chat_completions_url(bad)


def test_table_shows_the_right_accuracies(capsys: pytest.CaptureFixture[str]) -> None:
    task_list = evaluate.build_tasks(settings("http://unused"))
    by_key = {task_key(t.messages, t.tools): t for t in task_list}
    with StandInServer(by_key, right_or_wrong) as server:
        code = evaluate.main(["--endpoint", server.url + "/v1", "--tasks.count", "60", "--seed", str(SEED)])
    out, err = capsys.readouterr()
    assert code == 0

    rows = {
        line.split()[0]: line.split() for line in out.splitlines() if line and line.split()[0].isidentifier()
    }
    expected = expected_accuracy(task_list)
    for category, accuracy in expected.items():
        row = rows[category]
        count = sum(task.category == category for task in task_list)
        assert row[1] == str(count), row
        assert row[2] == f"{accuracy:.1%}", row
    right = sum(task.category in RIGHT_CATEGORIES for task in task_list)
    assert rows["overall"][1:3] == ["60", f"{right / 60:.1%}"]
    assert f"seed: {SEED}" in out
    assert (
        f"rerun: python -m subnet.evaluate --endpoint {server.url}/v1/chat/completions "
        f"--tasks.count 60 --seed {SEED}" in out
    )
    assert "simple_function_checker:wrong_func_name" in out  # wrong names counted by type
    assert "model: stand-in-model" in out  # taken from /v1/models
    # Progress and the seed went to stderr, never into the table.
    assert f"seed {SEED}" in err and "[60/60]" in err
    assert all(body["model"] == "stand-in-model" for body in server.requests)
    assert all(body["temperature"] == 0.0 and body["tool_choice"] == "auto" for body in server.requests)


def test_json_output_parses_and_agrees(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVAL_TEST_KEY", "sk-local")
    task_list = evaluate.build_tasks(settings("http://unused"))
    by_key = {task_key(t.messages, t.tools): t for t in task_list}
    with StandInServer(by_key, right_or_wrong) as server:
        code = evaluate.main(
            [
                *("--endpoint", server.url, "--tasks.count", "60", "--seed", str(SEED), "--json"),
                *("--model.api_key_env", "EVAL_TEST_KEY"),
            ]
        )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["seed"] == SEED and report["n"] == 60
    for category, accuracy in expected_accuracy(task_list).items():
        assert report["categories"][category]["accuracy"] == accuracy
    wrong = sum(task.category not in RIGHT_CATEGORIES for task in task_list)
    assert sum(report["error_types"].values()) == wrong
    assert report["statuses"] == {"ok": 60}
    assert [row["task_id"] for row in report["tasks"]] == [task.id for task in task_list]
    assert report["overall"]["latency_p50_ms"] is not None
    assert all(headers.get("Authorization") == "Bearer sk-local" for headers in server.headers)


def test_category_filter_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    chosen = settings("http://unused", n=12, categories=("simple",))
    by_key = tasks_for(chosen)
    assert {task.category for task in by_key.values()} == {"simple"}
    with StandInServer(by_key, right_or_wrong) as server:
        argv = ["--endpoint", server.url, "--tasks.count", "12", "--seed", str(SEED), "--category", "simple"]
        code = evaluate.main([*argv, "--format", "markdown"])
    assert code == 0
    out = capsys.readouterr().out
    assert "| simple | 12 | 100.0% |" in out
    assert "| overall | 12 | 100.0% |" in out
    assert f"--tasks.count 12 --seed {SEED} --category simple`" in out  # the rerun line keeps the filter


def test_transport_failures_are_counted_not_fatal(capsys: pytest.CaptureFixture[str]) -> None:
    """500s, garbage, wrong shapes and hangs score 0 with a transport error type; the run goes on."""
    chosen = settings("http://unused", n=20)
    by_key = tasks_for(chosen)
    failures: dict[int, Reply] = {
        0: (500, {"error": {"type": "internal", "message": "boom"}}, 0.0),
        1: (200, b"this is not json", 0.0),
        2: (200, {"choices": "nope"}, 0.0),
        3: (200, completion({"content": "x"}), 2.0),  # slower than --timeout
    }

    def flaky(task: Any, count: int) -> Reply:
        return failures.get(count % 5) or right_or_wrong(task, count)

    with StandInServer(by_key, flaky) as server:
        argv = ["--endpoint", server.url, "--tasks.count", "20", "--seed", str(SEED), "--json"]
        code = evaluate.main([*argv, "--query.timeout", "0.5", "--query.concurrency", "1"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    statuses = report["statuses"]  # the transport's QueryStatus words, as the validator stores them
    assert statuses["http_error"] == 4
    assert [row["http_status"] for row in report["tasks"] if row["status"] == "http_error"] == [500] * 4
    assert statuses["bad_json"] == 4
    assert statuses["bad_schema"] == 4
    assert statuses["timeout"] == 4
    assert report["error_types"]["transport:timeout"] == 4
    assert all(row["score"] == 0.0 for row in report["tasks"] if row["status"] != "ok")


def test_endpoint_down_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], unused_tcp_port: int) -> None:
    code = evaluate.main(
        ["--endpoint", f"http://127.0.0.1:{unused_tcp_port}/v1", "--tasks.count", "5", "--seed", "1"]
    )
    assert code == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("evaluate: error: cannot reach http://127.0.0.1:")


@pytest.mark.parametrize(
    "argv",
    [
        ["--endpoint", "localhost:8000"],
        ["--endpoint", "http://h/v1", "--tasks.count", "0"],
        ["--endpoint", "http://h/v1", "--category", "poetry"],
        ["--endpoint", "http://h/v1", "--query.timeout", "-1"],
        ["--tasks.count", "5"],
    ],
)
def test_bad_flags_are_one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main(argv)
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_random_seed_is_printed_and_reproduces(capsys: pytest.CaptureFixture[str]) -> None:
    first = evaluate.parse_settings(["--endpoint", "http://h/v1", "--tasks.count", "10"])
    second = evaluate.parse_settings(["--endpoint", "http://h/v1", "--tasks.count", "10"])
    assert first.seed != second.seed  # random by default (2**31 choices)
    again = evaluate.parse_settings(
        ["--endpoint", "http://h/v1", "--tasks.count", "10", "--seed", str(first.seed)]
    )
    assert [t.id for t in evaluate.build_tasks(first)] == [t.id for t in evaluate.build_tasks(again)]
    assert [t.tools for t in evaluate.build_tasks(first)] == [t.tools for t in evaluate.build_tasks(again)]


def test_python_dash_m_entry_point() -> None:
    chosen = settings("http://unused", n=8)
    by_key = tasks_for(chosen)
    with StandInServer(by_key, right_or_wrong) as server:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "subnet.evaluate",
                "--endpoint",
                server.url,
                "--tasks.count",
                "8",
                "--seed",
                str(SEED),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    assert result.returncode == 0, result.stderr
    assert "overall" in result.stdout and "error types" in result.stdout


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


def test_signed_run_against_a_real_miner_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("subnet.transport.server", reason="the transport has not landed")
    from subnet.wallets import create_dev_wallet

    validator = create_dev_wallet("validator", path=tmp_path)
    miner = create_dev_wallet("miner", path=tmp_path)
    chosen = settings("http://unused", n=12)
    by_key = tasks_for(chosen)
    argv = ["--tasks.count", "12", "--seed", str(SEED), "--json", "--query.concurrency", "2"]
    with SignedMiner(by_key, miner.hotkey_ss58, validator.hotkey_ss58) as server:
        # Unsigned: the gate refuses every request before any model work.
        assert evaluate.main(["--endpoint", server.url, *argv]) == 0
        unsigned = json.loads(capsys.readouterr().out)
        assert unsigned["statuses"] == {"http_error": 12}
        assert {row["http_status"] for row in unsigned["tasks"]} == {401}
        table = [
            "--endpoint",
            server.url,
            "--tasks.count",
            "12",
            "--seed",
            str(SEED),
            "--query.concurrency",
            "2",
        ]
        assert evaluate.main(table) == 0  # the table names the HTTP code, stderr what to do
        shown = capsys.readouterr()
        assert "http errors: 401 x12" in shown.out
        assert "every answer was HTTP 401" in shown.err and "--wallet.name NAME" in shown.err
        assert server.callers == []
        # Signed as the registered validator; the miner's hotkey comes from its /health.
        signing = ["--wallet.name", "validator", "--wallet.path", str(tmp_path)]
        assert evaluate.main(["--endpoint", server.url, *argv, *signing]) == 0
        signed = json.loads(capsys.readouterr().out)
    assert signed["statuses"] == {"ok": 12}
    assert server.callers == [validator.hotkey_ss58] * 12
    for category, accuracy in expected_accuracy(list(by_key.values())).items():
        assert signed["categories"][category]["accuracy"] == accuracy


def test_signing_with_a_missing_wallet_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--endpoint", "http://127.0.0.1:9/v1", "--wallet.name", "nobody", "--wallet.path", str(tmp_path)]
    assert evaluate.main([*argv, "--tasks.count", "3", "--seed", "1"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "nobody" in lines[0] and "subnet.wallets create" in lines[0]


def test_the_wallets_directory_comes_from_bt_wallet_path_as_for_the_neurons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from subnet.wallets import create_dev_wallet

    validator = create_dev_wallet("validator", path=tmp_path / "env")
    monkeypatch.setenv("BT_WALLET_PATH", str(tmp_path / "env"))
    signer = evaluate.load_signer(
        evaluate.parse_settings(["--endpoint", "http://x/v1", "--wallet.name", "validator"])
    )
    assert signer.ss58_address == validator.hotkey_ss58
    # the flag still wins over the environment
    flagged = [
        "--endpoint",
        "http://x/v1",
        "--wallet.name",
        "validator",
        "--wallet.path",
        str(tmp_path / "none"),
    ]
    with pytest.raises(evaluate.EvaluateError, match="validator"):
        evaluate.load_signer(evaluate.parse_settings(flagged))


def test_ctrl_c_reports_the_tasks_that_finished() -> None:
    import signal

    chosen = settings("http://unused", n=10)
    by_key = tasks_for(chosen)

    def slow_after_three(task: Any, count: int) -> Reply:
        status, payload, _delay = right_or_wrong(task, count)
        return status, payload, (0.0 if count <= 3 else 30.0)

    with StandInServer(by_key, slow_after_three) as server:
        argv = [
            "--endpoint",
            server.url,
            "--tasks.count",
            "10",
            "--seed",
            str(SEED),
            "--json",
            "--query.concurrency",
            "1",
        ]
        process = subprocess.Popen(
            [sys.executable, "-m", "subnet.evaluate", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith("[3/10]"):
                break
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)  # generous: the suite runs in two busy workers
    assert process.returncode == 130
    assert "interrupted after 3/10 tasks" in err
    report = json.loads(out)
    assert report["n"] == 3 and len(report["tasks"]) == 3


def test_rate_paces_request_starts(capsys: pytest.CaptureFixture[str]) -> None:
    chosen = settings("http://unused", n=6)
    with StandInServer(tasks_for(chosen), right_or_wrong) as server:
        argv = [
            "--endpoint",
            server.url,
            "--tasks.count",
            "6",
            "--seed",
            str(SEED),
            "--query.concurrency",
            "6",
        ]
        assert evaluate.main([*argv, "--rate", "10"]) == 0
    # Six starts at most 10 per second span at least half a second (a lower bound: robust to load).
    assert server.arrivals[-1] - server.arrivals[0] >= 0.45
    assert "--rate 10" in capsys.readouterr().out


async def _wait_healthy(url: str, process: subprocess.Popen[str], deadline_s: float) -> None:
    import aiohttp

    deadline = time.monotonic() + deadline_s
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            assert process.poll() is None, f"the miner exited early: {process.communicate()[1][-2000:]}"
            try:
                async with session.get(url + "/health", timeout=aiohttp.ClientTimeout(total=2)) as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.3)
    raise AssertionError("the miner did not become healthy in time")


def test_end_to_end_through_a_miner_process_on_the_devchain(
    tmp_path: Path, unused_tcp_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """bootstrap (devchain) -> neurons/miner.py (openai backend) -> stand-in engine; evaluate signs."""
    if not (ROOT / "neurons" / "miner.py").is_file():
        pytest.skip("neurons/miner.py has not landed")
    from subnet.bootstrap import BootstrapSettings, bootstrap

    chain_path, wallets = tmp_path / "chain.sqlite", tmp_path / "wallets"
    asyncio.run(
        bootstrap(
            BootstrapSettings(
                network="dev", devchain_path=chain_path, wallet_path=wallets, miners=("miner1",)
            ),
            log=lambda _line: None,
        )
    )
    chosen = settings("http://unused", n=20)
    with StandInServer(tasks_for(chosen), right_or_wrong) as engine:
        miner_url = f"http://127.0.0.1:{unused_tcp_port}"
        command = [
            sys.executable,
            "neurons/miner.py",
            "--wallet.name",
            "miner1",
            "--wallet.path",
            str(wallets),
        ]
        command += ["--subtensor.network", "dev", "--devchain.path", str(chain_path), "--netuid", "1"]
        command += [
            "--axon.ip",
            "127.0.0.1",
            "--axon.port",
            str(unused_tcp_port),
            "--axon.external_ip",
            "127.0.0.1",
        ]
        command += ["--model.backend", "openai", "--model.base_url", engine.url + "/v1"]
        command += ["--blacklist.min_stake", "0"]
        miner = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            asyncio.run(_wait_healthy(miner_url, miner, deadline_s=90))
            argv = [
                "--endpoint",
                miner_url,
                "--tasks.count",
                "20",
                "--seed",
                str(SEED),
                "--json",
                "--rate",
                "8",
            ]
            code = evaluate.main([*argv, "--wallet.name", "validator", "--wallet.path", str(wallets)])
        finally:
            miner.terminate()
            miner.communicate(timeout=30)
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["statuses"] == {"ok": 20}
    for category, accuracy in expected_accuracy(list(tasks_for(chosen).values())).items():
        assert report["categories"][category]["accuracy"] == accuracy


def test_task_sources_like_the_validator(capsys: pytest.CaptureFixture[str]) -> None:
    def no_call(_task: Any, _count: int) -> Reply:
        return 200, completion({"content": "I would rather not."}), 0.0

    with StandInServer({}, no_call) as server:
        argv = ["--endpoint", server.url, "--tasks.count", "10", "--seed", str(SEED), "--json"]
        code = evaluate.main([*argv, "--tasks.sources", "builtin=0.5,bfcl=0.5"])
    if code == 2 and "bfcl" in capsys.readouterr().err:
        pytest.skip("no BFCL data installed here")
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    ids = [row["task_id"] for row in report["tasks"]]
    assert sum(task_id.startswith("bfcl-") for task_id in ids) == 5
    assert report["statuses"] == {"ok": 10}
    assert "--tasks.sources builtin=0.5,bfcl=0.5" in report["rerun"]


def test_bad_task_sources_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--endpoint", "http://127.0.0.1:9/v1", "--tasks.count", "3", "--tasks.sources", "poetry=1"]
    assert evaluate.main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--tasks.sources 'poetry=1'" in lines[0]


def test_the_xlam_and_bfcl_sources_take_their_files_from_flags() -> None:
    """--tasks.sources builtin=0.8,xlam=0.2 needs the file: --tasks.xlam names it (no flag did)."""
    fixture = str(Path(__file__).resolve().parents[1] / "tasks" / "fixtures" / "xlam.json")
    parsed = evaluate.parse_settings(
        [
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--tasks.sources",
            "builtin=0.5,xlam=0.5",
            "--tasks.xlam",
            fixture,
        ]
    )
    assert parsed.paths == {"xlam": (fixture,)}
    sources = {task.source for task in evaluate.build_tasks(dataclasses.replace(parsed, n=40))}
    assert sources == {"builtin", "xlam"}
    assert "--tasks.xlam" in evaluate.rerun_command(parsed)
    missing = dataclasses.replace(parsed, paths={})
    with pytest.raises(evaluate.EvaluateError, match=r"--tasks\.xlam FILE"):
        evaluate.build_tasks(missing)


# --------------------------------------------------------------------------- the validator's parts


def test_each_score_is_the_validator_judges_on_the_same_answer(capsys: pytest.CaptureFixture[str]) -> None:
    """Every task row of a run (structured calls and text, right and wrong) carries the verdict
    the validator's own judge gives the answer the endpoint sent for that task."""
    from subnet.protocol import ChatCompletionResponse
    from subnet.validator.judge import BfclJudge

    chosen = settings("http://unused", n=40)
    by_key = tasks_for(chosen)
    with StandInServer(by_key, right_or_wrong) as server:
        assert (
            evaluate.main(["--endpoint", server.url, "--tasks.count", "40", "--seed", str(SEED), "--json"])
            == 0
        )
    rows = {row["task_id"]: row for row in json.loads(capsys.readouterr().out)["tasks"]}
    judge = BfclJudge()
    verdicts = set()
    for task in by_key.values():
        _status, payload, _delay = right_or_wrong(task, 0)
        judgement = judge.judge(ChatCompletionResponse.model_validate(payload).message, task)
        row = rows[task.id]
        assert (row["valid"], row["score"]) == (judgement.valid, judgement.score), task.id
        assert row["error_type"] == (None if judgement.valid else judgement.error_type), task.id
        verdicts.add(judgement.valid)
    assert verdicts == {True, False}


def test_a_signed_run_goes_through_the_validators_client(tmp_path: Path) -> None:
    from subnet.transport import EngineTarget, MinerClient
    from subnet.wallets import create_dev_wallet

    validator = create_dev_wallet("validator", path=tmp_path)
    miner = create_dev_wallet("miner", path=tmp_path)
    with SignedMiner({}, miner.hotkey_ss58, validator.hotkey_ss58) as server:
        signed = evaluate.parse_settings(
            ["--endpoint", server.url, "--wallet.name", "validator", "--wallet.path", str(tmp_path)]
        )

        async def clients() -> tuple[Any, Any, Any, Any]:
            async with evaluate.open_endpoint(signed) as endpoint:
                signed_client, target = endpoint.client, endpoint.target
            async with evaluate.open_endpoint(dataclasses.replace(signed, wallet_name=None)) as endpoint:
                return signed_client, target, endpoint.client, endpoint.target

        signed_client, target, plain_client, plain_target = asyncio.run(clients())
    assert isinstance(signed_client, MinerClient)
    assert target.hotkey == miner.hotkey_ss58  # read from the miner's /health
    # Unsigned, the same client (and its bounds) sends to the engine's URL, signing nothing.
    assert isinstance(plain_client, MinerClient)
    assert plain_target == EngineTarget(signed.endpoint, (("Accept", "application/json"),))


def test_a_signed_run_needs_a_miners_address(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A miner serves plain HTTP at /v1/chat/completions, the path its signatures cover."""
    from subnet.wallets import create_dev_wallet

    create_dev_wallet("validator", path=tmp_path)
    argv = ["--wallet.name", "validator", "--wallet.path", str(tmp_path), "--tasks.count", "2", "--seed", "1"]
    assert evaluate.main(["--endpoint", "https://127.0.0.1:9/v1", *argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "a signed run (--wallet.name) talks to a miner" in lines[0]


def test_the_answer_cap_is_the_model_max_new_tokens_flag(capsys: pytest.CaptureFixture[str]) -> None:
    chosen = settings("http://unused", n=4)
    with StandInServer(tasks_for(chosen), right_or_wrong) as server:
        argv = ["--endpoint", server.url, "--tasks.count", "4", "--seed", str(SEED)]
        assert evaluate.main([*argv, "--model.max_new_tokens", "77"]) == 0
    assert [body["max_tokens"] for body in server.requests] == [77] * 4
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        evaluate.parse_settings(["--endpoint", "http://h/v1", "--max-tokens", "77"])
    assert stopped.value.code == 2
    assert "unrecognized arguments: --max-tokens" in capsys.readouterr().err


def test_each_request_is_the_one_a_validators_round_sends() -> None:
    """The round, the episode player and evaluate build their requests with one builder."""
    from subnet.evaluate import run
    from subnet.validator import episodes, request, rounds

    builders = {module.__name__: module.build_request for module in (rounds, episodes, run)}
    assert all(builder is request.build_request for builder in builders.values()), builders


def test_the_request_on_the_wire_is_the_builders_with_the_runs_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What reaches the endpoint is `build_request` for the task (messages, tools, tool_choice,
    max_tokens) with only the run's model and temperature put in."""
    from subnet.validator.request import build_request

    chosen = settings("http://unused", n=30)
    by_key = tasks_for(chosen)
    with StandInServer(by_key, right_or_wrong) as server:
        argv = [
            "--endpoint",
            server.url,
            "--tasks.count",
            "30",
            "--seed",
            str(SEED),
            "--model.max_new_tokens",
            "300",
        ]
        assert evaluate.main([*argv, "--temperature", "0.5"]) == 0
    capsys.readouterr()
    assert len(server.requests) == 30
    for body in server.requests:
        task = by_key[task_key(body["messages"], body["tools"])]
        expected = build_request(task.messages, task.tools, 300)
        shown = expected.model_copy(update={"model": "stand-in-model", "temperature": 0.5})
        assert body == json.loads(shown.to_body()), task.id
