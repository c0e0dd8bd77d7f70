"""How a check reads a task: its functions by name (BFCL schemas and OpenAI tools, the first of a
name counting), its possible answer as (name, params) pairs, and a malformed task refused with a
ValueError that says what is wrong."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.calls import Shape, expected_calls, function_index


def test_common_inputs() -> None:
    weather = {"name": "get_weather", "parameters": {"type": "dict", "properties": {}}}
    wrapped = {"type": "function", "function": {"name": "book"}}
    functions = [weather, wrapped, {"name": "get_weather", "description": "a second one"}]
    assert function_index(functions) == {"get_weather": weather, "book": wrapped["function"]}
    assert function_index(weather) == {"get_weather": weather}  # one schema on its own
    answer = [{"get_weather": {"city": ["Paris", "paris"], "days": ["", 3]}}, {"book": {}}]
    assert expected_calls(answer) == [
        ("get_weather", {"city": ["Paris", "paris"], "days": ["", 3]}),
        ("book", {}),
    ]
    assert expected_calls(None) == [] and expected_calls(()) == []


@pytest.mark.parametrize(
    ("functions", "message"),
    [
        ("get_weather", "must be a list"),
        ([{"description": "no name"}], "needs a string 'name'"),
        ([{"name": 1}], "needs a string 'name'"),
        ([{"type": "function", "function": "x"}], "needs a string 'name'"),
        (["x"], "needs a string 'name'"),
    ],
)
def test_malformed_functions_are_refused(functions: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        function_index(functions)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("f", "must be a list"),
        ([{"f": {}, "g": {}}], "one-key"),
        (["f"], "one-key"),
        ([{"f": ["a"]}], "must map names to lists"),
        ([{"f": {"a": "Paris"}}], "must map names to lists"),
    ],
)
def test_malformed_answers_are_refused(answer: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        expected_calls(answer)


@pytest.mark.parametrize(
    ("function", "properties", "required"),
    [
        ({"name": "f", "parameters": {"properties": {"a": {}}, "required": ["a"]}}, {"a": {}}, ["a"]),
        ({"name": "f"}, {}, ()),
        ({"name": "f", "parameters": {"properties": ["a"], "required": "a"}}, {}, ()),
        ({"name": "f", "parameters": "x"}, {}, ()),
    ],
)  # fmt: skip
def test_a_shape_reads_properties_and_required_or_nothing(
    function: dict[str, Any], properties: Any, required: Any
) -> None:
    shape = Shape(function)
    assert (shape.properties, shape.required) == (properties, required)
