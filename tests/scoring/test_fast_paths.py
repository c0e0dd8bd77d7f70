"""The scorer's verdicts pinned, its one shortcut held to the rules, and the cheap steps that are
not shortcuts (one way each, no second reading to keep equal):

* Verdicts on the benchmark corpus, in its own and in other categories, are pinned by a digest
  recorded before any speed work: a change of any verdict (valid, error type, score, components)
  fails here. Re-record it only for a deliberate change of the rules.
* The shortcut (scoring.value_check.check_value, kept for bench/decode_check.py's 30,000 outputs/s): an
  argument value found as it is among the acceptable ones is accepted without the comparers, so
  every comparer the rules can pick must accept such a value.
* The python-call reader refuses text without a bracket or a comment before parsing it: such text
  holds nothing the reader takes.
* Call and Verdict set their fields in one step: still the frozen dataclasses they declare.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import Call, DecodeError, Verdict
from scoring.checking import check
from scoring.decoding import decode
from scoring.model import DEFAULT_LIMITS
from scoring.payloads import python_calls_from_tree
from scoring.value_check import _check_exact, _check_list, _check_string

SETTINGS = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)

# sha256 of the JSON list of [valid, error_type, score, components] over the corpus below, recorded
# with the scorer of commit 2f591a1 (before these shortcuts), and re-recorded for the partial credit
# that pays whole calls only (issue 27): every valid and error_type as before, 10,091 of the 11,000
# sets of the four earlier components as before (the args share no longer counts optional
# parameters left out) plus the new "calls" share, and every invalid answer's score changed.
CORPUS_VERDICTS = (11000, "1f8bd428f8dd1a71236ce676be6737db8bdb47e052b7d41a6d0b3bab7f656a15")


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


@pytest.mark.parametrize(
    "text",
    ["I'm sorry, I can't do that without more details.", "None of the available functions can answer that.",
     "x = 1", "a, b", "print", "True", "hello <tool_call> world"],
)  # fmt: skip
def test_bracket_free_prose_is_not_a_call(text: str) -> None:
    with pytest.raises(DecodeError):
        decode(text)
    functions = [{"name": "f", "parameters": {"type": "dict", "properties": {}}}]
    assert check(text, functions, [], "irrelevance").valid
    assert check(text, functions, [{"f": {}}], "simple").error_type == "ast_decoder:decoder_failed"


@pytest.mark.parametrize("text", ["x = 1", "pass", "a.b", "None", "lambda: 0", "'text'", "1e5", "x = \\\n 1"])
def test_bracket_free_python_holds_no_call(text: str) -> None:
    ast.parse(text)  # python, but nothing the reader takes: a call needs its brackets
    with pytest.raises(DecodeError, match="no bracket"):
        python_calls_from_tree(text, DEFAULT_LIMITS)


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


# ---- values built in one step ------------------------------------------------------------------


def test_calls_and_verdicts_are_the_frozen_dataclasses_they_declare() -> None:
    call = Call("f", {"a": 1})
    verdict = Verdict(False, "type_error:simple", 0.25, {"format": 1.0}, "why", (call,))
    assert [field.name for field in dataclasses.fields(Verdict)] == list(vars(verdict))
    assert [field.name for field in dataclasses.fields(Call)] == list(vars(call))
    assert repr(call) == "Call(name='f', arguments={'a': 1})" and call == Call("f", {"a": 1})
    assert Verdict(True, None, 1.0, {}) == Verdict(True, None, 1.0, {}, "", ())  # the defaults
    assert dataclasses.replace(verdict, valid=True).calls == (call,)
    for value in (call, verdict):
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.name = "g"  # type: ignore[union-attr]
