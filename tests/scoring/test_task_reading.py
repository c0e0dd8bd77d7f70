"""The lean loops that read a task's functions and possible answer against the general ones.

``function_index`` and ``expected_calls`` read plain lists of well-formed BFCL entries in one lean
loop and hand anything else to the general loop; on any input both must give the same result or
raise the same ValueError.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.calls import (
    Shape,
    _general_expected_calls,
    _general_function_index,
    _properties,
    expected_calls,
    function_index,
)

SETTINGS = settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)

_odd: st.SearchStrategy[Any] = st.sampled_from([None, 1, "x", [], (), {}, ["a"], ("a",)])
_names = st.sampled_from(["f", "g", "a.b", ""]) | _odd
_schema = st.fixed_dictionaries(
    {"name": _names}, optional={"description": st.just("d"), "parameters": st.just({})}
)
_wrapped = st.builds(lambda schema: {"type": "function", "function": schema}, _schema)
_function = _schema | _wrapped | st.builds(lambda name: {"name": name, "function": "x"}, _names) | _odd
_functions = st.lists(_function, max_size=4) | st.tuples(_function) | _function

_values = st.lists(st.sampled_from([1, "a", "", None]), max_size=3) | _odd
_params = st.dictionaries(st.sampled_from(["a", "b"]), _values, max_size=2) | _odd
_entry = (
    st.dictionaries(_names.filter(lambda name: isinstance(name, str)), _params, min_size=1, max_size=2) | _odd
)
_answer = st.lists(_entry, max_size=3) | st.tuples(_entry) | _odd


def _outcome(read: Any, value: Any) -> Any:
    try:
        return ("ok", read(value))
    except ValueError as error:
        return ("error", str(error))


@SETTINGS
@given(_functions)
def test_function_index_reads_as_the_general_loop(functions: Any) -> None:
    assert _outcome(function_index, functions) == _outcome(_general_function_index, functions)


@SETTINGS
@given(_answer)
def test_expected_calls_read_as_the_general_loop(answer: Any) -> None:
    assert _outcome(expected_calls, answer) == _outcome(_general_expected_calls, answer)


def test_common_inputs_read_the_same() -> None:
    weather = {"name": "get_weather", "parameters": {"type": "dict", "properties": {}}}
    wrapped = {"type": "function", "function": {"name": "book"}}
    functions = [weather, wrapped, {"name": "get_weather", "description": "a second one"}]
    assert (
        function_index(functions)
        == _general_function_index(functions)
        == {
            "get_weather": weather,
            "book": wrapped["function"],
        }
    )
    answer = [{"get_weather": {"city": ["Paris", "paris"], "days": ["", 3]}}, {"book": {}}]
    assert (
        expected_calls(answer)
        == _general_expected_calls(answer)
        == [
            ("get_weather", {"city": ["Paris", "paris"], "days": ["", 3]}),
            ("book", {}),
        ]
    )


_parameter_parts: st.SearchStrategy[Any] = st.sampled_from(
    [None, 1, "x", [], ["a"], {}, {"a": {"type": "string"}}]
)
_parameters = st.fixed_dictionaries(
    {}, optional={"type": st.just("dict"), "properties": _parameter_parts, "required": _parameter_parts}
)
_schemas = st.fixed_dictionaries(
    {"name": st.just("f")}, optional={"parameters": _parameters | _parameter_parts}
)


@SETTINGS
@given(_schemas)
def test_shape_reads_a_schema_as_properties_does(function: dict[str, Any]) -> None:
    shape = Shape(function)
    assert (shape.properties, shape.required) == _properties(function)
