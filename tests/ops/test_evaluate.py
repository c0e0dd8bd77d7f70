"""`python -m subnet.evaluate` against a local stand-in for an OpenAI-compatible server
(tests/ops/evaluate_standin.py): the table, JSON and markdown, failures, flags, seeds, pacing,
Ctrl-C and the task sources. The signed runs and the validator's own parts are in
test_evaluate_signed.py.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from subnet import evaluate
from tests.ops.evaluate_standin import (
    RIGHT_CATEGORIES,
    ROOT,
    SEED,
    Reply,
    StandInServer,
    completion,
    expected_accuracy,
    right_or_wrong,
    settings,
    task_key,
    tasks_for,
)
from tests.support.terminal import module_command

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
            module_command("subnet.evaluate", *argv),  # SIGINT as in a terminal, whatever the worker's
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
