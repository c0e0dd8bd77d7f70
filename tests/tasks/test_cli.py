"""python -m tasks: sample and export, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.checking import check
from subnet.tasks_cli import main
from tasks import Task


def test_sample_shows_tasks_readably(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sample", "--seed", "s", "--tasks.count", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n  request:  ") == 3 and out.count("\n  system:   Today is ") == 3
    assert "tool:" in out and "expected:" in out


def test_sample_json_with_category(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sample", "--seed", "s", "--tasks.count", "4", "--category", "parallel", "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    tasks = [Task.from_dict(json.loads(line)) for line in lines]
    assert len(tasks) == 4 and {t.category for t in tasks} == {"parallel"}


def test_export_writes_chat_examples_whose_calls_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "train.jsonl"
    assert main(["export", "--tasks.count", "120", "--out", str(out), "--seed", "e"]) == 0
    assert "exporting [" in capsys.readouterr().err
    examples = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(examples) == 120 and not (tmp_path / "train.jsonl.partial").exists()
    for example in examples:
        reply = example["messages"][-1]
        assert reply["role"] == "assistant" and example["messages"][-2]["role"] == "user"
        # A builtin task opens with its system line (today), which relative dates are worked out from.
        assert example["messages"][0]["role"] in ("system", "user")
        if reply.get("tool_calls"):
            assert all(isinstance(call["function"]["arguments"], str) for call in reply["tool_calls"])
        else:
            assert example["category"] in ("irrelevance", "missing_param") and reply["content"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sample", "--tasks.sources", "builtin=0.5,bfcl=oops"], "not a number"),
        (
            ["sample", "--tasks.sources", "xlam=1", "--tasks.xlam", "/nonexistent/x.json"],
            "x.json: file not found",
        ),
        (["sample", "--tasks.count", "-3"], "must not be negative"),
        (["export", "--tasks.count", "2", "--out", "/nonexistent-dir/out.jsonl"], "does not exist"),
    ],
)
def test_user_mistakes_are_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_module_entry_point_reports_bad_files_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "q", "tools": []}\n')
    result = subprocess.run(
        [sys.executable, "-m", "tasks", "sample", "--tasks.sources", "xlam=1", "--tasks.xlam", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip().endswith("bad.jsonl:1: 'tools' must be a non-empty list")
    assert "Traceback" not in result.stderr


def test_exported_answer_passes_on_its_task(tmp_path: Path) -> None:
    from subnet.tasks_cli import training_example
    from tasks import generate

    for task in generate("export-check", 80):
        example = training_example(task)
        reply = example["messages"][-1]
        output = reply if reply.get("tool_calls") else reply["content"]
        assert check(output, task.tools, task.expected, task.scoring_category).valid
