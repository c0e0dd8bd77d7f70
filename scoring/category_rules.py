"""How each scoring category is judged: its rule (a checker over the decoded calls, whether it
expects calls, the error type of output that does not decode) in :data:`CATEGORY_RULES`, keyed by
BFCL's category names and the generator's scoring names.

These are not the task categories (``tasks.categories``, what the generator makes and the
dashboard shows); each of those names one of these rules as its ``scoring_category``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from scoring.calls import TaskCheck
from scoring.model import Call
from scoring.value_check import CheckError


def _is_empty(calls: list[Call]) -> bool:
    return all(not call.name for call in calls)


def _single_checker(count_error: str) -> Callable[[list[Call], TaskCheck], CheckError | None]:
    """simple: exactly one call; multiple: as many calls as expected (one), checked against the
    one expected function."""

    one_call = count_error.startswith("simple")

    def check_single(calls: list[Call], task: TaskCheck) -> CheckError | None:
        wanted = 1 if one_call else len(task.expected)
        if len(calls) != wanted:
            return CheckError(count_error, "expected %s call(s), got %s", wanted, len(calls))
        return task.error(calls, 0, 0)

    return check_single


def _check_parallel(calls: list[Call], task: TaskCheck) -> CheckError | None:
    """Same number of calls; each output call matched to a distinct expected call. Unlike BFCL's
    greedy first fit, the matching is optimal: Kuhn's augmenting paths find a perfect matching
    whenever one exists. Pairs are checked lazily, each expected call trying the output at its own
    position first, so an answer in the expected order costs one check per call."""
    size = len(task.expected)
    if len(calls) != size:
        return CheckError(
            "parallel_function_checker_no_order:wrong_count", "expected %s calls, got %s", size, len(calls)
        )
    for index in range(size):  # the common case first: the calls in the expected order
        if task.error(calls, index, index) is not None:
            break
    else:
        return None

    owner = [-1] * size  # output index -> expected index

    def augment(expected: int, seen: list[bool]) -> bool:
        name = task.expected[expected][0]
        for output in (expected, *range(expected), *range(expected + 1, size)):
            if (
                not seen[output]
                and calls[output].name == name  # another name is always an error: not worth a check
                and task.error(calls, output, expected) is None
            ):
                seen[output] = True
                if owner[output] < 0 or augment(owner[output], seen):
                    owner[output] = expected
                    return True
        return False

    for expected in range(size):
        if not augment(expected, [False] * size):
            # Kuhn: an expected call that finds no augmenting path stays unmatched in a maximum matching.
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


def _check_irrelevance(calls: list[Call], task: TaskCheck) -> CheckError | None:
    if _is_empty(calls):
        return None
    return CheckError(
        "irrelevance_error:decoder_success", "made %s call(s) where none was wanted", len(calls)
    )


def _check_relevance(calls: list[Call], task: TaskCheck) -> CheckError | None:
    if not _is_empty(calls):
        return None
    return CheckError("relevance_error:decoder_failed", "made no call where one was wanted")


@dataclass(frozen=True)
class CategoryRule:
    """How one category is judged: its checker, whether it expects calls (and so gives partial
    credit), and the error type of output that does not decode (None: that is a valid answer)."""

    checker: Callable[[list[Call], TaskCheck], CheckError | None]
    expects_calls: bool
    decode_failure: str | None = "ast_decoder:decoder_failed"


_SIMPLE = CategoryRule(_single_checker("simple_function_checker:wrong_count"), True)
_MULTIPLE = CategoryRule(_single_checker("multiple_function_checker:wrong_count"), True)
_PARALLEL = CategoryRule(_check_parallel, True)
_IRRELEVANCE = CategoryRule(_check_irrelevance, False, decode_failure=None)
_RELEVANCE = CategoryRule(_check_relevance, False, decode_failure="relevance_error:decoder_failed")

# The scorer's dispatch table: BFCL's category names and the generator's. Every scoring category
# the task registry names (``scoring_category`` of tasks.categories' entries) must be a key here
# (tests/scoring/test_check.py, tests/tasks/test_category_registry.py); scoring never imports tasks.
CATEGORY_RULES: dict[str, CategoryRule] = {
    "simple": _SIMPLE,
    "simple_python": _SIMPLE,
    "live_simple": _SIMPLE,
    "multiple": _MULTIPLE,
    "live_multiple": _MULTIPLE,
    "parallel": _PARALLEL,
    "live_parallel": _PARALLEL,
    "parallel_multiple": _PARALLEL,
    "live_parallel_multiple": _PARALLEL,
    "irrelevance": _IRRELEVANCE,
    "live_irrelevance": _IRRELEVANCE,
    "missing_param": _IRRELEVANCE,
    "relevance": _RELEVANCE,
    "live_relevance": _RELEVANCE,
}
