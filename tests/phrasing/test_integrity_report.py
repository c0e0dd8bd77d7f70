"""bench/integrity.py's report: one command prints the attackers' tables (template and phrased
text, every category and the round score), the phrasing rejections per reason, the oracle check
in every output format, and the task generation rate."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from types import ModuleType

import pytest

import tasks
from scoring.rendering import FORMATS, NATIVE_FORMATS

MINERS = (
    "never calls",
    "random tool",
    "lexical tools, junk values",
    "memoriser (a past round)",
    "template inverter (no model)",
    "lexical miner (no model)",
    "oracle (understood the request)",
)


@pytest.fixture(scope="module")
def integrity(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("integrity")


def test_the_round_score_weighs_categories_by_the_default_mix(integrity: ModuleType) -> None:
    figures = integrity.Figures()
    for category in tasks.CATEGORIES:  # equal counts, right only on the no-call categories
        for _ in range(10):
            right = category in ("irrelevance", "missing_param")
            figures.add(category, right, 1.0 if right else 0.0)
    mix = tasks.categories.default_mix()
    expected = (mix["irrelevance"] + mix["missing_param"]) / sum(mix.values())
    assert figures.mix_score() == pytest.approx(expected)
    assert figures.round_score == pytest.approx(2 / len(tasks.CATEGORIES))  # the plain mean


def test_the_partial_floor_keeps_only_what_invalid_answers_and_no_call_tasks_earn(
    integrity: ModuleType,
) -> None:
    figures = integrity.Figures()
    for category in tasks.CATEGORIES:
        no_call = category in ("irrelevance", "missing_param")
        figures.add(category, True, 1.0)  # one valid answer per category ...
        for _ in range(3):  # ... and three invalid ones, partial credit 0.2 where calls are expected
            figures.add(category, False, 0.0 if no_call else 0.2)
    mix = tasks.categories.default_mix()
    no_call_share = (mix["irrelevance"] + mix["missing_param"]) / sum(mix.values())
    assert figures.partial_floor() == pytest.approx(0.25 * no_call_share + 0.2 * (1 - no_call_share))
    assert figures.partial_floor() < figures.mix_score()


def test_the_table_has_every_category_and_a_row_per_miner(integrity: ModuleType) -> None:
    figures = {name: integrity.Figures() for name in ("a", "b")}
    figures["a"].add("simple", True, 1.0)
    figures["b"].add("simple", False, 0.0)
    lines = integrity.round_table(figures, 0.0)
    assert lines[0] == "| miner | " + " | ".join(tasks.CATEGORIES) + " | round score | weight share |"
    assert len(lines) == 4 and lines[2].startswith("| a | 100.0% |") and lines[3].startswith("| b | 0.0% |")
    assert all(line.count("|") == len(tasks.CATEGORIES) + 4 for line in lines)


def test_the_oracle_check_covers_every_format(integrity: ModuleType) -> None:
    valid, total, formats, failing = integrity.oracle_in_every_format(tasks.generate(b"oracle", 40))
    assert (valid, total, formats, failing) == (40, 40, len(FORMATS) + len(NATIVE_FORMATS), {})


def test_the_generation_rate_is_a_rate(integrity: ModuleType) -> None:
    assert integrity.generation_rate("1", 50) > 0


def test_the_generation_rate_is_the_best_warm_run_in_cpu_time(
    integrity: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One cold wall-clock run read 270 tasks/s beside two test suites and 2,400 alone: the first
    # run builds the library's caches, and other work on the machine takes wall time.
    made: list[tuple[str, int]] = []
    clock = iter([0.0, 2.0, 10.0, 11.0, 20.0, 24.0])  # three runs of 2, 1 and 4 CPU seconds
    monkeypatch.setattr(integrity, "generate", lambda seed, count: made.append((seed, count)))
    monkeypatch.setattr(integrity, "CPU_CLOCK", lambda: next(clock))
    assert integrity.generation_rate("s", 1000) == 1000.0
    assert made == [("s-warm", 200), ("s-rate-0", 1000), ("s-rate-1", 1000), ("s-rate-2", 1000)]


def test_one_command_prints_the_whole_report(
    integrity: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "integrity.py",
        "--per-category",
        "4",
        "--oracle-tasks",
        "12",
        "--rate-tasks",
        "20",
        "--no-external",
    ]
    monkeypatch.setattr(sys, "argv", argv)
    integrity.main()
    out = capsys.readouterr().out
    assert "Task generation: " in out and " tasks/s " in out
    template, phrased = out.split("Phrased by the stand-in model")
    for table in (template, phrased):
        assert (
            "| miner | simple | multiple | parallel | parallel_multiple | irrelevance | missing_param |"
            in table
        )
        for miner in MINERS:
            assert f"| {miner} |" in table
    # Rejections per reason, if any (the summary says "rejected: none" when a small round has none).
    assert "% of rewordings)" in phrased or "rejected: none" in phrased
    formats = len(FORMATS) + len(NATIVE_FORMATS)
    assert re.search(
        rf"Oracle check: \d+/\d+ phrased tasks \(\d+\.\d%\) have a gold answer valid in all {formats}", out
    )
    assert "External pool" not in out
