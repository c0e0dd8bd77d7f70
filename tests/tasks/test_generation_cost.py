"""bench/generation_cost.py: instructions per task as the difference of two counted runs, a
failed run and a wrong tree in one line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_cost_is_the_difference_of_the_two_runs_over_the_tasks(
    load_bench: Callable[[str], ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = load_bench("generation_cost")
    runs: list[list[str]] = []

    def fake_run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        runs.append(command)
        assert kwargs["env"]["PYTHONHASHSEED"] == "0"
        start = command.index("-c") + 2  # after the program: tree, warm, count[, "1"]
        warm, count = int(command[start + 1]), int(command[start + 2])
        collected = 1_000_000 + 7 * warm + 2_500 * count
        return subprocess.CompletedProcess(command, 0, "", f"==1== Collected : {collected}\n")

    monkeypatch.setattr(bench.subprocess, "run", fake_run)
    assert bench.per_task(ROOT, 100, 40) == 2_500
    assert [command[:2] for command in runs] == [["valgrind", "--tool=callgrind"]] * 2
    assert [command[-3:] for command in runs] == [[str(ROOT), "100", "40"], [str(ROOT), "100", "0"]]
    runs.clear()
    bench.per_task(ROOT, 100, 40, variants=True)  # each task with its variant: the flag goes last
    assert [command[-4:] for command in runs] == [[str(ROOT), "100", "40", "1"], [str(ROOT), "100", "0", "1"]]


def test_a_run_that_counts_nothing_is_one_error(
    load_bench: Callable[[str], ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = load_bench("generation_cost")

    def failing(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        stderr = "Traceback ...\nModuleNotFoundError: No module named 'tasks'\n"
        return subprocess.CompletedProcess(command, 1, "", stderr)

    monkeypatch.setattr(bench.subprocess, "run", failing)
    with pytest.raises(bench.CostError, match="the run under valgrind failed \\(ModuleNotFoundError"):
        bench.per_task(ROOT, 1, 1)


def test_a_tree_that_is_no_checkout_stops_at_the_flags(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generation_cost.py"), "--tree", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "is not a checkout of this project" in done.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_counted_run_gives_a_cost_per_task(load_bench: Callable[[str], ModuleType]) -> None:
    bench = load_bench("generation_cost")
    cost = bench.per_task(ROOT, 5, 20)
    # Millions of instructions per task (about 2.2 M at generator version 12), not noise.
    assert 0.5e6 < cost < 20e6
