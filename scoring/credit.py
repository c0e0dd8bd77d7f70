"""Partial credit of an invalid verdict on a category that expects calls: the five components
(format, schema, tool, args, calls) and the score they give, always below a valid verdict's; and the
partial credit of an invalid episode (``episode_partial_credit``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scoring.calls import Shape, TaskCheck
from scoring.model import Call
from scoring.schema import FLOAT_TYPES
from scoring.value_check import check_value

# Weights of the components in the partial credit of an invalid verdict, and its ceiling: only
# whole calls earn (the others are reported, for the miner's table).
COMPONENT_WEIGHTS: dict[str, float] = {"format": 0.0, "schema": 0.0, "tool": 0.0, "args": 0.0, "calls": 1.0}
PARTIAL_CREDIT_CEILING = 0.5
#: The same for an invalid episode (scoring.episodes): turns passed, valid calls, economy.
EPISODE_WEIGHTS: dict[str, float] = {"turns": 0.6, "calls": 0.3, "economy": 0.1}


def _fits_schema(call: Call, task: TaskCheck) -> bool:
    """The call names a known function, has its required parameters, no unknown ones, and every
    value has the schema's type (ints pass for floats at the top level; elements one level deep)."""
    shape = task.shape(call.name)
    if shape is None:
        return False
    arguments = call.arguments
    for param in shape.required:
        if param not in arguments:
            return False
    properties = shape.properties
    for param, value in arguments.items():
        if param not in properties:
            return False
        type_name, py_type, nested = shape.types_of(param)
        if py_type is None:
            continue
        if type(value) is not py_type and not (type_name in FLOAT_TYPES and type(value) is int):
            return False
        if nested is not None and any(type(element) is not nested for element in value):  # type: ignore[attr-defined]
            return False
    return True


def _argument_credit(call: Call, shape: Shape, expected: Mapping[str, Sequence[Any]]) -> float:
    """Share of the call's values that are right: each parameter the call gives counts (right when
    its value is acceptable), and so does each the answer must state but the call leaves out
    (wrong); an optional parameter left out counts neither way. A call with nothing to judge
    (the expected call states nothing and the call gives nothing) is fully right."""
    arguments = call.arguments
    properties = shape.properties
    judged = 0
    right = 0
    for name, acceptable in expected.items():
        if name not in arguments:
            judged += "" not in acceptable
            continue
        judged += 1
        if name in properties:
            right += check_value(name, arguments[name], shape.types_of(name), acceptable) is None
    for name in arguments:  # given but not expected: wrong
        if name not in expected:
            judged += 1
    if not judged:
        return 1.0
    return right / judged


def partial_components(calls: list[Call], task: TaskCheck) -> dict[str, float]:
    """Partial scores of an invalid verdict on a category that expects calls.

    Output calls are paired with expected calls greedily: first the exact matches (each expected
    call, in order, takes the first free output call of its name that the checker accepts), then
    among the rest the best pair first (same name, larger argument credit). With
    n = max(#output calls, #expected calls): schema = #output calls that fit their own function's
    schema (an exact match does) / n; tool = #pairs with the right name / n; args = sum of the
    pairs' argument credit / n; calls = #exact matches / n.
    """
    expected = task.expected
    size = max(len(calls), len(expected), 1)
    free_outputs = list(range(len(calls)))
    left_expected = []
    for j, (name, _) in enumerate(expected):
        for i in free_outputs:
            if calls[i].name == name and task.error(calls, i, j) is None:
                free_outputs.remove(i)
                break
        else:
            left_expected.append(j)
    exact_matches = len(calls) - len(free_outputs)
    credit = float(exact_matches)  # 1.0 per exact match
    names_right = exact_matches
    if left_expected and free_outputs:
        # (-credit, output, expected): sorting puts the best pair first, ties in index order
        pairs: list[tuple[float, int, int]] = []
        for j in left_expected:
            name, params = expected[j]
            task.schema(name)  # raises when the expected function is not among the functions
            shape = task.shape(name)
            assert shape is not None
            pairs.extend(
                (-_argument_credit(calls[i], shape, params), i, j)
                for i in free_outputs
                if calls[i].name == name
            )
        if len(pairs) == 1:  # the common case, one call wrong: its pair is the only one
            credit += -pairs[0][0]
            names_right += 1
        else:
            pairs.sort()
            paired_outputs: set[int] = set()
            paired_expected: set[int] = set()
            for negative_credit, i, j in pairs:
                if i not in paired_outputs and j not in paired_expected:
                    paired_outputs.add(i)
                    paired_expected.add(j)
                    credit += -negative_credit
            names_right += len(paired_outputs)
    else:
        for j in left_expected:  # no pair to score, but a missing expected function is still an error
            task.schema(expected[j][0])
    fitting = exact_matches
    for i in free_outputs:
        fitting += _fits_schema(calls[i], task)
    return {
        "format": 1.0,
        "schema": fitting / size,
        "tool": names_right / size,
        "args": credit / size,
        "calls": exact_matches / size,
    }


def partial_credit(components: Mapping[str, float]) -> float:
    """Score of an invalid verdict: 0.5 x calls, < 0.5. Only whole calls earn: an output call
    the checker accepts for an expected call (a call with one wrong value does the wrong thing);
    the output's form, its fit to the schema, its function names and its share of right values
    are reported but earn nothing by themselves."""
    return round(PARTIAL_CREDIT_CEILING * COMPONENT_WEIGHTS["calls"] * components["calls"], 6)


def episode_partial_credit(components: Mapping[str, float]) -> float:
    """Score of an invalid episode: 0.5 x (0.6 turns + 0.3 calls + 0.1 economy), < 0.5. The
    caller gives 0 instead where nothing was done (``scoring.episodes``): with no call made, the
    calls and economy components are 0 themselves, so abstaining never earns them."""
    weighted = sum(weight * components[name] for name, weight in EPISODE_WEIGHTS.items())
    return PARTIAL_CREDIT_CEILING * weighted
