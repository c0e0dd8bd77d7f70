"""BFCL-compatible checking of a model output against a task's functions and possible answers.

The rules are BFCL v4's AST checker (docs/scoring.md), rewritten here; the deliberate differences
are listed in :mod:`scoring`'s docstring. :func:`check` decodes the output, applies the category's
rule and, for an invalid answer, the partial credit. The parts, each in its own module:

* :mod:`scoring.value_check`: one argument's value against its type and the acceptable values;
* :mod:`scoring.calls`: one call against one function, and a check's task inputs;
* :mod:`scoring.category_rules`: how each category is judged (:data:`CATEGORY_RULES`);
* :mod:`scoring.credit`: the partial credit of an invalid verdict;
* :mod:`scoring.schema`: the schema type table shared by them.
"""

from __future__ import annotations

from typing import Any

from scoring.calls import TaskCheck, check_call, expected_calls, function_index
from scoring.category_rules import CATEGORY_RULES, CategoryRule
from scoring.credit import COMPONENT_WEIGHTS, PARTIAL_CREDIT_CEILING, partial_components, partial_credit
from scoring.decoding import decode
from scoring.model import COMPONENTS, DEFAULT_LIMITS, DecodeError, Limits, Verdict
from scoring.value_check import check_value, standardize

__all__ = [
    "CATEGORY_RULES",
    "COMPONENT_WEIGHTS",
    "PARTIAL_CREDIT_CEILING",
    "CategoryRule",
    "check",
    "check_call",
    "check_value",
    "expected_calls",
    "function_index",
    "partial_credit",
    "standardize",
]

#: The components of a valid verdict (and of a decode failure that the category counts as right).
_ALL_RIGHT: dict[str, float] = dict.fromkeys(COMPONENTS, 1.0)


def check(
    output: Any,
    functions: Any,
    possible_answer: Any,
    category: str,
    limits: Limits = DEFAULT_LIMITS,
) -> Verdict:
    """Judge one model output on one task, with BFCL's verdict and error type.

    ``output`` is anything :func:`scoring.decode` takes, a pre-decoded ``list[Call]`` included;
    ``functions`` are BFCL or OpenAI function schemas; ``possible_answer`` is BFCL's ground-truth
    list (``[]`` or None for irrelevance); ``category`` a name in :data:`CATEGORY_RULES`. Raises
    ``ValueError`` when the task itself (functions, answer, category) is malformed.
    """
    kind = CATEGORY_RULES.get(category)
    if kind is None:
        raise ValueError(f"unknown category {category!r}; known: {', '.join(CATEGORY_RULES)}")
    task = TaskCheck(function_index(functions), expected_calls(possible_answer))
    if kind.expects_calls and not task.expected:
        raise ValueError(f"category {category!r} needs a non-empty possible answer")
    try:
        calls = decode(output, limits, functions)
    except DecodeError as error:
        if kind.decode_failure is None:
            return Verdict(True, None, 1.0, dict(_ALL_RIGHT), "", ())
        return Verdict(
            False,
            kind.decode_failure,
            0.0,
            dict.fromkeys(COMPONENTS, 0.0),
            error.reason,
            (),
        )
    problem = kind.checker(calls, task)
    if problem is None:
        return Verdict(True, None, 1.0, dict(_ALL_RIGHT), "", tuple(calls))
    if kind.expects_calls:
        components = partial_components(calls, task)
        score = partial_credit(components)
    else:
        components = dict.fromkeys(COMPONENTS, 0.0) | {"format": 1.0, "schema": 1.0}
        score = 0.0
    return Verdict(False, problem.error_type, score, components, problem.message, tuple(calls))
