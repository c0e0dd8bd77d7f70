"""The plain keyword-call reader (``read_plain_calls``) against the token parser it stands in for.

Text that ``_PLAIN_TEXT`` matches whole must read the same with the plain reader as with the token
parser (the path it replaces) and as with the reference (ast.parse + LiteralReader); text at the
edges of the plain shape must be left to the token parser.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scoring.simple_calls as simple_calls
from scoring import Call, DecodeError
from scoring.model import DEFAULT_LIMITS
from scoring.payloads import guard_syntax, python_calls_from_tree

SETTINGS = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
_NEVER = re.compile(r"(?!)")


def _token_parser(text: str) -> list[Call] | None:
    """read_simple_calls with the plain path switched off (by hand: hypothesis runs many examples
    per test, so no monkeypatch fixture)."""
    plain_text = simple_calls._PLAIN_TEXT
    simple_calls._PLAIN_TEXT = _NEVER
    try:
        return simple_calls.read_simple_calls(text, DEFAULT_LIMITS.max_depth)
    finally:
        simple_calls._PLAIN_TEXT = plain_text


def _reference(text: str) -> str:
    try:
        guard_syntax(text, DEFAULT_LIMITS)
        return repr(python_calls_from_tree(text, DEFAULT_LIMITS))
    except DecodeError as error:
        return f"DecodeError({error.reason!r})"


def _agrees(text: str) -> bool:
    """Asserts that the plain reader, where it answers, agrees with the token parser and the
    reference; True when it answered."""
    if simple_calls._PLAIN_TEXT.fullmatch(text) is None:
        return False
    plain = simple_calls.read_plain_calls(text)
    token = _token_parser(text)
    assert repr(plain) == repr(token), text  # repr: types and signs of zero count
    if plain is None:
        return False
    assert repr(plain) == _reference(text), text
    return True


_names = st.sampled_from(["a", "b", "_c", "city", "match", "class", "True", "if", "x1"])
_function_names = st.sampled_from(["f", "get_weather", "g.h", "a.b.c", "print", "x.if", "None"])
_values = st.sampled_from(
    [
        "0", "1", "-1", "-0", "10", "1.5", "-0.0", "0.25", "123456789012345678901234567890", "'x'", '"y"',
        "''", '""', "'it\"s'", "\"it's\"", "'Paris, France'", "'f(a=1)'", "'é\t\x0c\u2028'", "True",
        "False", "None",
    ]
)  # fmt: skip
_separators = st.sampled_from([", ", ","])


@st.composite
def _plain_call(draw: st.DrawFn) -> str:
    arguments = draw(st.lists(st.tuples(_names, _values), max_size=4))
    separator = draw(_separators)
    return draw(_function_names) + "(" + separator.join(f"{k}={v}" for k, v in arguments) + ")"


@SETTINGS
@given(st.lists(_plain_call(), min_size=1, max_size=4), st.booleans(), _separators)
def test_plain_text_reads_as_the_token_parser_reads_it(
    calls: list[str], bracketed: bool, separator: str
) -> None:
    text = "[" + separator.join(calls) + "]" if bracketed else "\n".join(calls)
    assert simple_calls._PLAIN_TEXT.fullmatch(text) is not None
    _agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "[get_weather(city='Paris, France', unit='celsius', days=6)]",
        "get_weather(city='Tokyo', days=8)\nget_weather(city='Oslo', days=-7)",
        '[f(), g.h(a=1.5,b="", c=None, d=True, e=False)]',
        "f(a='x(y=1), z=2')",
    ],
)
def test_common_shapes_take_the_plain_path(text: str) -> None:
    assert _agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "[f(a=1, a=2)]",  # repeated argument: ast says why
        "[f(class=1)]",  # keyword as argument name
        "[x.if(a=1)]",  # keyword in a dotted name
        "[None(a=1)]",
    ],
)
def test_plain_shapes_with_bad_names_are_left_to_the_token_parser(text: str) -> None:
    assert simple_calls._PLAIN_TEXT.fullmatch(text) is not None
    assert simple_calls.read_plain_calls(text) is None
    assert not _agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "[f(a=007)]", "[f(a=1.)]", "[f(a=1e5)]", "[f(a=x)]", "[f(a=[1])]", "[f(a = 1)]", "[f(a=1,)]",
        "f(a=1), g(b=2)", "[f(a='x\\n')]", "[f(a=r'x')]", "f(a=1)\n\ng(b=2)", "[f(a=1)]\n[g(b=2)]",
        "[f (a=1)]", "[]", "f(a=\"x'')", "[f(a=+1)]", "[f(a=--1)]", "[f(a='é'),\ng(b=1)]",
    ],
)  # fmt: skip
def test_other_shapes_are_not_plain(text: str) -> None:
    assert simple_calls._PLAIN_TEXT.fullmatch(text) is None


def test_a_zero_depth_cap_skips_the_plain_path() -> None:
    """A unary minus sits at depth 1: with a cap of 0 the reference refuses it, and so the plain
    reader must not read it."""
    assert simple_calls.read_simple_calls("[f(a=-1)]", 0) is None
