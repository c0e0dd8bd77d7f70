"""BFCL-compatible checking of decoded calls against a task's functions and possible answers.

The rules are BFCL v4's AST checker (see SCORING.md), rewritten here; the deliberate differences
are listed in :mod:`scoring`'s docstring. The partial credit of invalid verdicts is computed here
too (:func:`_components`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scoring.decoding import decode
from scoring.model import DEFAULT_LIMITS, Call, DecodeError, Limits, Verdict, make_verdict

# Schema type name -> the Python type a value must have; None means any value is accepted.
_SCHEMA_TYPES: dict[str, type | None] = {
    "string": str,
    "integer": int,
    "float": float,
    "number": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "object": dict,
    "any": None,
}
_FLOAT_TYPES = frozenset({"float", "number"})
_LIST_TYPES = frozenset({"array", "tuple"})
# The scalar entries of _SCHEMA_TYPES: schema type name -> str, int, float or bool. The inline fast
# paths below read one of these with a single lookup.
_SCALAR_SCHEMA_TYPES: dict[str, type] = {
    name: py_type for name, py_type in _SCHEMA_TYPES.items() if py_type in (str, int, float, bool)
}

_IGNORED_IN_STRINGS = str.maketrans("", "", " ,./-_*^")
# The whole normalisation for ASCII text in one table: the dropped characters, ' -> " and A-Z -> a-z
# (all that lower() changes in ASCII).
_STANDARD_ASCII = str.maketrans(
    {**dict.fromkeys(" ,./-_*^"), "'": '"', **{chr(code): chr(code + 32) for code in range(65, 91)}}
)

# Weights of the components in the partial credit of an invalid verdict, and its ceiling.
COMPONENT_WEIGHTS: dict[str, float] = {"format": 0.1, "schema": 0.2, "tool": 0.3, "args": 0.4}
PARTIAL_CREDIT_CEILING = 0.5


def standardize(text: str) -> str:
    """BFCL's string normalisation: drop `` ,./-_*^``, lower-case, ``'`` -> ``"``."""
    if text.isascii():  # one pass instead of three
        return text.translate(_STANDARD_ASCII)
    return text.translate(_IGNORED_IN_STRINGS).lower().replace("'", '"')


def _standard_answers(acceptable: Sequence[Any]) -> list[Any]:
    return [standardize(item) if type(item) is str else item for item in acceptable]


class _Error:
    """A failed check: BFCL's error type, and a message formatted only when someone reads it
    (partial credit runs many checks whose messages nobody reads)."""

    __slots__ = ("_args", "_template", "error_type")

    def __init__(self, error_type: str, template: str, *args: Any) -> None:
        self.error_type = error_type
        self._template = template
        self._args = args

    @property
    def message(self) -> str:
        return self._template % self._args if self._args else self._template


# (schema type name, Python type or None for any, element type for arrays or None)
_TypeInfo = tuple[str, type | None, type | None]


def _param_types(spec: Any) -> _TypeInfo:
    """The :data:`_TypeInfo` of one parameter's schema."""
    try:
        type_name = spec.get("type")
        py_type = _SCHEMA_TYPES[type_name]
    except (AttributeError, KeyError, TypeError):  # not a dict, unknown or unhashable type: any
        return "any", None, None
    if type_name not in _LIST_TYPES:
        return type_name, py_type, None
    items = spec.get("items")
    item_type = items.get("type") if type(items) is dict else None
    return type_name, py_type, _SCHEMA_TYPES.get(item_type) if type(item_type) is str else None


def _answer_type(acceptable: Sequence[Any]) -> type | None:
    """The type of the first acceptable value that is not the "may be omitted" marker."""
    for item in acceptable:
        if item != "":
            return type(item)
    return None


def _nested_types_ok(value: list[Any], nested: type, acceptable: Sequence[Any]) -> bool:
    """BFCL's one-level element check: some acceptable list (or any non-list entry, "" included)
    must admit every element, by the schema's element type or that list's own element type."""
    for item in acceptable:
        if type(item) is not list:
            return True
        item_type = _answer_type(item)
        if all(type(element) is nested or type(element) is item_type for element in value):
            return True
    return False


