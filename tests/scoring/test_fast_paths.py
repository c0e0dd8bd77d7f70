"""The scorer's shortcuts against the slower readings they replace: same calls, same verdicts.

* Verdicts on the benchmark corpus, in its own and in other categories, are pinned by a digest
  recorded before any of the shortcuts below existed: a change of any verdict (valid, error type,
  score, components) fails here. Re-record it only for a deliberate change of the rules.
* Prose without brackets skips the parsers: the reference (JSON, then python syntax, then the
  embedded blocks) must fail on it too, or find the same calls.
* An argument value found as it is among the acceptable ones is accepted without the comparers:
  every comparer the rules can pick must accept such a value.
* A verdict is built without the frozen dataclass's ``__init__``: the same verdict.

(JSON is read with json.loads, strings are standardised in BFCL's three steps, a parallel answer's
failure message checks every pair, and check_call and the partial credit call check_value: plain
code, no second copy to keep equal.)
"""

from __future__ import annotations

import hashlib
import json
from types import ModuleType
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import Call, DecodeError
from scoring.checking import check
from scoring.decoding import _embedded_calls, decode, decode_text
from scoring.model import DEFAULT_LIMITS
from scoring.payloads import _payload_calls
from scoring.value_check import (
    _check_exact,
    _check_list,
    _check_string,
    _dict_matches,
    _standard_answers,
    check_value,
    standardize,
)

SETTINGS = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)

# sha256 of the JSON list of [valid, error_type, score, components] over the corpus below, recorded
# with the scorer of commit 2f591a1 (before these shortcuts).
CORPUS_VERDICTS = (11000, "0be264e9b8009ead0e9e904c42090143a437115585b1438f884bdbebfb943489")


def test_verdicts_on_the_bench_corpus_are_those_recorded_before_the_shortcuts(bench: ModuleType) -> None:
    rows = []
    for seed in (2, 5):
        for output, task in bench.corpus(2000, seed=seed):
            other = "parallel" if task.answer else "irrelevance"
            for category in dict.fromkeys((task.category, other, "relevance")):
                verdict = check(output, task.functions, task.answer, category)
                rows.append([verdict.valid, verdict.error_type, verdict.score, verdict.components])
    digest = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    assert (len(rows), digest) == CORPUS_VERDICTS


# ---- prose without brackets -------------------------------------------------------------------


def _reference_whole_text(text: str) -> list[Call] | None:
    """What decoding did before the prose shortcut: JSON / python syntax, then embedded blocks.
    None for a DecodeError."""
    try:
        try:
            return _payload_calls(text, DEFAULT_LIMITS)
        except DecodeError as error:
            return _embedded_calls(text, DEFAULT_LIMITS, error)
    except DecodeError:
        return None


def _decoded(text: str) -> list[Call] | None:
    try:
        return decode_text(text)
    except DecodeError:
        return None


prose_pieces = st.sampled_from(
    [
        "I'm sorry", "can't", " ", "\n", "None", "True", "x = 1", "a, b", "a.b", ":", ";", "=", "'", '"',
        "\\", "...", "-1", "1e5", "print", "lambda", "<tool_call>", "</tool_call>", "```", "```python\n",
        "<execute>", "</execute>", "f", "é", "\t", "pass", "import os", ",", "*", "@",
    ]
)  # fmt: skip
bracket_free_text = st.lists(prose_pieces | st.text(max_size=4), max_size=30).map(
    lambda parts: "".join(parts).translate(str.maketrans("", "", "([{#"))
)


@SETTINGS
@given(bracket_free_text)
def test_prose_without_brackets_decodes_as_the_parsers_would(text: str) -> None:
    body = text.strip()
    if not body or body[0] in "<`":  # those go straight to the embedded blocks, as before
        return
    assert _decoded(body) == _reference_whole_text(body)


@pytest.mark.parametrize(
    "text",
    ["I'm sorry, I can't do that without more details.", "None of the available functions can answer that.",
     "x = 1", "a, b", "print", "True", "hello <tool_call> world"],
)  # fmt: skip
def test_bracket_free_prose_is_not_a_call(text: str) -> None:
    assert _reference_whole_text(text) is None
    with pytest.raises(DecodeError):
        decode(text)
    functions = [{"name": "f", "parameters": {"type": "dict", "properties": {}}}]
    assert check(text, functions, [], "irrelevance").valid
    assert check(text, functions, [{"f": {}}], "simple").error_type == "ast_decoder:decoder_failed"


