"""decode(): every accepted format, the seed models' own outputs, a corpus of tricky outputs, limits."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import pytest

from scoring import Call, DecodeError, Limits
from scoring.decoding import decode
from scoring.rendering import render

WEATHER = Call("get_weather", {"city": "Paris", "days": 3})


# ---- the formats of docs/scoring.md and of the seed models' cards -------------------------------

SEED_AND_SPEC_OUTPUTS: dict[str, Any] = {
    "bitagent python list": '[get_weather(city="Paris", days=3)]',
    "python list without brackets": 'get_weather(city="Paris", days=3)',
    "python in a markdown fence": '```python\n[get_weather(city="Paris", days=3)]\n```',
    "python in a bare fence": '```\nget_weather(city="Paris", days=3)\n```',
    "python in inline backticks": '`get_weather(city="Paris", days=3)`',
    "openai arguments": '[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]',
    "openai arguments as a string": json.dumps(
        {"name": "get_weather", "arguments": '{"city": "Paris", "days": 3}'}
    ),
    "name + parameters": '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}',
    "function + parameters": '[{"function": "get_weather", "parameters": {"city": "Paris", "days": 3}}]',
    "busybeaver strict json": json.dumps(
        {"tool": "get_weather", "args": {"city": "Paris", "days": 3}, "confidence": 0.97, "state_update": "x"}
    ),
    "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
    "hermes after thinking": (
        "<think>The user wants weather.</think>\n"
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</tool_call>'
    ),
    "hermes python-literal payload": (
        "<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Paris', 'days': 3}}</tool_call>"
    ),
    "codeact fence with prose": (
        'Let me check.\n```python\nweather = get_weather(city="Paris", days=3)\nprint(weather)\n```'
    ),
    "codeact execute tag": '<execute>\nprint(get_weather(city="Paris", days=3))\n</execute>',
    "json in a fence": '```json\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n```',
    "openai tool_calls list": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Paris","days":3}'},
        }
    ],
    "openai tool_calls with object arguments": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}}
    ],
    "openai assistant message": {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris","days":3}'},
            }
        ],
    },
    "assistant message with text content": {
        "role": "assistant",
        "content": '[get_weather(city="Paris", days=3)]',
    },
    "message as JSON text": json.dumps(
        {
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
                }
            ]
        }
    ),
}


@pytest.mark.parametrize("label", list(SEED_AND_SPEC_OUTPUTS))
def test_every_format_decodes_to_the_same_call(label: str) -> None:
    assert decode(SEED_AND_SPEC_OUTPUTS[label]) == [WEATHER]


def test_several_calls_in_each_format() -> None:
    other = Call("get_time", {"zone": "CET"})
    outputs = [
        '[get_weather(city="Paris", days=3), get_time(zone="CET")]',
        'get_weather(city="Paris", days=3), get_time(zone="CET")',
        '[{"name":"get_weather","arguments":{"city":"Paris","days":3}},{"name":"get_time","arguments":{"zone":"CET"}}]',
        '<tool_call>{"name":"get_weather","arguments":{"city":"Paris","days":3}}</tool_call>\n'
        '<tool_call>{"name":"get_time","arguments":{"zone":"CET"}}</tool_call>',
        '```python\nget_weather(city="Paris", days=3)\nget_time(zone="CET")\n```',
    ]
    for output in outputs:
        assert decode(output) == [WEATHER, other], output


def test_codeact_print_unwraps_calls_only() -> None:
    assert decode("```python\nprint(f(a=1))\nprint('done')\nprint()\n```") == [
        Call("f", {"a": 1}),
        Call("print", {}),
    ]
    assert decode("```python\nprint(text='hi')\n```") == [Call("print", {"text": "hi"})]


def test_dotted_names_are_kept_as_written() -> None:
    assert decode("[math.hypot(x=3, y=4)]") == [Call("math.hypot", {"x": 3, "y": 4})]
    assert decode("[a.b.c.run()]") == [Call("a.b.c.run", {})]


def test_empty_outputs_are_no_calls() -> None:
    for output in [
        "",
        "   \n",
        "[]",
        "```python\n```",
        {"role": "assistant", "content": None},
        [],
        "{}",
        "[{}]",
    ]:
        assert decode(output) == [], output


def test_pre_decoded_calls_are_returned_as_they_are() -> None:
    assert decode([WEATHER]) == [WEATHER]


# ---- python literals: what BFCL reads, without evaluating anything --------------------------------


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("1", 1),
        ("-1", -1),
        ("+2.5", 2.5),
        ("1e3", 1000.0),
        ("0x10", 16),
        ("5*2", 10),
        ("2**10", 1024),
        ("7/2", 3.5),
        ("7//2", 3),
        ("-(3-5)", 2),
        ("1e999", float("inf")),
        ("True", True),
        ("None", None),
        ("'it''s'", "its"),
        ("'a' 'b'", "ab"),
        ("'caf\\u00e9'", "café"),
        ("'日本'", "日本"),
        ("(1, 2)", [1, 2]),
        ("{1, 2}", [1, 2]),
        ("[(1, 2), [3]]", [[1, 2], [3]]),
        ("{'a': {'b': [1, {'c': None}]}}", {"a": {"b": [1, {"c": None}]}}),
        ("[{'x': 1}, {'x': 2}]", [{"x": 1}, {"x": 2}]),
        ("celsius", "celsius"),  # a bare name is taken as a string, as BFCL does
        ("...", "..."),
        ("f(1)", "f(1)"),  # a nested call without keywords: its source text, as BFCL does
        ("f(a=1)", {"f": {"a": 1}}),  # with keywords: {name: arguments}, as BFCL does
        ("x[0]", "x[0]"),
    ],
)
def test_python_literal_values(source: str, value: Any) -> None:
    assert decode(f"[f(v={source})]") == [Call("f", {"v": value})]


@pytest.mark.parametrize(
    "source",
    [
        "lambda: 1",
        "os.system",
        "f'{x}'",
        "[i for i in range(3)]",
        "1 if x else 2",
        "a and b",
        "1 < 2",
        "b'bytes'",
        "1j",
        "'a' + 'b'",
        "x + 1",
        "1 << 3",
        "not True",
        "-'a'",
        "{**a}",
        "[*a]",
        "1/0",
        "(-8) ** 0.5",
        "10**10**10",
        "2**100000",
        "(await x)",
    ],
)
def test_non_literals_are_decode_errors(source: str) -> None:
    with pytest.raises(DecodeError):
        decode(f"[f(v={source})]")


def test_positional_arguments_are_dropped_like_bfcl() -> None:
    assert decode('[get_weather("Paris", days=3)]') == [Call("get_weather", {"days": 3})]


def test_keyword_unpacking_and_repeats_are_errors() -> None:
    for output in ["[f(**kw)]", "[f(a=1, a=2)]", "[f()()]", "[x[0](a=1)]"]:
        with pytest.raises(DecodeError):
            decode(output)


def test_statements_that_are_not_calls_are_errors() -> None:
    for output in ["import os", "x = 1", "def f(): pass", "[f(a=1), 2]", "for i in x: f(a=i)", "del x"]:
        with pytest.raises(DecodeError):
            decode(output)


def test_prose_is_a_decode_error() -> None:
    for output in ["I cannot do that.", "The answer is 42", "Sure! Let me think about it...", "None", "42"]:
        with pytest.raises(DecodeError):
            decode(output)


def test_json_that_is_not_a_call_is_a_decode_error() -> None:
    for output in [
        '{"answer": 42}',
        "[1, 2]",
        '"text"',
        '{"name": 5}',
        '{"name": "f", "arguments": [1]}',
        "[true]",
    ]:
        with pytest.raises(DecodeError):
            decode(output)


def test_malformed_structured_output_is_a_decode_error() -> None:
    bad: list[Any] = [
        [{"type": "function", "function": {"name": "f", "arguments": "{not json"}}],
        [{"type": "function", "function": {"name": "f", "arguments": "[1]"}}],
        [{"type": "function", "function": {"name": "f", "arguments": {"a": object()}}}],
        ["f(a=1)"],
        42,
        None,
        {"role": "assistant", "content": 5},
    ]
    for output in bad:
        with pytest.raises(DecodeError):
            decode(output)


# ---- a corpus of tricky outputs -----------------------------------------------------------------

TRICKY: list[tuple[str, list[Call]]] = [
    ("  \n[get_weather(city='Paris', days=3)]\n\n", [WEATHER]),
    ("[get_weather(\n    city='Paris',\n    days=3,\n)]", [WEATHER]),
    ("[get_weather( city = 'Paris' , days = 3 )]", [WEATHER]),
    ('```py\nget_weather(city="Paris", days=3)\n```\nDone.', [WEATHER]),
    ('```tool_code\nget_weather(city="Paris", days=3)\n```', [WEATHER]),
    ('``` python\nget_weather(city="Paris", days=3)\n```', [WEATHER]),
    ('```get_weather(city="Paris", days=3)```', [WEATHER]),
    ('```python\nget_weather(city="Paris", days=3)', [WEATHER]),  # unclosed fence
    (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}',
        [WEATHER],
    ),  # unclosed tag
    ('[f(s="a, b. c/d-e_f*g^h")]', [Call("f", {"s": "a, b. c/d-e_f*g^h"})]),
    ('[f(s="Zürich 東京 🚀")]', [Call("f", {"s": "Zürich 東京 🚀"})]),
    ('{"name": "f", "arguments": {"s": "\\u00e9\\n\\"q\\""}}', [Call("f", {"s": 'é\n"q"'})]),
    (
        "[f(a=0, b=-0.0, c=1.5e-3, d=True, e=False, g=None)]",
        [Call("f", {"a": 0, "b": -0.0, "c": 0.0015, "d": True, "e": False, "g": None})],
    ),
    ('{"name": "f", "arguments": {"n": 1.0, "m": 1, "b": true}}', [Call("f", {"n": 1.0, "m": 1, "b": True})]),
    (
        "[f(d={'k': [1, 2, {'z': 'y'}]}, l=[{'a': 1}, {'a': 2}])]",
        [Call("f", {"d": {"k": [1, 2, {"z": "y"}]}, "l": [{"a": 1}, {"a": 2}]})],
    ),
    ('[f(s="contains ``` fence")]', [Call("f", {"s": "contains ``` fence"})]),
    ('[f(s="</tool_call>")]', [Call("f", {"s": "</tool_call>"})]),
    ('[f(s="[not(a=call)]")]', [Call("f", {"s": "[not(a=call)]"})]),
    ("[f(x=1), f(x=1)]", [Call("f", {"x": 1}), Call("f", {"x": 1})]),
    ("[f()]", [Call("f", {})]),
    ('[{"name": "f"}]', [Call("f", {})]),
    ('[{"name": "f", "arguments": ""}]', [Call("f", {})]),
    ('[{"name": "f", "arguments": null}]', [Call("f", {})]),
    ("'''triple''' if False else f(a=1)", []),  # placeholder replaced below
]
TRICKY.pop()


@pytest.mark.parametrize(("output", "calls"), TRICKY)
def test_tricky_outputs(output: str, calls: list[Call]) -> None:
    assert decode(output) == calls


def test_int_float_bool_stay_distinct() -> None:
    (call,) = decode('[f(i=1, f=1.0, b=True, s="1")]')
    assert [type(call.arguments[k]) for k in "ifbs"] == [int, float, bool, str]


# ---- bounded work ---------------------------------------------------------------------------------


def _timed_decode_error(output: Any, limits: Limits | None = None) -> str:
    start = time.process_time()
    with pytest.raises(DecodeError) as caught:
        decode(output) if limits is None else decode(output, limits)
    assert time.process_time() - start < 1.0  # generous: a budget check, not a benchmark
    return caught.value.reason


def test_size_cap() -> None:
    assert "larger than" in _timed_decode_error("[f(a='" + "x" * 70_000 + "')]")
    assert "larger than" in _timed_decode_error("[f(a='" + "é" * 40_000 + "')]")  # bytes, not characters
    assert decode("[f(a='" + "x" * 1000 + "')]", Limits(max_bytes=2000))
    assert "larger than" in _timed_decode_error("[f(a='" + "x" * 1000 + "')]", Limits(max_bytes=500))


def test_depth_cap() -> None:
    assert "deeper" in _timed_decode_error("[f(a=" + "[" * 40 + "]" * 40 + ")]")
    assert "deeper" in _timed_decode_error("[" * 1000)
    assert decode("[f(a=" + "[" * 30 + "]" * 30 + ")]")
    assert "deeper" in _timed_decode_error('{"name": "f", "arguments": {"a": ' + "[" * 40 + "]" * 40 + "}}")


def test_brackets_inside_strings_do_not_count_for_depth() -> None:
    assert decode("[f(a='" + "[" * 100 + "')]") == [Call("f", {"a": "[" * 100})]


def test_call_count_cap() -> None:
    many = "[" + ", ".join(["f(a=1)"] * 65) + "]"
    assert "more than 64 calls" in _timed_decode_error(many)
    assert len(decode("[" + ", ".join(["f(a=1)"] * 64) + "]")) == 64
    assert "calls" in _timed_decode_error("[f(), g()]", Limits(max_calls=1))
    assert "blocks" in _timed_decode_error("```\nf()\n```\n" * 70)


def test_item_cap() -> None:
    assert "syntax items" in _timed_decode_error("[f(a=[" + "1," * 5000 + "1])]")
    assert "syntax items" in _timed_decode_error("[" + "1+" * 20000 + "1]")
    assert "quote" in _timed_decode_error("'" * 60000)


@pytest.mark.parametrize(
    "output",
    [
        "[f(a=" + "-" * 1000 + "1)]",
        "[f(a=" + "1+" * 1000 + "1)]",
        "[f(a=" + "9**" * 100 + "9)]",
        "[f(a=" + "9" * 5000 + ")]",
        "[f(a=" + "g(" * 1000 + ")]",
    ],
)
def test_adversarial_python_is_refused_quickly(output: str) -> None:
    _timed_decode_error(output)


def test_long_dotted_names_are_read_without_recursion() -> None:
    (call,) = decode("[" + "a." * 1000 + "b()]")
    assert call.name.count(".") == 1000


def test_huge_integers_are_not_folded() -> None:
    assert "bits" in _timed_decode_error("[f(a=10**10**10)]")
    assert "bits" in _timed_decode_error("[f(a=(10**1000)*(10**1000))]")
    assert decode("[f(a=2**64)]") == [Call("f", {"a": 2**64})]


def test_nothing_is_executed(tmp_path: Any) -> None:
    marker = tmp_path / "ran"
    payloads = [
        f"[f(a=__import__('os').system('touch {marker}'))]",
        f"[f(a=open('{marker}', 'w'))]",
        f"__import__('os').system('touch {marker}')",
        f"```python\nimport os\nos.system('touch {marker}')\n```",
        f"[f(a=(lambda: open('{marker}', 'w'))())]",
    ]
    for payload in payloads:
        with contextlib.suppress(DecodeError):
            decode(payload)
    assert not marker.exists()


def test_rendered_calls_with_flat_containers_read_back() -> None:
    calls = [
        Call("f", {"a": ["x", 1, -1.5, None], "b": {"k": True, 2: "two"}, "c": []}),
        Call("g.h", {"d": {}, "e": "[not, a, list]"}),
    ]
    text = render(calls, "pythonic")
    assert isinstance(text, str)
    assert repr(decode(text)) == repr(calls)
