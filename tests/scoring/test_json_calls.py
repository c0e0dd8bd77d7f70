"""The lean reading of parsed JSON call objects against the general one it stands in for.

``calls_from_objects`` reads a list of call dicts, and a single ``name``/``tool`` call object from
JSON, without the general search through the call shapes; on any value, with the lean paths on or
off, it must give the same calls or the same DecodeError.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scoring.payloads as payloads
from scoring import Call, DecodeError
from scoring.decoding import decode
from scoring.model import DEFAULT_LIMITS, Limits
from scoring.payloads import MessageText

SETTINGS = settings(
    max_examples=500, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)

_scalars = st.sampled_from([None, True, 0, 1.5, "", "f", "get_weather", '{"a": 1}', " ", "[1]"])
_arguments = st.dictionaries(st.sampled_from(["a", "b"]), _scalars, max_size=2) | _scalars
_keys = st.sampled_from(
    ["name", "tool", "function", "arguments", "args", "parameters", "tool_calls", "content", "role", "type"]
)
_leaves = _arguments | st.lists(_scalars, max_size=2)
_objects = st.recursive(
    st.dictionaries(_keys, _leaves, max_size=4),
    lambda children: st.dictionaries(_keys, children | _leaves, max_size=4) | st.lists(children, max_size=3),
    max_leaves=8,
)
_values = _objects | st.lists(_objects | _scalars, max_size=4) | _scalars


def _general(value: Any, limits: Limits, from_json: bool) -> str:
    """calls_from_objects with the lean paths switched off (by hand: hypothesis runs many
    examples per test, so no monkeypatch fixture)."""
    json_call, calls_from_list = payloads._json_call, payloads._calls_from_list
    payloads._json_call = lambda item: None
    payloads._calls_from_list = lambda value, limits, from_json: None
    try:
        return _outcome(value, limits, from_json)
    finally:
        payloads._json_call, payloads._calls_from_list = json_call, calls_from_list


def _outcome(value: Any, limits: Limits, from_json: bool) -> str:
    try:
        return repr(payloads.calls_from_objects(value, limits, from_json))
    except DecodeError as error:
        return f"DecodeError({error.reason!r})"
    except MessageText as message:  # a message of text: the decoder above reads it
        return f"MessageText({message.content!r})"


@SETTINGS
@given(_values, st.booleans(), st.sampled_from([DEFAULT_LIMITS, Limits(max_calls=1), Limits(max_calls=0)]))
def test_lean_json_reading_agrees_with_the_general_one(value: Any, from_json: bool, limits: Limits) -> None:
    assert _outcome(value, limits, from_json) == _general(value, limits, from_json)


@pytest.mark.parametrize(
    "value",
    [
        [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}],
        {"tool": "f", "args": {"a": [1]}, "confidence": 1.0, "state_update": ""},
        {"name": "f", "arguments": {"a": 1}, "content": "x"},
        [{"type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}],
        [{"name": "f", "arguments": {"a": 1}}, {}, Call("g", {})],
        [{"name": "f", "parameters": {"a": 1}, "arguments": None}],
        [{"name": 1, "arguments": {}}],
    ],
)
def test_common_and_edge_shapes_agree(value: Any) -> None:
    for from_json in (True, False):
        assert _outcome(value, DEFAULT_LIMITS, from_json) == _general(value, DEFAULT_LIMITS, from_json)


def test_a_list_of_calls_is_still_returned_as_it_is() -> None:
    calls = [Call("f", {"a": 1})]
    assert decode(calls) == calls and decode(calls) is not calls
    assert decode([]) == []
    with pytest.raises(DecodeError):
        decode([Call("f", {}), {"name": "g"}, 1])
