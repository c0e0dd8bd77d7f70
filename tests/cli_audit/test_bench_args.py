"""Benchmarks refuse numbers they cannot run with (zero, negative, nan) in one argparse line, exit 2.

Before, `--repeat 0`, `--runs 0`, `--repeats 0`, `--uids 0`, `--miners 0` or `--threads -1` ran into
a traceback half way, and `--writers 0`, `--seconds nan` or `--backends mysql` printed figures of nothing.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

CASES = [
    ("decode_check", ["--repeat", "0"], "argument --repeat: expected 1 or more, got 0"),
    ("decode_check", ["--runs", "0"], "argument --runs: expected 1 or more, got 0"),
    ("generation", ["--repeats", "0"], "argument --repeats: expected 1 or more, got 0"),
    ("generation", ["--cpu", "-1"], "argument --cpu: expected 0 or more, got -1"),
    ("generation", ["--warm", "-1"], "argument --warm: expected 0 or more, got -1"),
    ("generation_cost", ["--tasks", "0"], "argument --tasks: expected 1 or more, got 0"),
    ("devchain", ["--uids", "0"], "argument --uids: expected 1 or more, got 0"),
    ("devchain", ["--writers", "0"], "argument --writers: expected 1 or more, got 0"),
    ("devchain", ["--seconds", "nan"], "argument --seconds: expected a finite number, got 'nan'"),
    ("validator", ["--miners", "0"], "argument --miners: expected 1 or more, got 0"),
    ("validator", ["--backends", "mysql"], "argument --backends: expected sqlite and/or postgres"),
    ("miner", ["--threads", "-1"], "argument --threads: expected 0 or more, got -1"),
]


@pytest.mark.parametrize(("name", "argv", "complaint"), CASES)
def test_bad_numbers_stop_at_the_flags(
    load_bench: Callable[[str], ModuleType],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    argv: list[str],
    complaint: str,
) -> None:
    bench = load_bench(name)
    monkeypatch.setattr(sys, "argv", [f"{name}.py", *argv])  # some mains read sys.argv themselves
    with pytest.raises(SystemExit) as stopped:
        if name == "miner":
            bench.parse_args(argv)
        else:
            bench.main()
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and complaint in err.strip().splitlines()[-1]


def test_the_miner_bench_reports_a_bad_model_path_in_one_line(
    load_bench: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    bench = load_bench("miner")
    assert bench.main(["--model.path", f"{tmp_path}/missing", "--requests", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("miner bench: error: model path ")


BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"
# The stand-in phrasing server keeps a plain parser: benchmarks load it as a sibling module in
# their own process, and it imports nothing of the project (argparse's refusal is two lines there).
OWN_PARSERS = {"phrasing_standin.py"}
RUNNABLE = sorted(
    path.stem
    for path in BENCH_DIR.glob("*.py")
    if path.name not in OWN_PARSERS and "def main(" in path.read_text(encoding="utf-8")
)


def test_every_benchmark_builds_the_projects_one_line_parser() -> None:
    plain = [
        path.name
        for path in sorted(BENCH_DIR.glob("*.py"))
        if path.name not in OWN_PARSERS and "argparse.ArgumentParser(" in path.read_text(encoding="utf-8")
    ]
    assert plain == []
    assert {"miner", "transport", "decode_check", "validator"} <= set(RUNNABLE)


@pytest.mark.parametrize("name", RUNNABLE)
def test_an_unknown_flag_is_one_line_and_exit_2(
    load_bench: Callable[[str], ModuleType],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
) -> None:
    bench = load_bench(name)
    argv = ["--no-such-flag"]
    monkeypatch.setattr(sys, "argv", [f"{name}.py", *argv])  # some mains read sys.argv themselves
    with pytest.raises(SystemExit) as stopped:
        bench.main(argv) if "argv" in inspect.signature(bench.main).parameters else bench.main()
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unrecognized arguments: --no-such-flag" in err, err