def _type_error(param: str, value: Any, type_name: str, nested: bool) -> _Error:
    kind = "type_error:nested" if nested else "type_error:simple"
    return _Error(
        kind, "parameter %r: expected type %s, got %s (%r)", param, type_name, type(value).__name__, value
    )


def _check_string(param: str, value: str, acceptable: Sequence[Any]) -> _Error | None:
    standard = standardize(value)
    for item in acceptable:  # stops at the first match: usually the first item
        if type(item) is str and standardize(item) == standard:
            return None
    return _Error("value_error:string", "parameter %r: %r is not one of %r", param, value, acceptable)


def _check_list(param: str, value: list[Any], acceptable: Sequence[Any]) -> _Error | None:
    standard = [standardize(item) if type(item) is str else item for item in value]
    for item in acceptable:
        # BFCL turns the "may be omitted" marker "" into an empty list here, so [] matches it.
        if isinstance(item, list | str) and standard == _standard_answers(
            item if isinstance(item, list) else []
        ):
            return None
    return _Error(
        "value_error:list/tuple", "parameter %r: %r is not one of %r", param, value, list(acceptable)
    )


def _dict_matches(param: str, value: Mapping[Any, Any], candidate: Mapping[str, Any]) -> _Error | None:
    for key, item in value.items():
        if key not in candidate:
            return _Error("value_error:dict_key", "parameter %r: unexpected dict key %r", param, key)
        options = candidate[key]
        if type(options) is list and item in options:
            continue  # an acceptable value as it is (equal values standardise equally)
        standard = standardize(item) if type(item) is str else item
        if standard not in _standard_answers(options):
            return _Error(
                "value_error:dict_value",
                "parameter %r: dict value %r=%r is not acceptable",
                param,
                key,
                item,
            )
    for key, options in candidate.items():
        if key not in value and "" not in options:
            return _Error("value_error:dict_key", "parameter %r: missing dict key %r", param, key)
    return None


def _check_dict(param: str, value: Mapping[Any, Any], acceptable: Sequence[Any]) -> _Error | None:
    error = _Error("dict_checker:unclear", "parameter %r: no acceptable dict to compare with", param)
    for candidate in acceptable:
        if isinstance(candidate, dict):
            found = _dict_matches(param, value, candidate)
            if found is None:
                return None
            error = found
    return error


def _check_list_of_dicts(param: str, value: list[Any], acceptable: Sequence[Any]) -> _Error | None:
    error = _Error("list_dict_checker:unclear", "parameter %r: no acceptable list to compare with", param)
    for candidate in acceptable:
        if not isinstance(candidate, list | str):
            continue
        candidate_items = candidate if isinstance(candidate, list) else []
        if len(value) != len(candidate_items):
            error = _Error(
                "value_error:list_dict_count", "parameter %r: wrong number of dicts in the list", param
            )
            continue
        for element, expected in zip(value, candidate_items, strict=True):
            if not (isinstance(element, dict) and isinstance(expected, dict)):
                found: _Error | None = _Error(
                    "value_error:list_dict_count", "parameter %r: not a dict", param
                )
            else:
                found = _dict_matches(param, element, expected)
            if found is not None:
                error = found
                break
        else:
            return None
    return error


def _compare_by_value_type(param: str, value: Any, acceptable: Sequence[Any]) -> _Error | None:
    """Schema type "any": compare the way BFCL compares a value of the value's own type."""
    if type(value) is str:
        return _check_string(param, value, acceptable)
    if type(value) is list:
        return _check_list(param, value, acceptable)
    if type(value) is dict:
        return _check_dict(param, value, acceptable)
    return _check_exact(param, value, acceptable)


def _check_exact(param: str, value: Any, acceptable: Sequence[Any]) -> _Error | None:
    if value in acceptable:
        return None
    return _Error("value_error:others", "parameter %r: %r is not one of %r", param, value, acceptable)


