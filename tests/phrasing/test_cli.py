"""--phrasing.* on the command-line tools: tasks sample (side by side), tasks export, evaluate."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from subnet import evaluate
from subnet.config import PhrasingSettings
from subnet.tasks_cli import main

STANDIN = Path(__file__).resolve().parents[2] / "bench" / "phrasing_standin.py"


@pytest.fixture(scope="module")
def standin_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The stand-in phrasing model in a process of its own (the tools run their own event loop)."""
    url_file = tmp_path_factory.mktemp("standin") / "url"
    process = subprocess.Popen([sys.executable, str(STANDIN), f"--url-file={url_file}"])
    try:
        deadline = time.monotonic() + 30
        while not url_file.exists():
            assert process.poll() is None and time.monotonic() < deadline, "the stand-in did not start"
            time.sleep(0.05)
        yield url_file.read_text().strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_sample_shows_template_and_phrased_text(standin_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "sample",
                "--tasks.count",
                "4",
                "--seed",
                "s",
                "--phrasing.engine",
                "openai",
                "--phrasing.url",
                standin_url,
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    templates = [line for line in captured.out.splitlines() if line.startswith("  template: ")]
    phrased = [line for line in captured.out.splitlines() if line.startswith("  phrased:  ")]
    assert len(templates) == len(phrased) == 4
    assert all(t[12:] != p[12:] for t, p in zip(templates, phrased, strict=True))
    assert "phrasing (openai): 4 of 4 tasks phrased" in captured.err


def test_export_writes_phrased_requests(standin_url: str, tmp_path: Path) -> None:
    out = tmp_path / "train.jsonl"
    argv = [
        "export",
        "--tasks.count",
        "30",
        "--out",
        str(out),
        "--phrasing.engine",
        "openai",
        "--phrasing.url",
        standin_url,
    ]
    assert main(argv) == 0
    plain = tmp_path / "plain.jsonl"
    assert main(["export", "--tasks.count", "30", "--out", str(plain)]) == 0
    phrased_rows = [json.loads(line) for line in out.read_text().splitlines()]
    plain_rows = [json.loads(line) for line in plain.read_text().splitlines()]
    assert len(phrased_rows) == 30
    assert {row["messages"][-2]["content"] for row in phrased_rows}.isdisjoint(
        row["messages"][-2]["content"] for row in plain_rows
    )


def test_evaluate_phrases_its_tasks(standin_url: str) -> None:
    settings = evaluate.EvaluateSettings(
        endpoint="http://127.0.0.1:1/v1/chat/completions",
        n=20,
        seed=3,
        phrasing=PhrasingSettings(engine="openai", url=standin_url),
    )
    phrased = evaluate.build_tasks(settings)
    plain = evaluate.build_tasks(evaluate.EvaluateSettings(endpoint=settings.endpoint, n=20, seed=3))
    assert len(phrased) == 20
    assert {task.request for task in phrased}.isdisjoint(task.request for task in plain)
    assert "--phrasing.engine openai" in evaluate.rerun_command(settings)


def test_phrasing_mistakes_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sample", "--tasks.count", "1", "--phrasing.engine", "openai"]) == 2
    assert (
        capsys.readouterr().err.strip()
        == "tasks: error: --phrasing.engine openai needs --phrasing.url (the endpoint's http:// URL)"
    )
    dead = [
        "sample",
        "--tasks.count",
        "1",
        "--phrasing.engine",
        "openai",
        "--phrasing.url",
        "http://127.0.0.1:9/v1",
    ]
    assert main([*dead, "--phrasing.timeout", "1"]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("tasks: error: no request could be phrased")
    with pytest.raises(SystemExit):
        evaluate.parse_settings(
            ["--endpoint", "http://x:1/v1", "--phrasing.engine", "openai", "--phrasing.timeout", "0"]
        )
