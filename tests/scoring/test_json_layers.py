"""The lean JSON readings against the layered ones they stand in for: same calls, same errors.

* ``_openai_tool_calls`` (structured OpenAI tool calls) against ``decode`` with it switched off;
* ``_bracketed`` (text that opens with a bracket) against ``_whole_then_embedded``;
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scoring.decoding as decoding
from scoring import Call, DecodeError
from scoring.decoding import decode
from scoring.model import DEFAULT_LIMITS, Limits
from scoring.payloads import MessageText

SETTINGS = settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
LIMITS = [
    DEFAULT_LIMITS,
    Limits(max_calls=1),
    Limits(max_calls=0),
    Limits(max_items=12),
    Limits(max_depth=2),
    Limits(max_bytes=40),
]

_scalars = st.sampled_from([None, True, 0, 1.5, "", "f", "get_weather", '{"a": 1}', " ", "[1]", "é"])
_arguments = st.dictionaries(st.sampled_from(["a", "b", "city"]), _scalars, max_size=3) | _scalars
_keys = st.sampled_from(
    ["name", "tool", "function", "arguments", "args", "parameters", "tool_calls", "content", "role", "type"]
)
_leaves = _arguments | st.lists(_scalars, max_size=2)
_objects = st.recursive(
    st.dictionaries(_keys, _leaves, max_size=4),
    lambda children: st.dictionaries(_keys, children | _leaves, max_size=4) | st.lists(children, max_size=3),
    max_leaves=8,
)
_calls = st.builds(
    lambda name_key, name, arguments: {
        name_key: name,
        ("args" if name_key == "tool" else "arguments"): arguments,
    },
    st.sampled_from(["name", "tool"]),
    st.sampled_from(["f", "get_weather", "", 1]),
    _arguments | st.dictionaries(st.sampled_from(["a", "b"]), _objects, max_size=2),
)
_values = _calls | st.lists(_calls | _objects | _scalars, max_size=4) | _objects | _scalars


@st.composite
def _json_texts(draw: st.DrawFn) -> str:
    text = json.dumps(draw(_values), ensure_ascii=draw(st.booleans()))
    change = draw(st.sampled_from(["none", "none", "blank before", "extra data", "cut", "python quotes"]))
    if change == "blank before":
        return " " + text
    if change == "extra data":
        return text + draw(st.sampled_from([" ", "x", "]", "{}"]))
    if change == "cut":
        return text[: draw(st.integers(min_value=0, max_value=len(text)))]
    if change == "python quotes":
        return text.replace('"', "'")
    return text


def _outcome(read: Callable[[], Any]) -> str:
    try:
        return repr(read())
    except DecodeError as error:
        return f"DecodeError({error.reason!r})"
    except MessageText as message:  # a message of text: the decoder above reads it
        return f"MessageText({message.content!r})"


_argument_texts = (
    _arguments.map(json.dumps)
    | _objects.map(json.dumps)
    | st.sampled_from(["", " ", "{", '{"a": 1} ', ' {"a": 1}', '{"a": [' * 40, "[1]", "null", '{"a": 1}x'])
)
_tool_calls = st.builds(
    lambda name, arguments, wrapped: (
        {"id": "call_0", "type": "function", "function": {"name": name, "arguments": arguments}}
        if wrapped
        else {"name": name, "arguments": arguments}
    ),
    st.sampled_from(["f", "get_weather", "", 1, None]),
    _argument_texts | _arguments,
    st.booleans(),
)


def _general_decode(output: Any, limits: Limits) -> str:
    """decode with the OpenAI shortcut switched off (by hand, as hypothesis runs many examples)."""
    shortcut = decoding._openai_tool_calls
    decoding._openai_tool_calls = lambda output, limits: None
    try:
        return _outcome(lambda: decode(output, limits))
    finally:
        decoding._openai_tool_calls = shortcut


@SETTINGS
@given(st.lists(_tool_calls, min_size=1, max_size=4), st.sampled_from(LIMITS))
def test_openai_tool_calls_read_as_the_general_path_reads_them(output: list[Any], limits: Limits) -> None:
    assert _outcome(lambda: decode(output, limits)) == _general_decode(output, limits)


def test_openai_tool_calls_over_the_size_cap_are_left_to_the_general_path() -> None:
    arguments = json.dumps({"a": "x" * 30})
    output = [{"type": "function", "function": {"name": "f", "arguments": arguments}}] * 2
    limits = Limits(max_bytes=len(arguments) + 1)
    assert decoding._openai_tool_calls(output, limits) is None
    with pytest.raises(DecodeError, match="larger than"):
        decode(output, limits)
    assert decoding._openai_tool_calls(output[:1], limits) == [Call("f", {"a": "x" * 30})]


_bracket_texts = _json_texts().filter(lambda text: text[:1] in ("[", "{")) | st.sampled_from(
    [
        "[f(a=1)]",
        "[f(a=[1, 2])]",
        "{'name': 'f', 'arguments': {}}",
        '[1] <tool_call>{"name": "f", "arguments": {}}</tool_call>',
        "[not json] ```python\nf(a=1)\n```",
        "[true]",
        "{",
        "[",
    ]
)


@SETTINGS
@given(_bracket_texts, st.sampled_from(LIMITS))
def test_text_opening_with_a_bracket_decodes_as_before(text: str, limits: Limits) -> None:
    assert _outcome(lambda: decoding._bracketed(text, limits)) == _outcome(
        lambda: decoding._whole_then_embedded(text, limits)
    )
