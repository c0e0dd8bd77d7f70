"""The flat-container call reader (``read_flat_calls``) against the token parser it stands in for.

Text that ``_FLAT_TEXT`` matches whole (plain keyword calls whose arguments may also be flat lists
and dicts of literals) must read the same with the flat reader as with the token parser (the path it
replaces, both regular-expression paths switched off) and as with the reference (ast.parse +
LiteralReader); text at the edges of the flat shape must be left to the token parser.
"""

from __future__ import annotations

import re
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scoring.simple_calls as simple_calls
from scoring import Call, DecodeError, render
from scoring.model import DEFAULT_LIMITS
from scoring.payloads import guard_syntax, python_calls_from_tree

SETTINGS = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
_NEVER = re.compile(r"(?!)")


def _token_parser(text: str, max_depth: int = DEFAULT_LIMITS.max_depth) -> list[Call] | None:
    """read_simple_calls with both regular-expression paths switched off (by hand: hypothesis runs
    many examples per test, so no monkeypatch fixture)."""
    plain_text, flat_text = simple_calls._PLAIN_TEXT, simple_calls._FLAT_TEXT
    simple_calls._PLAIN_TEXT = simple_calls._FLAT_TEXT = _NEVER
    try:
        return simple_calls.read_simple_calls(text, max_depth)
    finally:
        simple_calls._PLAIN_TEXT, simple_calls._FLAT_TEXT = plain_text, flat_text


def _reference(text: str) -> str:
    try:
        guard_syntax(text, DEFAULT_LIMITS)
        return repr(python_calls_from_tree(text, DEFAULT_LIMITS))
    except DecodeError as error:
        return f"DecodeError({error.reason!r})"


def _agrees(text: str) -> bool:
    """Asserts that the flat reader, where it answers, agrees with the token parser, the reference
    and read_simple_calls as it is; True when it answered."""
    if simple_calls._FLAT_TEXT.fullmatch(text) is None:
        return False
    flat = simple_calls.read_flat_calls(text)
    token = _token_parser(text)
    assert repr(flat) == repr(token), text  # repr: types, signs of zero and key objects count
    if flat is None:
        return False
    assert repr(flat) == _reference(text), text
    assert repr(simple_calls.read_simple_calls(text, DEFAULT_LIMITS.max_depth)) == repr(flat), text
    return True


_names = st.sampled_from(["a", "b", "_c", "city", "match", "class", "True", "if", "x1"])
_function_names = st.sampled_from(["f", "get_weather", "g.h", "a.b.c", "print", "x.if", "None"])
_scalars = st.sampled_from(
    [
        "0", "1", "-1", "-0", "10", "1.5", "-0.0", "0.25", "-2.5", "123456789012345678901234567890", "'x'",
        '"y"', "''", '""', "'it\"s'", "\"it's\"", "'Paris, France'", "'f(a=1)'", "'[1, 2]'", "'{'",
        "']'", "'a: b'", "'é\t\x0c\u2028'", "True", "False", "None",
    ]
)  # fmt: skip
_separators = st.sampled_from([", ", ","])
_colons = st.sampled_from([": ", ":"])


@st.composite
def _flat_value(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["scalar", "list", "dict"]))
    separator = draw(_separators)
    if kind == "scalar":
        return draw(_scalars)
    if kind == "list":
        return "[" + separator.join(draw(st.lists(_scalars, max_size=4))) + "]"
    colon = draw(_colons)
    entries = draw(st.lists(st.tuples(_scalars, _scalars), max_size=4))  # repeated keys included
    return "{" + separator.join(f"{k}{colon}{v}" for k, v in entries) + "}"


@st.composite
def _flat_call(draw: st.DrawFn) -> str:
    arguments = draw(st.lists(st.tuples(_names, _flat_value()), max_size=4))
    separator = draw(_separators)
    return draw(_function_names) + "(" + separator.join(f"{k}={v}" for k, v in arguments) + ")"


@SETTINGS
@given(st.lists(_flat_call(), min_size=1, max_size=4), st.booleans(), _separators)
def test_flat_text_reads_as_the_token_parser_reads_it(
    calls: list[str], bracketed: bool, separator: str
) -> None:
    text = "[" + separator.join(calls) + "]" if bracketed else "\n".join(calls)
    assert simple_calls._FLAT_TEXT.fullmatch(text) is not None
    _agrees(text)


