"""The fast python-call reader against the reference path (ast.parse + LiteralReader).

Wherever :func:`read_simple_calls` answers, its calls must be exactly the reference's (types
included: 1, 1.0 and True differ, so do 0.0 and -0.0); where the reference refuses the text, the
fast reader must give up. Checked on the benchmark corpus, on rendered calls and on text shaped
to hit the reader's edges; and ``decode``/``check`` with the fast reader switched off agree with
them as they are, verdicts, error types and messages included.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scoring.payloads
from scoring import Call, DecodeError, check, decode, render
from scoring.model import DEFAULT_LIMITS, Limits
from scoring.payloads import guard_syntax, python_calls_from_tree
from scoring.simple_calls import MAX_CHARS, read_simple_calls

SETTINGS = settings(
    max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def _reference(text: str, limits: Limits = DEFAULT_LIMITS) -> list[Call] | DecodeError:
    try:
        guard_syntax(text, limits)
        return python_calls_from_tree(text, limits)
    except DecodeError as error:
        return error


def _same(text: str, limits: Limits = DEFAULT_LIMITS) -> bool:
    """True when the fast reader answered (and then agreed with the reference); asserts otherwise.
    As in decoding, the fast reader only sees text that passed the syntax guard."""
    try:
        guard_syntax(text, limits)
    except DecodeError:
        return False
    fast = read_simple_calls(text, limits.max_depth)
    if fast is None:
        return False
    reference = _reference(text, limits)
    assert not isinstance(reference, DecodeError), (text, fast, reference)
    assert repr(fast) == repr(reference), text  # repr: types and signs of zero count
    return True


@pytest.fixture
def reference_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """decode and check without the fast reader."""
    monkeypatch.setattr(scoring.payloads, "read_simple_calls", lambda text, depth: None)


def _outcome(output: Any) -> str:
    try:
        return repr(decode(output))
    except DecodeError as error:
        return f"DecodeError({error.reason!r})"


def _verdict(output: Any, task: Any) -> tuple[Any, ...]:
    verdict = check(output, task.functions, task.answer, task.category)
    return (verdict.valid, verdict.error_type, verdict.score, verdict.components, verdict.message)


def test_the_bench_corpus_reads_the_same_on_both_paths(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = bench.corpus(2000, seed=5)
    fast = [(_outcome(output), _verdict(output, task)) for output, task in items]
    monkeypatch.setattr(scoring.payloads, "read_simple_calls", lambda text, depth: None)
    reference = [(_outcome(output), _verdict(output, task)) for output, task in items]
    assert fast == reference
    # and the fast reader is what reads the python formats of that corpus
    monkeypatch.undo()
    pythonic = [output for output, _ in items if isinstance(output, str) and output.startswith("[get")]
    assert pythonic and all(_same(output) for output in pythonic)


@pytest.mark.parametrize(
    "text",
    [
        "[get_weather(city=\"Paris, France\", unit='celsius', days=3)]",
        "f(a=1), g(b=[1, -2.5, 1e999, -0.0, 0, True, None, x])",
        "math.hypot(x=1., y=2.5e-3)",
        "f(a={'k': [1, {'n': None}], 2: 'two', True: 'yes', 1: 'one'}, b={})",
        "f()\n\ng(a=[])\n  \nh(b={})",
        "[f(a=1),\n   g(b=2)\n]",
        "f(\n    a='x\ty\x0cz\u2028',\n    b=\"it's\"\n)",
        "f(a=match, b=case, c=_, d=print)",
        "[a.b.c(d=1)]",
        "f (a=1)",
        "f(a=1.e5, b=00.5, c=0, d=-0)",
    ],
)
def test_simple_shapes_take_the_fast_path(text: str) -> None:
    assert _same(text)


@pytest.mark.parametrize(
    "text",
    [
        "f(a=1,)",  # trailing comma
        "f(a='x\\n')",  # escapes
        "f(a=r'x')",  # string prefix
        "f(a='x' 'y')",  # implicit concatenation
        "f(a=1+2)",
        "f(a=-x)",
        "f(a=(1, 2))",
        "f(a={1, 2})",
        "f(a=g(b=1))",
        "f(a=x.y)",
        "f(1)",
        "f(a=1, a=2)",
        "f(a=007)",
        "f(a=00)",
        "f(a=1j)",
        "f(a=1_000)",
        "f(a=...)",
        "f(a=1) # done",
        "f(a=1); g(b=2)",
        "f(a=1)\n  g(b=2)",
        "f(a=1)\n, g(b=2)",
        "f(a=1),\ng(b=2)",
        "f\n(a=1)",
        "f(a=1) g(b=2)",
        "[f(a=1)], g(b=2)",
        "x = f(a=1)",
        "print(f(a=1))",
        "f(a=1)\r\ng(b=2)",
        "f(a='\x00')",
        "f(class=1)",
        "if(a=1)",
        "a.if(b=1)",
        "f(a=None.x)",
        "f(a=lambda: 1)",
        "f(a=1 if b else 2)",
        "f(a=[1 for b in c])",
        "f(**a)",
        "f(a={[1]: 2})",
        "café(a=1)",
        "f(a=café)",
        "f(a='x\ud800')",
        "f(a='unterminated)",
        "[]",
        "f(a=1)[0]",
        "f(a=1)(b=2)",
        "\tf(a=1)",
        "f(a=1)\n",
        "f(a=1)\x0c",
        "f(a=" + "9" * 5000 + ")",
    ],
)
def test_anything_else_goes_to_the_reference_path(text: str) -> None:
    assert read_simple_calls(text, DEFAULT_LIMITS.max_depth) is None


def _tree_reading(text: str, limits: Limits) -> str:
    """The reference reader alone (no syntax guard), for its own depth cap."""
    try:
        return repr(python_calls_from_tree(text, limits))
    except DecodeError as error:
        return f"DecodeError({error.reason!r})"


def test_depth_cap_is_left_to_the_reference_reader() -> None:
    """The syntax guard's bracket cap runs first and is the stricter; without it the reader's
    own cap still holds, and the fast reader gives up wherever the reader would refuse."""
    limits = Limits(max_depth=2)
    within_cap = (
        "f(a=[[1]])",
        "f(a=[x])",
        "f(a=[-1])",
        "f(a=[[True, 'x', 1]])",
        "f(a={1: y})",
        "f(a={1: {2: 3}})",
    )
    for within in within_cap:
        fast = read_simple_calls(within, limits.max_depth)
        assert fast is not None and repr(fast) == _tree_reading(within, limits), within
    for too_deep in ("f(a=[[[1]]])", "f(a=[[x]])", "f(a=[[-1]])", "f(a={1: {2: {}}})", "f(a=[{1: y}])"):
        assert read_simple_calls(too_deep, limits.max_depth) is None, too_deep
        assert _tree_reading(too_deep, limits).startswith("DecodeError('nesting deeper than 2"), too_deep


def test_long_text_goes_to_the_reference_path() -> None:
    text = "f(a='" + "x" * MAX_CHARS + "')"
    assert read_simple_calls(text, DEFAULT_LIMITS.max_depth) is None
    assert _outcome(text) == repr([Call("f", {"a": "x" * MAX_CHARS})])


identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)
strings = st.text(st.characters(codec="utf-8") | st.sampled_from("'\"\\\n\r\t\x00\x0c"), max_size=8)
literals = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False)
    | strings
    | identifiers,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.integers(-3, 3) | strings | st.booleans(), children, max_size=3)
    ),
    max_leaves=8,
)
call_values = st.builds(
    Call,
    st.lists(identifiers, min_size=1, max_size=2).map(".".join),
    st.dictionaries(identifiers, literals, max_size=3),
)


@SETTINGS
@given(st.lists(call_values, min_size=1, max_size=3), st.sampled_from(["pythonic", "codeact"]))
def test_rendered_calls_read_the_same(calls: list[Call], fmt: str) -> None:
    try:
        text = str(render(calls, fmt))
    except ValueError:  # keywords as names, and other things python syntax cannot hold
        return
    if fmt == "codeact":
        text = text.removeprefix("```python\n").removesuffix("```").strip()
    _same(text)


# Python-call source text written piece by piece, mostly well formed, with the spellings, blanks
# and separators at the fast reader's edges.
def _mostly(plain: list[str], edges: list[str]) -> st.SearchStrategy[str]:
    """Mostly a plain choice, sometimes an edge case (a text holds many choices)."""
    return st.sampled_from(plain * 12 + edges)


blanks = _mostly(["", "", " ", "  ", "\n", "\t", "\n  "], [" \n", "\r\n", "\x0c", "\\\n"])
atoms = _mostly(
    [
        "0", "1", "-1", "-0", "1.", "1.5", "01.5", "1e3", "1E-3", "1.e5", "1e999", "-1e999", "'x'", '"y"',
        "''", "'it\"s'", "'\t\x0c\u2028'", "'é'", "True", "False", "None", "x", "match", "_",
    ],
    [
        "00", "007", ".5", "-.5", "1e", "1_0", "1j", "0x1f", "'a\\nb'", "r'x'", "b'x'", "'a' 'b'", "if",
        "not x", "x.y", "...", "- 1", "--1", "+1", "1+1", "(1)", "(1,)", "{1}", "f(a=1)", "g()", "é",
        "lambda: 1", "[*x]", "'\x00'", "'\r'", "'\ud800'", "'#'", "#", "x # y",
    ],
)  # fmt: skip
keys = _mostly(["a", "b", "c", "_x", "match"], ["a", "class", "é", "1", "x y", "**", "True"])
function_names = _mostly(["f", "g.h", "a.b.c", "print"], ["if", "x.if", "é", "f.1", "(f)", "f.", "None"])
statement_separators = _mostly(["\n", "\n\n", "\n  \n", ", ", ","], [",\n", "\n, ", "\n  ", " ", ";", "\r\n"])


def _joined(items: list[str], separators: list[str], open_: str, close: str, trailing: bool) -> str:
    parts = [item + separators[index % len(separators)] for index, item in enumerate(items)]
    return open_ + ",".join(parts) + ("," if trailing and items else "") + close


source_values = st.recursive(
    atoms,
    lambda children: (
        st.builds(
            _joined, st.lists(children, max_size=3), st.lists(blanks, min_size=1), st.just("["), st.just("]"),
            st.integers(0, 9).map(lambda n: n == 0),
        )
        | st.builds(
            _joined,
            st.lists(st.tuples(children, blanks, children).map("{0[0]}{0[1]}:{0[2]}".format), max_size=3),
            st.lists(blanks, min_size=1), st.just("{"), st.just("}"), st.integers(0, 9).map(lambda n: n == 0),
        )
    ),
    max_leaves=6,
)  # fmt: skip
source_calls = st.builds(
    lambda name, gap, arguments, blank, trailing: (
        name + gap + _joined([f"{k}{blank}={v}" for k, v in arguments], [blank], "(", ")", trailing)
    ),
    function_names,
    _mostly(["", "", " "], ["\n"]),
    st.lists(st.tuples(keys, source_values), max_size=3),
    blanks,
    st.integers(0, 9).map(lambda n: n == 0),
)  # fmt: skip


@SETTINGS
@given(
    st.lists(source_calls, min_size=1, max_size=3), st.lists(statement_separators, min_size=1), st.booleans()
)
def test_written_source_reads_the_same(calls: list[str], separators: list[str], bracketed: bool) -> None:
    text = "".join(call + separators[index % len(separators)] for index, call in enumerate(calls))
    text = text.strip().rstrip(",;").strip()  # decoding strips its text
    _same(f"[{text}]" if bracketed else text)


@SETTINGS
@given(
    st.lists(call_values, min_size=1, max_size=3),
    st.lists(st.sampled_from([" ", "\n", "\t", ""]), min_size=40, max_size=40),
)
def test_respaced_calls_read_the_same(calls: list[Call], blanks: list[str]) -> None:
    """Blanks inserted after every token: inside brackets they never matter, outside a newline
    ends a statement; the fast reader gives up or agrees."""
    try:
        text = str(render(calls, "pythonic"))
    except ValueError:
        return
    spaced = []
    for index, char in enumerate(text):
        spaced.append(char)
        if char in "[](){},:=":
            spaced.append(blanks[index % len(blanks)])
    candidate = "".join(spaced).strip()
    _same(candidate)
    _same(candidate[1:-1].strip())  # the bare form without the list brackets
