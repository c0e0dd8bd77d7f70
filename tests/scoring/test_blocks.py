"""Embedded blocks (Hermes, fences, <execute>) and block payloads against the readings they replace.

The block decoders find their blocks in one loop, leave the syntax guard out for the blocks of a
text within its quick test, and read the common fence header without its pattern; a payload's
JSON look is told from its first characters, with _JSON_START only after "[" and a blank. The
references below are the code as it was before (a block generator, every block guarded, the
pattern on every payload): on any text both must give the same calls or the same DecodeError.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scoring.decoding as decoding
import scoring.payloads as payloads
from scoring import DecodeError
from scoring.model import DEFAULT_LIMITS, Call, Limits
from scoring.payloads import MessageText

SETTINGS = settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
LIMITS = [DEFAULT_LIMITS, Limits(max_calls=1), Limits(max_items=16), Limits(max_depth=2)]


def _reference_payload_calls(payload: str, limits: Limits) -> list[Call]:
    payload = payload.strip()
    if not payload:
        return []
    if payloads._JSON_START.match(payload):
        try:
            return payloads.calls_from_objects(payloads._parse_json(payload, limits), limits, from_json=True)
        except DecodeError:
            pass
    try:
        return payloads._python_calls(payload, limits)
    except DecodeError as python_error:
        if payload[0] != "[" or payloads._JSON_START.match(payload):
            raise
        try:
            return payloads.calls_from_objects(payloads._parse_json(payload, limits), limits, from_json=True)
        except DecodeError:
            raise python_error from None


def _reference_bodies(text: str, opener: str, closer: str, header: re.Pattern[str] | None) -> Iterator[str]:
    start = text.find(opener)
    while start >= 0:
        body = start + len(opener)
        if header is not None:
            match = header.match(text, body)
            assert match is not None
            body = match.end()
        end = text.find(closer, body)
        if end < 0:
            yield text[body:]
            return
        yield text[body:end]
        start = text.find(opener, end + len(closer))


def _reference_blocks(
    opener: str, closer: str, header: re.Pattern[str] | None = None
) -> Callable[[str, Limits], list[Call]]:
    def decode_blocks(text: str, limits: Limits) -> list[Call]:
        payloads.guard_syntax(text, limits)
        calls: list[Call] = []
        for count, body in enumerate(_reference_bodies(text, opener, closer, header)):
            if count == limits.max_calls:
                raise DecodeError(f"more than {limits.max_calls} blocks")
            calls.extend(_reference_payload_calls(body, limits))
        return calls

    return decode_blocks


_BLOCKS = [
    (decoding._FENCED_BLOCKS, _reference_blocks("```", "```", decoding._FENCE_HEADER)),
    (decoding._EXECUTE_BLOCKS, _reference_blocks("<execute>", "</execute>")),
]


def _outcome(read: Callable[..., Any], *args: Any) -> str:
    try:
        return repr(read(*args))
    except DecodeError as error:
        return f"DecodeError({error.reason!r})"
    except MessageText as message:  # a message of text: the decoder above reads it
        return f"MessageText({message.content!r})"


_payload_pieces = st.sampled_from(
    [
        '{"name": "f", "arguments": {"a": 1}}', '[{"name": "f", "arguments": {}}]', "[]", "[1]", "[ 1]",
        "[\u0663]", "[\u2003{}]", '["x"]', "[-1]", "[true]", "[f(a=1)]", "f(a=[1, 2])", "g(b='x')\n",
        "{'name': 'f', 'arguments': {}}", "[", "{", " ", "\n", "x", "(", "[[[", "# c", "print(f(a=1))",
    ]
)  # fmt: skip
_markers = st.sampled_from(
    [
        "<tool_call>", "</tool_call>", "```", "```python\n", "``` python\n", "```py\n", "```python",
        "```\n", "<execute>", "</execute>", "\n", " ",
    ]
)  # fmt: skip
_texts = st.lists(_payload_pieces | _markers, max_size=10).map("".join)


@SETTINGS
@given(_texts, st.sampled_from(LIMITS))
def test_blocks_decode_as_before(text: str, limits: Limits) -> None:
    for decode_blocks, reference in _BLOCKS:
        assert _outcome(decode_blocks, text, limits) == _outcome(reference, text, limits)


@SETTINGS
@given(_texts, st.sampled_from(LIMITS))
def test_tool_call_blocks_read_whatever_they_read_before(text: str, limits: Limits) -> None:
    """<tool_call> blocks now also hold Qwen3-Coder XML and GLM calls, a JSON payload is read
    whole (a closing tag inside a string is part of a value), each block is guarded on its own,
    and a last block cut off before its closing tag is dropped: every text the reading before
    decoded still gives the same calls."""
    before = _outcome(_reference_blocks("<tool_call>", "</tool_call>"), text, limits)
    if not before.startswith("DecodeError"):
        now = _outcome(lambda t, lim: decoding._tool_call_blocks(t, lim, decoding.NO_SCHEMAS), text, limits)
        assert now == before


@SETTINGS
@given(st.lists(_payload_pieces, max_size=4).map("".join), st.sampled_from(LIMITS))
def test_payloads_decode_as_before(payload: str, limits: Limits) -> None:
    assert _outcome(payloads._payload_calls, payload, limits) == _outcome(
        _reference_payload_calls, payload, limits
    )


@SETTINGS
@given(st.text(max_size=4))
def test_the_json_look_of_a_payload_is_the_pattern_s(rest: str) -> None:
    """What _payload_calls reads as JSON is what _JSON_START matches: any character after "[",
    Unicode digits and blanks included."""
    for payload in ("[" + rest, "{" + rest, rest):
        assert _outcome(payloads._payload_calls, payload, DEFAULT_LIMITS) == _outcome(
            _reference_payload_calls, payload, DEFAULT_LIMITS
        )


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>\n'
        '<tool_call>{"name": "g", "arguments": {}}',
        "```python\nf(a=1)\ng(b=[1, 2])\n```",
        "``` python\nf(a=1)\n```",
        "```python",
        "```" + "[" * 40 + "```",
        "<tool_call>" + "x" * 2000 + "</tool_call>",
        "<execute>\nf(a={'k': 1})\n</execute>",
    ],
)
def test_common_and_edge_blocks_decode_as_before(text: str) -> None:
    for limits in LIMITS:
        for decode_blocks, reference in _BLOCKS:
            assert _outcome(decode_blocks, text, limits) == _outcome(reference, text, limits)
