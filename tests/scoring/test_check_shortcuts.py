"""Shortcuts in checking against the code they replace: same verdicts, same messages.

* ``standardize`` normalises ASCII text with one translation table: it must give what the three
  steps (drop characters, lower-case, ``'`` -> ``"``) give, on any text.
* A parallel answer without a match lists each output's error for the unmatched expected call;
  calls of another name are listed as wrong names without a pair check. The verdicts, messages
  included, must be those of the checker that checked every pair.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scoring.category_rules as category_rules
from scoring import Call, check
from scoring.calls import TaskCheck
from scoring.category_rules import CategoryRule
from scoring.value_check import _IGNORED_IN_STRINGS, CheckError, standardize

SETTINGS = settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def _three_steps(text: str) -> str:
    return text.translate(_IGNORED_IN_STRINGS).lower().replace("'", '"')


@SETTINGS
@given(st.text() | st.text(alphabet=st.characters(max_codepoint=127)))
def test_standardize_is_the_three_steps(text: str) -> None:
    assert standardize(text) == _three_steps(text)


@pytest.mark.parametrize("text", ["San Francisco, CA", "it's", "A.B-C_D*E^F/G", "", "ÉCOLE 'x'", "İ", "ǅ"])
def test_standardize_on_common_and_unicode_text(text: str) -> None:
    assert standardize(text) == _three_steps(text)


def _reference_check_parallel(calls: list[Call], task: TaskCheck) -> CheckError | None:
    """_check_parallel as it was: every pair of the unmatched expected call checked for the message."""
    size = len(task.expected)
    if len(calls) != size:
        return CheckError(
            "parallel_function_checker_no_order:wrong_count", "expected %s calls, got %s", size, len(calls)
        )
    for index in range(size):
        if task.error(calls, index, index) is not None:
            break
    else:
        return None
    owner = [-1] * size

    def augment(expected: int, seen: list[bool]) -> bool:
        name = task.expected[expected][0]
        for output in (expected, *range(expected), *range(expected + 1, size)):
            if (
                not seen[output]
                and calls[output].name == name
                and task.error(calls, output, expected) is None
            ):
                seen[output] = True
                if owner[output] < 0 or augment(owner[output], seen):
                    owner[output] = expected
                    return True
        return False

    for expected in range(size):
        if not augment(expected, [False] * size):
            details = "; ".join(
                f"output {output}: {found.error_type}"
                for output in range(size)
                if (found := task.error(calls, output, expected)) is not None
            )
            return CheckError(
                "parallel_function_checker_no_order:cannot_find_match",
                "no output call matches expected call %s (%s): %s",
                expected,
                task.expected[expected][0],
                details,
            )
    return None


@contextmanager
def _reference_parallel_checker() -> Iterator[None]:
    """The parallel categories judged by the reference checker (by hand: hypothesis runs many
    examples per test, so no monkeypatch fixture)."""
    saved = dict(category_rules.CATEGORY_RULES)
    reference = CategoryRule(_reference_check_parallel, True)
    for name, category in saved.items():
        if category.checker is category_rules._check_parallel:
            category_rules.CATEGORY_RULES[name] = reference
    try:
        yield
    finally:
        category_rules.CATEGORY_RULES.clear()
        category_rules.CATEGORY_RULES.update(saved)


def _verdict(output: Any, functions: Any, answer: Any, category: str) -> tuple[Any, ...]:
    try:
        verdict = check(output, functions, answer, category)
    except ValueError as error:
        return ("ValueError", str(error))
    return (verdict.valid, verdict.error_type, verdict.score, verdict.components, verdict.message)


def _agree(output: Any, functions: Any, answer: Any, category: str) -> None:
    ours = _verdict(output, functions, answer, category)
    with _reference_parallel_checker():
        reference = _verdict(output, functions, answer, category)
    assert ours == reference


def test_parallel_verdicts_on_the_bench_corpus_are_the_reference_s(bench: ModuleType) -> None:
    for output, task in bench.corpus(2000, seed=5):
        if task.answer:
            _agree(output, task.functions, task.answer, "parallel")


_FUNCTIONS = [
    {
        "name": name,
        "parameters": {
            "type": "dict",
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
            "required": ["a"],
        },
    }
    for name in ("f", "g")
]
_names = st.sampled_from(["f", "g", "h"])
_output_calls = st.builds(
    lambda name, arguments: Call(name, arguments),
    _names,
    st.fixed_dictionaries({"a": st.integers(0, 2)}, optional={"b": st.sampled_from(["x", "y"])}),
)
_expected_calls = st.builds(
    lambda name, a, b: {name: {"a": a, "b": b}},
    _names,
    st.lists(st.integers(0, 2), min_size=1, max_size=2, unique=True),
    st.sampled_from([[""], ["x"], ["", "y"]]),
)


@SETTINGS
@given(st.lists(_output_calls, min_size=1, max_size=4), st.lists(_expected_calls, min_size=1, max_size=4))
def test_parallel_verdicts_are_the_reference_s(calls: list[Call], answer: list[dict[str, Any]]) -> None:
    """Names the functions lack (h) included: both raise the same ValueError or give the same verdict."""
    _agree(calls, _FUNCTIONS, answer, "parallel")
