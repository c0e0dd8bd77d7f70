"""One output call against one function schema and its acceptable arguments (BFCL's simple
function checker), and the task inputs a check reads: functions by name, expected calls, and the
pair checks computed so far."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scoring.model import Call
from scoring.schema import function_of
from scoring.value_check import CheckError, TypeInfo, check_value, param_types


def _properties(function: Mapping[str, Any]) -> tuple[Mapping[str, Any], Sequence[str]]:
    parameters = function.get("parameters")
    if not isinstance(parameters, dict):
        return {}, ()
    properties = parameters.get("properties")
    required = parameters.get("required")
    return (properties if isinstance(properties, dict) else {}), (
        required if isinstance(required, list) else ()
    )


class Shape:
    """One function schema as a check reads it: its properties, its required parameters and the
    :data:`TypeInfo` of each property, worked out on first use (one per check and function: a
    parallel check and its partial credit read the same schema many times)."""

    __slots__ = ("function", "properties", "required", "types")

    def __init__(self, function: Mapping[str, Any]) -> None:
        self.function = function
        self.types: dict[str, TypeInfo] = {}
        self.properties, self.required = _properties(function)

    def types_of(self, param: str) -> TypeInfo:
        """The type information of ``param``, which must be one of the properties."""
        types = self.types.get(param)
        if types is None:
            types = self.types[param] = param_types(self.properties[param])
        return types


def check_call(
    call: Call,
    function: Mapping[str, Any],
    expected: Mapping[str, Sequence[Any]],
    shape: Shape | None = None,
) -> CheckError | None:
    """BFCL's simple function checker: None when ``call`` is an acceptable answer. ``shape`` is
    ``Shape(function)`` when the caller has it already."""
    name = function["name"]
    if call.name != name:
        return CheckError(
            "simple_function_checker:wrong_func_name", "expected function %r, got %r", name, call.name
        )
    if shape is None:
        shape = Shape(function)
    properties = shape.properties
    arguments = call.arguments
    for param in shape.required:
        if param not in arguments:
            return CheckError(
                "simple_function_checker:missing_required", "missing required parameter %r", param
            )
    for param, value in arguments.items():
        if param not in properties or param not in expected:
            return CheckError("simple_function_checker:unexpected_param", "unexpected parameter %r", param)
        error = check_value(param, value, shape.types_of(param), expected[param])
        if error is not None:
            return error
    for param, acceptable in expected.items():
        if param not in arguments and "" not in acceptable:
            return CheckError(
                "simple_function_checker:missing_optional",
                "parameter %r not provided and not optional",
                param,
            )
    return None


# ---- task inputs ------------------------------------------------------------------------------


def function_index(functions: Any) -> dict[str, Mapping[str, Any]]:
    """Name -> schema, for BFCL schemas and OpenAI ``{"type": "function", "function": {...}}`` ones."""
    if isinstance(functions, dict):
        functions = [functions]
    if not isinstance(functions, list | tuple):
        raise ValueError("functions must be a list of function schemas")
    index: dict[str, Mapping[str, Any]] = {}
    for function in functions:
        if type(function) is not dict or "function" in function:  # not a plain BFCL schema
            function = function_of(function)
            if not isinstance(function, dict):
                raise ValueError("each function schema needs a string 'name'")
        name = function.get("name")
        if not isinstance(name, str):
            raise ValueError("each function schema needs a string 'name'")
        if name not in index:  # the first schema of a name counts
            index[name] = function
    return index


def expected_calls(possible_answer: Any) -> list[tuple[str, Mapping[str, Sequence[Any]]]]:
    """BFCL possible answer ``[{name: {param: [acceptable, ...]}}, ...]`` -> [(name, params)]."""
    if possible_answer is None:
        return []
    if not isinstance(possible_answer, list | tuple):
        raise ValueError("possible_answer must be a list of {function_name: {param: [values]}}")
    result: list[tuple[str, Mapping[str, Sequence[Any]]]] = []
    for entry in possible_answer:
        if not (isinstance(entry, dict) and len(entry) == 1):
            raise ValueError(
                "each possible answer must be a one-key {function_name: {param: [values]}} object"
            )
        ((name, params),) = entry.items()
        if not isinstance(params, dict):
            raise ValueError(f"the parameters of possible answer {name!r} must map names to lists of values")
        for values in params.values():
            if type(values) is not list:
                raise ValueError(
                    f"the parameters of possible answer {name!r} must map names to lists of values"
                )
        result.append((name, params))
    return result


class TaskCheck:
    """One check's task inputs, and the pair checks computed so far (a plain slotted class: one is
    built per check, so its construction cost counts)."""

    __slots__ = ("checked", "expected", "functions", "shapes")

    def __init__(
        self, functions: dict[str, Mapping[str, Any]], expected: list[tuple[str, Mapping[str, Sequence[Any]]]]
    ) -> None:
        self.functions = functions
        self.expected = expected
        self.checked: dict[int, CheckError | None] = {}  # output * len(expected) + expected -> error
        self.shapes: dict[str, Shape] = {}  # function name -> its schema's shape

    def schema(self, name: str) -> Mapping[str, Any]:
        function = self.functions.get(name)
        if function is None:
            raise ValueError(f"the expected function {name!r} is not among the functions")
        return function

    def error(self, calls: list[Call], output: int, expected: int) -> CheckError | None:
        """check_call of output call ``output`` against expected call ``expected``, computed once
        per check (the category checker and the partial credit share the results)."""
        key = output * len(self.expected) + expected
        checked = self.checked
        if key in checked:
            return checked[key]
        name, params = self.expected[expected]
        shape = self.shapes.get(name)
        if shape is None:
            shape = self.shapes[name] = Shape(self.schema(name))
        error = checked[key] = check_call(calls[output], shape.function, params, shape)
        return error

    def shape(self, name: str) -> Shape | None:
        """The shape of the schema of function ``name``; None when there is no such function."""
        shape = self.shapes.get(name)
        if shape is None:
            function = self.functions.get(name)
            if function is None:
                return None
            shape = self.shapes[name] = Shape(function)
        return shape
