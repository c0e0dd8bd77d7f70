"""Property tests: decode never raises anything but DecodeError, never runs code; render and
decode are inverse for every format. (That decoding stays fast on hostile input is
bench/decode_check.py's worst case.)"""

from __future__ import annotations

import builtins
import json
import keyword
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import Call, DecodeError
from scoring.checking import check
from scoring.decoding import decode
from scoring.rendering import FORMATS, render, to_openai_tool_calls

SETTINGS = settings(
    max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
NESTED = settings(SETTINGS, max_examples=40)  # nested values are slow to generate; keeps the time budget

identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s)
)
names = st.lists(identifiers, min_size=1, max_size=3).map(".".join)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
    | st.lists(  # strings holding the wrappers' own markers must not break out of them
        st.sampled_from(["```", "<tool_call>", "</tool_call>", "<execute>", "'", '"', "\\", "\n"])
        | st.text(max_size=3),
        max_size=6,
    ).map("".join)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
calls = st.builds(Call, names, st.dictionaries(identifiers, json_values, max_size=4))
call_lists = st.lists(calls, max_size=4)

# Text that looks like the real thing, broken in arbitrary places.
fragments = st.sampled_from(
    [
        "[", "]", "(", ")", "{", "}", "<tool_call>", "</tool_call>", "```python\n", "```", "<execute>",
        "f(", "a=", "1", "'x'", '"y"', ",", ":", "\\", "'", '"', "\n", " ", "**", "-", ".", "=", "True",
        '{"name": "f", "arguments": {', '"tool": "t"', "lambda", "import os", "print(", "__import__", "é",
    ]
)  # fmt: skip
structured_text = st.lists(fragments | st.text(max_size=5), max_size=40).map("".join)


def _refuse(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("decoding tried to run code")


@contextmanager
def no_code_execution() -> Iterator[None]:
    """Any eval or exec while decoding fails the test (hypothesis itself uses exec, so only here)."""
    saved = builtins.eval, builtins.exec
    builtins.eval, builtins.exec = _refuse, _refuse
    try:
        yield
    finally:
        builtins.eval, builtins.exec = saved


def _decode_bounded(output: Any) -> None:
    """Decoded to a list of calls or refused with DecodeError, running no code. How long the worst
    inputs take (at the 64 KiB cap) is bench/decode_check.py's worst case, not a CPU-time assertion
    here: one under two busy test workers flaked."""
    try:
        with no_code_execution():
            result = decode(output)
    except DecodeError:
        pass
    else:
        assert isinstance(result, list) and all(isinstance(call, Call) for call in result)


@SETTINGS
@given(st.text(max_size=300))
def test_decode_arbitrary_text(text: str) -> None:
    _decode_bounded(text)


@SETTINGS
@given(structured_text)
def test_decode_broken_call_syntax(text: str) -> None:
    _decode_bounded(text)


@NESTED
@given(json_values)
def test_decode_arbitrary_json(value: Any) -> None:
    _decode_bounded(json.dumps(value))
    _decode_bounded(value if isinstance(value, dict | list) else [value])


@NESTED
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["name", "arguments", "tool", "args", "function", "type"]), json_values
        )
    )
)
def test_decode_call_shaped_json(items: list[dict[str, Any]]) -> None:
    _decode_bounded(json.dumps(items))
    _decode_bounded(items)


@NESTED
@given(call_lists, st.sampled_from(FORMATS))
def test_render_then_decode_round_trips(calls_: list[Call], fmt: str) -> None:
    assert decode(render(calls_, fmt)) == calls_


@NESTED
@given(call_lists)
def test_openai_tool_calls_round_trip_and_are_well_formed(calls_: list[Call]) -> None:
    tool_calls = to_openai_tool_calls(calls_)
    assert [item["id"] for item in tool_calls] == [f"call_{i}" for i in range(len(calls_))]
    assert all(
        item["type"] == "function" and isinstance(item["function"]["arguments"], str) for item in tool_calls
    )
    assert decode(tool_calls) == calls_
    assert decode({"role": "assistant", "content": None, "tool_calls": tool_calls}) == calls_


@SETTINGS
@given(structured_text, st.sampled_from(["simple", "parallel", "irrelevance", "relevance"]))
def test_check_never_raises_on_any_output(text: str, category: str) -> None:
    functions = [{"name": "f", "parameters": {"type": "dict", "properties": {"a": {"type": "integer"}}}}]
    answer = [] if "relevance" in category else [{"f": {"a": [1]}}]
    with no_code_execution():
        result = check(text, functions, answer, category)
    assert 0.0 <= result.score <= 1.0 and all(0.0 <= value <= 1.0 for value in result.components.values())
    assert result.valid == (result.error_type is None) and (result.score == 1.0) == result.valid