def check_value(param: str, value: Any, types: _TypeInfo, acceptable: Sequence[Any]) -> _Error | None:
    """Type then value of one argument, as BFCL's simple checker does; ``types`` is the
    :func:`_param_types` of the parameter's schema."""
    type_name, py_type, nested = types
    if py_type is None:
        return _compare_by_value_type(param, value, acceptable)
    value_type = type(value)
    if value_type is int and type_name in _FLOAT_TYPES:
        value = float(value)  # an int is a float at the top level only
        value_type = float
    if value_type is py_type:
        if nested is not None and not _nested_types_ok(value, nested, acceptable):
            return _type_error(
                param, value, f"{type_name} of {nested.__name__}", _answer_type(acceptable) is list
            )
        if py_type is not dict and nested is not dict and value in acceptable:
            # The common case, an acceptable value as it is: whichever comparer the rules below pick
            # (exact, or after standardising strings) accepts it. Dicts compare key by key: not here.
            return None
        # A possible answer of another type than the schema's (BFCL's "variable" case) is compared
        # exactly.
        answer_type = _answer_type(acceptable)
        is_variable = answer_type is not None and answer_type is not py_type
    elif value_type is _answer_type(acceptable):  # of the answer's type, where that is not the schema's
        is_variable = True
    else:
        return _type_error(param, value, type_name, False)
    if not is_variable:
        comparer = _check_list_of_dicts if nested is dict else _COMPARERS.get(py_type)
        if comparer is not None:
            return comparer(param, value, acceptable)
    return _check_exact(param, value, acceptable)


# How a value of the schema's type is compared with the acceptable ones, when not exactly (lists of
# dicts have their own comparer).
_COMPARERS: dict[type, Callable[[str, Any, Sequence[Any]], _Error | None]] = {
    str: _check_string,
    list: _check_list,
    dict: _check_dict,
}


def _properties(function: Mapping[str, Any]) -> tuple[Mapping[str, Any], Sequence[str]]:
    parameters = function.get("parameters")
    if not isinstance(parameters, dict):
        return {}, ()
    properties = parameters.get("properties")
    required = parameters.get("required")
    return (properties if isinstance(properties, dict) else {}), (
        required if isinstance(required, list) else ()
    )


class _Shape:
    """One function schema as a check reads it: its properties, its required parameters and the
    :data:`_TypeInfo` of each property, worked out on first use (one per check and function: a
    parallel check and its partial credit read the same schema many times)."""

    __slots__ = ("function", "properties", "required", "types")

    def __init__(self, function: Mapping[str, Any]) -> None:
        self.function = function
        self.types: dict[str, _TypeInfo] = {}
        parameters = function.get("parameters")
        if type(parameters) is dict:  # the common case inline: what _properties gives for it
            properties = parameters.get("properties")
            required = parameters.get("required")
            if type(properties) is dict and type(required) is list:
                self.properties: Mapping[str, Any] = properties
                self.required: Sequence[str] = required
                return
        self.properties, self.required = _properties(function)

    def types_of(self, param: str) -> _TypeInfo:
        """The type information of ``param``, which must be one of the properties."""
        types = self.types.get(param)
        if types is None:
            types = self.types[param] = _param_types(self.properties[param])
        return types


def check_call(
    call: Call,
    function: Mapping[str, Any],
    expected: Mapping[str, Sequence[Any]],
    shape: _Shape | None = None,
) -> _Error | None:
    """BFCL's simple function checker: None when ``call`` is an acceptable answer. ``shape`` is
    ``_Shape(function)`` when the caller has it already."""
    name = function["name"]
    if call.name != name:
        return _Error(
            "simple_function_checker:wrong_func_name", "expected function %r, got %r", name, call.name
        )
    if shape is None:
        shape = _Shape(function)
    properties = shape.properties
    arguments = call.arguments
    for param in shape.required:
        if param not in arguments:
            return _Error("simple_function_checker:missing_required", "missing required parameter %r", param)
    types = shape.types
    for param, value in arguments.items():
        if param not in properties or param not in expected:
            return _Error("simple_function_checker:unexpected_param", "unexpected parameter %r", param)
        acceptable = expected[param]
        spec = properties[param]
        if type(spec) is dict:  # check_value's fast path for scalars, inline: no call, no type tuple
            type_name = spec.get("type")
            if (
                type(type_name) is str
                and type(value) is _SCALAR_SCHEMA_TYPES.get(type_name)
                and value in acceptable
            ):
                continue
        error = check_value(param, value, types.get(param) or shape.types_of(param), acceptable)
        if error is not None:
            return error
    for param, acceptable in expected.items():
        if param not in arguments and "" not in acceptable:
            return _Error(
                "simple_function_checker:missing_optional",
                "parameter %r not provided and not optional",
                param,
            )
    return None


