"""bench/guided_calls.py: its flags fail with one line, and its table reads per category."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def bench(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("guided_calls")


def test_configs_parse_format_and_mode(bench: ModuleType) -> None:
    configs = bench.parse_configs("json:grounded, hermes ,pythonic:on")
    assert [(c.format, c.guided, c.label) for c in configs] == [
        ("json", "grounded", "json+grounded"),
        ("hermes", "off", "hermes"),
        ("pythonic", "on", "pythonic+on"),
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--configs", "xml:on"], "'xml:on' is not format:guided"),
        (["--configs", "json:always"], "'json:always' is not format:guided"),
        (["--configs", ","], "at least one format:guided"),
        (["--seeds", "1,x"], "not a comma-separated list of integers"),
        (["--n", "3"], "--n must be at least 6"),
    ],
)
def test_bad_flags_give_one_line_and_exit_2(
    bench: ModuleType, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_tasks_are_balanced_and_reproducible(bench: ModuleType) -> None:
    first = bench.draw_tasks(3, 12)
    again = bench.draw_tasks(3, 12)
    assert [t.id for t in first] == [t.id for t in again]
    assert [t.tools for t in first] == [t.tools for t in again]
    counts = {c: sum(1 for t in first if str(t.category) == c) for c in bench.CATEGORIES}
    assert counts == {c: 2 for c in bench.CATEGORIES}


def test_table_gives_valid_over_asked_and_mean_per_category(bench: ModuleType) -> None:
    outcome = bench.Outcome(bench.Config("json", "grounded"), 1, {c: bench.Tally() for c in bench.CATEGORIES})
    outcome.by_category["simple"].add(True, 1.0)
    outcome.by_category["simple"].add(False, 0.5)
    outcome.by_category["irrelevance"].add(True, 1.0)
    outcome.seconds = 12.3
    table = bench.render([outcome]).splitlines()
    assert table[0].split()[:3] == ["config", "seed", "simple"]
    row = table[2]
    assert row.startswith("json+grounded")
    assert "1/2 (0.75)" in row and "1/1 (1.00)" in row
    assert "0.833" in row and "12s" in row
    assert row.split()[-2] == "0"  # failed requests