def test_text_with_brackets_or_a_comment_still_reaches_the_parsers() -> None:
    assert decode("# nothing to call") == []  # a comment is an empty statement list
    assert decode("f(a=1)") == [Call("f", {"a": 1})]
    assert decode("{'name': 'f', 'arguments': {}}") == [Call("f", {})]
    assert decode('Sure: <tool_call>{"name": "f", "arguments": {}}</tool_call>') == [Call("f", {})]


# ---- acceptable values as they are ------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-5, max_value=5)
    | st.floats(allow_nan=False, min_value=-5, max_value=5)
    | st.sampled_from(["", "Paris", "paris", "San Francisco, CA", "it's", 'it"s', "a-b_c", "A.B", " "])
    | st.text(max_size=6)
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=2)
    ),
    max_leaves=6,
)


@SETTINGS
@given(values, st.lists(values, max_size=3), st.integers(min_value=0, max_value=3))
def test_a_value_among_the_acceptable_ones_passes_every_comparer(
    value: Any, others: list[Any], position: int
) -> None:
    acceptable = [*others[:position], value, *others[position:]]
    if type(value) is str:
        assert _check_string("p", value, acceptable) is None
    if type(value) is list:
        assert _check_list("p", value, acceptable) is None
    assert _check_exact("p", value, acceptable) is None
    # the same for a dict's values, compared one key at a time
    assert value in acceptable
    standard = standardize(value) if type(value) is str else value
    assert standard in _standard_answers(acceptable)
    assert _dict_matches("p", {"k": value}, {"k": acceptable}) is None


SCHEMA_TYPES = ["string", "integer", "float", "number", "boolean", "array", "tuple", "dict", "any", "bogus"]


def _reference_check_value(param: str, value: Any, spec: Any, acceptable: list[Any]) -> Any:
    """check_value as it was before its fast path: the rules only (see scoring.checking)."""
    from scoring.schema import FLOAT_TYPES as _FLOAT_TYPES
    from scoring.value_check import (
        _COMPARERS,
        _check_list_of_dicts,
        _compare_by_value_type,
        _nested_types_ok,
        _type_error,
    )
    from scoring.value_check import (
        param_types as _param_types,
    )

    type_name, py_type, nested = _param_types(spec)
    if py_type is None:
        return _compare_by_value_type(param, value, acceptable)
    if type_name in _FLOAT_TYPES and type(value) is int:
        value = float(value)
    answer_type = next((type(item) for item in acceptable if item != ""), None)
    is_variable = answer_type is not None and answer_type is not py_type
    if type(value) is py_type:
        if nested is not None and not _nested_types_ok(cast(list[Any], value), nested, acceptable):
            return _type_error(param, value, f"{type_name} of {nested.__name__}", answer_type is list)
    elif answer_type is not None and type(value) is answer_type:
        is_variable = True
    else:
        return _type_error(param, value, type_name, False)
    if not is_variable:
        comparer = _check_list_of_dicts if nested is dict else _COMPARERS.get(py_type)
        if comparer is not None:
            return comparer(param, value, acceptable)
    return _check_exact(param, value, acceptable)


def _outcome(error: Any) -> tuple[str, str] | None:
    return None if error is None else (error.error_type, error.message)


@SETTINGS
@given(
    values,
    st.lists(values, max_size=3),
    st.sampled_from(SCHEMA_TYPES),
    st.sampled_from([None, *SCHEMA_TYPES]),
    st.booleans(),
)
def test_check_value_agrees_with_the_rules_without_its_fast_path(
    value: Any, others: list[Any], type_name: str, item_type: str | None, include: bool
) -> None:
    from scoring.value_check import param_types as _param_types

    spec: dict[str, Any] = {"type": type_name}
    if item_type is not None:
        spec["items"] = {"type": item_type}
    acceptable = [value, *others] if include else others
    try:  # a dict compared with non-list acceptable values is a malformed task: the same exception
        fast: Any = _outcome(check_value("p", value, _param_types(spec), acceptable))
    except TypeError as error:
        fast = repr(error)
    try:
        reference: Any = _outcome(_reference_check_value("p", value, spec, acceptable))
    except TypeError as error:
        reference = repr(error)
    assert fast == reference


# ---- verdicts built without the dataclass __init__ ------------------------------------------------


def test_make_verdict_builds_the_same_frozen_verdict() -> None:
    import dataclasses

    from scoring import Verdict
    from scoring.model import make_verdict

    args: tuple[Any, ...] = (False, "type_error:simple", 0.25, {"format": 1.0}, "why", (Call("f", {}),))
    fast = make_verdict(*args)
    assert fast == Verdict(*args) and repr(fast) == repr(Verdict(*args))
    assert [field.name for field in dataclasses.fields(Verdict)] == list(vars(fast))
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.valid = True  # type: ignore[misc]