# ---- task inputs ------------------------------------------------------------------------------


def function_index(functions: Any) -> dict[str, Mapping[str, Any]]:
    """Name -> schema, for BFCL schemas and OpenAI ``{"type": "function", "function": {...}}`` ones."""
    if type(functions) is list:  # the common case, plain BFCL schemas, in one lean loop
        index: dict[str, Mapping[str, Any]] = {}
        for function in functions:
            if type(function) is not dict or "function" in function:
                break  # a wrapper or something odd: the general loop below decides
            name = function.get("name")
            if type(name) is not str:
                break
            if name not in index:  # the first schema of a name counts
                index[name] = function
        else:
            return index
    return _general_function_index(functions)


def _general_function_index(functions: Any) -> dict[str, Mapping[str, Any]]:
    if isinstance(functions, dict):
        functions = [functions]
    if not isinstance(functions, list | tuple):
        raise ValueError("functions must be a list of function schemas")
    index: dict[str, Mapping[str, Any]] = {}
    for function in functions:
        if isinstance(function, dict) and isinstance(function.get("function"), dict):
            function = function["function"]
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
    if type(possible_answer) is list:  # the common case, well formed, in one lean loop
        result: list[tuple[str, Mapping[str, Sequence[Any]]]] = []
        for entry in possible_answer:
            if type(entry) is not dict or len(entry) != 1:
                break  # the general loop below says what is wrong
            ((name, params),) = entry.items()
            if type(params) is not dict:
                break
            for values in params.values():
                if type(values) is not list:
                    break
            else:
                result.append((name, params))
                continue
            break
        else:
            return result
    return _general_expected_calls(possible_answer)


def _general_expected_calls(possible_answer: Any) -> list[tuple[str, Mapping[str, Sequence[Any]]]]:
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


class _Task:
    """One check's task inputs, and the pair checks computed so far (a plain slotted class: one is
    built per check, so its construction cost counts)."""

    __slots__ = ("checked", "expected", "functions", "shapes")

    def __init__(
        self, functions: dict[str, Mapping[str, Any]], expected: list[tuple[str, Mapping[str, Sequence[Any]]]]
    ) -> None:
        self.functions = functions
        self.expected = expected
        self.checked: dict[int, _Error | None] = {}  # output * len(expected) + expected -> error
        self.shapes: dict[str, _Shape] = {}  # function name -> its schema's shape

    def schema(self, name: str) -> Mapping[str, Any]:
        function = self.functions.get(name)
        if function is None:
            raise ValueError(f"the expected function {name!r} is not among the functions")
        return function

    def error(self, calls: list[Call], output: int, expected: int) -> _Error | None:
        """check_call of output call ``output`` against expected call ``expected``, computed once
        per check (the category checker and the partial credit share the results)."""
        key = output * len(self.expected) + expected
        checked = self.checked
        if key in checked:
            return checked[key]
        name, params = self.expected[expected]
        shape = self.shapes.get(name)
        if shape is None:
            shape = self.shapes[name] = _Shape(self.schema(name))
        error = checked[key] = check_call(calls[output], shape.function, params, shape)
        return error

    def shape(self, name: str) -> _Shape | None:
        """The shape of the schema of function ``name``; None when there is no such function."""
        shape = self.shapes.get(name)
        if shape is None:
            function = self.functions.get(name)
            if function is None:
                return None
            shape = self.shapes[name] = _Shape(function)
        return shape


