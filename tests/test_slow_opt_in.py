"""The tests marked slow are skipped by default, with the reason shown, and run when asked for."""

from __future__ import annotations

import pytest

from tests.support.slow import SLOW_REASON

pytest_plugins = ["pytester"]

SAMPLE = """
import pytest

@pytest.mark.slow
def test_long():
    pass

def test_quick():
    pass
"""


@pytest.fixture
def sample(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nmarkers =\n    slow: long\n")
    pytester.makepyfile(test_sample=SAMPLE)
    return pytester


def test_a_slow_test_is_skipped_with_its_reason_by_default(sample: pytest.Pytester) -> None:
    result = sample.runpytest("-p", "tests.support.slow", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines([f"*{SLOW_REASON}*"])


@pytest.mark.parametrize(("asked", "outcomes"), [
    (["--slow"], {"passed": 2}),
    (["-m", "slow"], {"passed": 1, "deselected": 1}),
    (["-m", "not slow"], {"passed": 1, "deselected": 1}),
])  # fmt: skip
def test_asking_for_slow_tests_runs_them(
    sample: pytest.Pytester, asked: list[str], outcomes: dict[str, int]
) -> None:
    sample.runpytest("-p", "tests.support.slow", *asked).assert_outcomes(**outcomes)
