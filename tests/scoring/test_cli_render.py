"""``python -m scoring`` (check, demo) and render()."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scoring import Call
from scoring.decoding import decode
from scoring.demo import samples
from scoring.rendering import FORMATS, render, to_openai_tool_calls
from subnet.scoring_cli import main

FUNCTIONS = [
    {
        "name": "get_weather",
        "parameters": {"type": "dict", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]
ANSWER = [{"get_weather": {"city": ["Paris"]}}]


@pytest.fixture
def task_files(tmp_path: Path) -> tuple[str, str]:
    functions, answer = tmp_path / "functions.json", tmp_path / "answer.json"
    functions.write_text(json.dumps({"id": "x", "function": FUNCTIONS}))
    answer.write_text(json.dumps({"id": "x", "ground_truth": ANSWER}))
    return str(functions), str(answer)


def check_argv(files: tuple[str, str], category: str, output: str, *more: str) -> list[str]:
    return [
        "check",
        "--functions",
        files[0],
        "--answer",
        files[1],
        "--category",
        category,
        "--output",
        output,
        *more,
    ]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_valid_output(capsys: pytest.CaptureFixture[str], task_files: tuple[str, str]) -> None:
    code, out, _ = run_cli(capsys, *check_argv(task_files, "simple", '[get_weather(city="paris")]'))
    assert code == 0 and out.startswith("VALID")


def test_check_invalid_output_explains_why(
    capsys: pytest.CaptureFixture[str], task_files: tuple[str, str]
) -> None:
    code, out, _ = run_cli(capsys, *check_argv(task_files, "simple", '[get_weather(town="paris")]'))
    assert code == 1
    assert (
        "simple_function_checker:missing_required" in out and "why: missing required parameter 'city'" in out
    )


def test_check_json_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, task_files: tuple[str, str]
) -> None:
    monkeypatch.setattr(
        sys, "stdin", io.StringIO('<tool_call>{"name": "get_weather", "arguments": {"city": "Lyon"}}')
    )
    code, out, _ = run_cli(capsys, *check_argv(task_files, "simple", "-", "--json"))
    verdict = json.loads(out)
    assert code == 1 and verdict["error_type"] == "value_error:string"
    # the one value is wrong: the right function alone earns nothing (issue 27)
    assert verdict["score"] == 0.0 and verdict["components"]["tool"] == 1.0


def test_check_irrelevance_needs_no_answer(
    capsys: pytest.CaptureFixture[str], task_files: tuple[str, str]
) -> None:
    functions, _ = task_files
    code, out, _ = run_cli(capsys, "check", "--functions", functions, "--category", "irrelevance",
                           "--output", "I cannot help.")  # fmt: skip
    assert code == 0 and out.startswith("VALID")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["check", "--functions", "/nonexistent.json", "--category", "simple", "--output", "x"],
            "cannot read",
        ),
        (["check", "--functions", "{bad}", "--category", "simple", "--output", "x"], "not valid JSON"),
        (["check", "--functions", "{functions}", "--category", "bogus", "--output", "x"], "invalid choice"),
        (["check", "--functions", "{functions}", "--category", "simple", "--output", "x"], "possible answer"),
        (["check", "--category", "simple"], "required"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    task_files: tuple[str, str],
    argv: list[str],
    message: str,
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    argv = [arg.replace("{bad}", str(bad)).replace("{functions}", task_files[0]) for arg in argv]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and err.startswith("scoring: error:")


def test_demo_runs_as_a_module() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "scoring", "demo"], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    for fmt in FORMATS:
        assert f"valid, {fmt} format" in result.stdout
    error_types = "wrong_func_name missing_required unexpected_param type_error:simple value_error:string"
    for error_type in [*error_types.split(), "wrong_count", "decoder_failed", "irrelevance_error"]:
        assert error_type in result.stdout


def test_demo_samples_are_what_they_say() -> None:
    from scoring.checking import check
    from scoring.demo import WEATHER

    for sample in samples():
        verdict = check(sample.output, [WEATHER], list(sample.answer), sample.category)
        assert verdict.valid == ("valid" in sample.label or "(fine)" in sample.label), sample.label


# ---- render -------------------------------------------------------------------------------------------

CALLS = [
    Call("get_weather", {"city": "Paris", "days": 3, "ratio": 0.5, "metric": True, "note": None}),
    Call("math.hypot", {"xs": [1, -2.5, 1e300], "opts": {"a": {"b": [True, "x"]}}}),
    Call("noop", {}),
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_render_round_trips(fmt: str) -> None:
    assert decode(render(CALLS, fmt)) == CALLS
    assert decode(render(CALLS[:1], fmt)) == CALLS[:1]
    assert decode(render([], fmt)) == []


def test_render_formats_look_like_their_models() -> None:
    assert (
        render(CALLS[:1], "pythonic")
        == "[get_weather(city='Paris', days=3, ratio=0.5, metric=True, note=None)]"
    )
    assert str(render(CALLS[:1], "hermes")).startswith("<tool_call>\n{")
    assert str(render(CALLS[:1], "codeact")).startswith("```python\nget_weather(")
    busybeaver = json.loads(str(render(CALLS[:1], "busybeaver")))
    assert set(busybeaver) == {"tool", "args", "confidence", "state_update"}
    assert json.loads(str(render(CALLS[:1], "json")))[0]["arguments"]["city"] == "Paris"


def test_render_escapes_what_would_break_the_wrapper() -> None:
    tricky = [Call("f", {"s": "``` </tool_call> <tool_call> ' \" \\ \n é"})]
    for fmt in FORMATS:
        assert decode(render(tricky, fmt)) == tricky, fmt


def test_render_refuses_what_a_format_cannot_express() -> None:
    for calls in ([Call("get-weather", {})], [Call("f", {"from": 1})], [Call("f", {"x": float("nan")})]):
        with pytest.raises(ValueError):
            render(calls, "pythonic")
    with pytest.raises(ValueError, match="unknown format"):
        render(CALLS, "xml")
    assert decode(render([Call("get-weather", {"from": 1})], "json")) == [Call("get-weather", {"from": 1})]


def test_render_infinities() -> None:
    calls = [Call("f", {"a": float("inf"), "b": float("-inf")})]
    for fmt in FORMATS:
        assert decode(render(calls, fmt)) == calls, fmt


def test_to_openai_tool_calls() -> None:
    tool_calls: list[dict[str, Any]] = to_openai_tool_calls(CALLS[:2])
    assert tool_calls[0] == {
        "id": "call_0",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps(CALLS[0].arguments)},
    }
    assert decode(tool_calls) == CALLS[:2]