# ---- categories -------------------------------------------------------------------------------


def _is_empty(calls: list[Call]) -> bool:
    return all(not call.name for call in calls)


def _single_checker(count_error: str) -> Callable[[list[Call], _Task], _Error | None]:
    """simple: exactly one call; multiple: as many calls as expected (one), checked against the
    one expected function."""

    one_call = count_error.startswith("simple")

    def check_single(calls: list[Call], task: _Task) -> _Error | None:
        wanted = 1 if one_call else len(task.expected)
        if len(calls) != wanted:
            return _Error(count_error, "expected %s call(s), got %s", wanted, len(calls))
        return task.error(calls, 0, 0)

    return check_single


_WRONG_NAME = "simple_function_checker:wrong_func_name"


def _check_parallel(calls: list[Call], task: _Task) -> _Error | None:
    """Same number of calls; each output call matched to a distinct expected call. Unlike BFCL's
    greedy first fit, the matching is optimal: Kuhn's augmenting paths find a perfect matching
    whenever one exists. Pairs are checked lazily, each expected call trying the output at its own
    position first, so an answer in the expected order costs one check per call."""
    size = len(task.expected)
    if len(calls) != size:
        return _Error(
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
            name = task.expected[expected][0]
            task.schema(name)  # raises, as a pair check would, where the expected function is missing
            parts = []
            for output in range(size):
                if calls[output].name != name:  # fails on its name: no need to check the pair
                    parts.append(f"output {output}: {_WRONG_NAME}")
                elif (found := task.error(calls, output, expected)) is not None:
                    parts.append(f"output {output}: {found.error_type}")
            details = "; ".join(parts)
            return _Error(
                "parallel_function_checker_no_order:cannot_find_match",
                "no output call matches expected call %s (%s): %s",
                expected,
                task.expected[expected][0],
                details,
            )
    return None


def _check_irrelevance(calls: list[Call], task: _Task) -> _Error | None:
    if _is_empty(calls):
        return None
    return _Error("irrelevance_error:decoder_success", "made %s call(s) where none was wanted", len(calls))


def _check_relevance(calls: list[Call], task: _Task) -> _Error | None:
    if not _is_empty(calls):
        return None
    return _Error("relevance_error:decoder_failed", "made no call where one was wanted")


@dataclass(frozen=True)
class Category:
    """How one category is judged: its checker, whether it expects calls (and so gives partial
    credit), and the error type of output that does not decode (None: that is a valid answer)."""

    checker: Callable[[list[Call], _Task], _Error | None]
    expects_calls: bool
    decode_failure: str | None = "ast_decoder:decoder_failed"


_SIMPLE = Category(_single_checker("simple_function_checker:wrong_count"), True)
_MULTIPLE = Category(_single_checker("multiple_function_checker:wrong_count"), True)
_PARALLEL = Category(_check_parallel, True)
_IRRELEVANCE = Category(_check_irrelevance, False, decode_failure=None)
_RELEVANCE = Category(_check_relevance, False, decode_failure="relevance_error:decoder_failed")

# The scorer's dispatch table: BFCL's category names and the generator's. Every scoring category
# the task registry names (tasks.categories: Category.scoring_category) must be a key here
# (tests/tasks/test_category_registry.py); scoring itself never imports tasks.
CATEGORIES: dict[str, Category] = {
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


# ---- partial credit -----------------------------------------------------------------------------


def _fits_schema(call: Call, task: _Task) -> bool:
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
        spec = properties[param]
        if type(spec) is dict:  # scalars, inline (no element types): as below, without the type tuple
            scalar_name = spec.get("type")
            scalar = _SCALAR_SCHEMA_TYPES.get(scalar_name) if type(scalar_name) is str else None
            if scalar is not None:
                if type(value) is scalar or (scalar is float and type(value) is int):
                    continue
                return False
        type_name, py_type, nested = shape.types_of(param)
        if py_type is None:
            continue
        if type(value) is not py_type and not (type_name in _FLOAT_TYPES and type(value) is int):
            return False
        if nested is not None and any(type(element) is not nested for element in value):  # type: ignore[attr-defined]
            return False
    return True


def _argument_credit(call: Call, shape: _Shape, expected: Mapping[str, Sequence[Any]]) -> float:
    """Share of the parameters (expected or given) that are right: given with an acceptable value,
    or left out where that is allowed. Parameters given but not expected count as wrong."""
    arguments = call.arguments
    properties = shape.properties
    names = len(expected)  # the parameters expected or given: the expected ones ...
    right = 0
    for name, acceptable in expected.items():
        if name not in arguments:
            right += "" in acceptable
        elif name in properties:
            value = arguments[name]
            spec = properties[name]
            if type(spec) is dict:  # check_value's fast path for scalars, inline, as in check_call
                type_name = spec.get("type")
                if (
                    type(type_name) is str
                    and type(value) is _SCALAR_SCHEMA_TYPES.get(type_name)
                    and value in acceptable
                ):
                    right += 1
                    continue
            right += check_value(name, value, shape.types_of(name), acceptable) is None
    for name in arguments:  # ... and those given but not expected
        if name not in expected:
            names += 1
    if not names:
        return 1.0
    return right / names


def _components(calls: list[Call], task: _Task) -> dict[str, float]:
    """Partial scores of an invalid verdict on a category that expects calls.

    Output calls are paired with expected calls greedily: first the exact matches (each expected
    call, in order, takes the first free output call of its name that the checker accepts), then
    among the rest the best pair first (same name, larger argument credit). With
    n = max(#output calls, #expected calls): schema = #output calls that fit their own function's
    schema (an exact match does) / n; tool = #pairs with the right name / n; args = sum of the
    pairs' argument credit / n.
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
    return {"format": 1.0, "schema": fitting / size, "tool": names_right / size, "args": credit / size}


def partial_credit(components: Mapping[str, float]) -> float:
    """Score of an invalid verdict: 0.5 x (0.1 format + 0.2 schema + 0.3 tool + 0.4 args), < 0.5."""
    weights = COMPONENT_WEIGHTS  # summed in the order of COMPONENTS
    weighted = (
        weights["format"] * components["format"]
        + weights["schema"] * components["schema"]
        + weights["tool"] * components["tool"]
        + weights["args"] * components["args"]
    )
    return round(PARTIAL_CREDIT_CEILING * weighted, 6)


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
    list (``[]`` or None for irrelevance); ``category`` a name in :data:`CATEGORIES`. Raises
    ``ValueError`` when the task itself (functions, answer, category) is malformed.
    """
    kind = CATEGORIES.get(category)
    if kind is None:
        raise ValueError(f"unknown category {category!r}; known: {', '.join(CATEGORIES)}")
    task = _Task(function_index(functions), expected_calls(possible_answer))
    if kind.expects_calls and not task.expected:
        raise ValueError(f"category {category!r} needs a non-empty possible answer")
    try:
        calls = decode(output, limits, functions)
    except DecodeError as error:
        if kind.decode_failure is None:
            return make_verdict(
                True, None, 1.0, {"format": 1.0, "schema": 1.0, "tool": 1.0, "args": 1.0}, "", ()
            )
        return make_verdict(
            False,
            kind.decode_failure,
            0.0,
            {"format": 0.0, "schema": 0.0, "tool": 0.0, "args": 0.0},
            error.reason,
            (),
        )
    problem = kind.checker(calls, task)
    if problem is None:
        return make_verdict(
            True, None, 1.0, {"format": 1.0, "schema": 1.0, "tool": 1.0, "args": 1.0}, "", tuple(calls)
        )
    if kind.expects_calls:
        components = _components(calls, task)
        score = partial_credit(components)
    else:
        components = {"format": 1.0, "schema": 1.0, "tool": 0.0, "args": 0.0}
        score = 0.0
    return make_verdict(False, problem.error_type, score, components, problem.message, tuple(calls))