_texts = st.text(alphabet="[](){}=:, '\"\nabf1-.TNx", max_size=40)


@SETTINGS
@given(_texts)
def test_any_text_the_flat_shape_matches_reads_as_the_token_parser_reads_it(text: str) -> None:
    _agrees(text)


@SETTINGS
@given(st.lists(_flat_call(), min_size=1, max_size=3))
def test_a_depth_cap_below_two_leaves_containers_to_the_token_parser(calls: list[str]) -> None:
    """A container sits at depth 1 and its elements (a minus too) at depth 2: with a cap of 1 the
    token parser decides, as it did before the flat path."""
    text = "[" + ", ".join(calls) + "]"
    assert repr(simple_calls.read_simple_calls(text, 1)) == repr(_token_parser(text, 1))


@pytest.mark.parametrize(
    "text",
    [
        "[book_flight(origin='SFO', destination='NRT', passengers=['Ada Lovelace', 'Alan Turing'], "
        "options={'seat': 'aisle', 'bags': 2})]",
        "f(a=[], b={})\ng(c=[1, -2.5, True, None, 'x'], d={1: 'one', True: 'yes', 'k': -0.0})",
        "[f(a={'x': 1, 'x': 2}), g.h(b=[\"it's\", 'say \"hi\"'])]",
        "[f(a=['f(b=1)', '[', '{', ']'], b={']': '}', ':': ','})]",
    ],
)
def test_flat_shapes_take_the_flat_path(text: str) -> None:
    assert simple_calls._PLAIN_TEXT.fullmatch(text) is None
    assert _agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "[f(a=[1, 2], a=3)]",  # repeated argument: ast says why
        "[f(class=[1])]",  # keyword as argument name
        "[x.if(a={})]",  # keyword in a dotted name
    ],
)
def test_flat_shapes_with_bad_names_are_left_to_the_token_parser(text: str) -> None:
    assert simple_calls._FLAT_TEXT.fullmatch(text) is not None
    assert simple_calls.read_flat_calls(text) is None
    assert not _agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "[f(a=[[1]])]", "[f(a=[{'k': 1}])]", "[f(a={'k': [1]})]", "[f(a=[1,])]", "[f(a={1: 2,})]",
        "[f(a=[, 1])]", "[f(a={, 1: 2})]", "[f(, a=[1])]", "[, f(a=[1])]", "[f(a=[1] , b=2)]",
        "[f(a=[1 , 2])]", "[f(a=(1, 2))]", "[f(a={1, 2})]", "[f(a=[x])]", "[f(a={k: 1})]",
        "[f(a=[1]), ]", "[f(a=[1])g(b=2)]", "[f(a=[007])]", "[f(a=[1e5])]", "[f(a=['x\\n'])]",
        "[f(a=[1])]\n[g(b=2)]", "[f(a=[1]),\ng(b=2)]", "[f(a=[1 2])]", "[f(a={1 2})]", "[f(a={1:})]",
        "[f(a=[1]]", "[]", "[f(a=[-x])]", "[f(a=[+1])]",
    ],
)  # fmt: skip
def test_other_shapes_are_not_flat(text: str) -> None:
    assert simple_calls._FLAT_TEXT.fullmatch(text) is None


def test_the_bench_corpus_containers_take_the_flat_path(bench: ModuleType) -> None:
    """The python renderings of calls with list and dict arguments are read by the flat reader,
    with the reference's calls."""
    outputs = [
        output
        for output, _ in bench.corpus(2000, seed=5)
        if isinstance(output, str) and output.startswith("[book_flight(")
    ]
    assert outputs
    for output in outputs:
        assert _agrees(output)


def test_rendered_calls_with_flat_containers_read_back() -> None:
    calls = [
        Call("f", {"a": ["x", 1, -1.5, None], "b": {"k": True, 2: "two"}, "c": []}),
        Call("g.h", {"d": {}, "e": "[not, a, list]"}),
    ]
    text = render(calls, "pythonic")
    assert isinstance(text, str)
    assert simple_calls._FLAT_TEXT.fullmatch(text) is not None
    assert simple_calls.read_flat_calls(text) == calls
