"""The newest families' formats (issue 31): DeepSeek V4.1 DSML, Kimi K3 XTML, and Kimi K2.6's
section with a reasoning tag inside an argument.

Every case here is written from the issue's description of recorded outputs: no V4.1 or K3 chat
template or recorded output was at hand. The writers below are independent of the renderers
(scoring.formats.deepseek_dsml_v41, scoring.formats.kimi_k3) and play test_native_formats'
scenarios; then the shapes only these families have, their typing, their template fingerprints,
and malformed output (truncated, garbled: a decode error or no call, never a crash).
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import Call, DecodeError
from scoring.checking import check
from scoring.decoding import decode
from scoring.formats import template_format
from scoring.rendering import render


def _native_formats_tests() -> ModuleType:
    """test_native_formats (its tools and scenarios), loaded by path: tests are no package."""
    path = Path(__file__).with_name("test_native_formats.py")
    spec = importlib.util.spec_from_file_location("_native_formats_scenarios", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_NATIVE = _native_formats_tests()
SCENARIOS, TOOLS = _NATIVE.SCENARIOS, _NATIVE.TOOLS
Calls = list[tuple[str, dict[str, Any]]]
Writer = Callable[[Calls], str]


def _text_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def deepseek_v41(calls: Calls) -> str:  # DeepSeek V4.1: a space after the marker, `calls`
    invokes = []
    for name, arguments in calls:
        if not arguments:
            invokes.append(f'<｜DSML｜invoke name="{name}"/>\n')  # self-closing, as V4.1 writes it
            continue
        parameters = "".join(
            f'<｜DSML｜ parameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">'
            f"{_text_value(v)}</｜DSML｜ parameter>\n"
            for k, v in arguments.items()
        )
        invokes.append(f'<｜DSML｜ invoke name="{name}">\n{parameters}</｜DSML｜ invoke>\n')
    return "<｜DSML｜ calls>\n" + "".join(invokes) + "</｜DSML｜ calls>"


def _k3_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string" if isinstance(value, str) else "object" if isinstance(value, dict) else "array"


def kimi_k3(calls: Calls) -> str:  # Kimi K3 (XTML)
    written = "".join(
        f'<|open|>call tool="{name}" index="{index}"<|sep|>'
        + "".join(
            f'<|open|>argument key="{k}" type="{_k3_type(v)}"<|sep|>{_text_value(v)}<|close|>argument<|sep|>'
            for k, v in arguments.items()
        )
        + "<|close|>call<|sep|>"
        for index, (name, arguments) in enumerate(calls, start=1)
    )
    return f"<|open|>tools<|sep|>{written}<|close|>tools<|sep|>"


def kimi_k26(calls: Calls) -> str:  # Kimi K2.6: K2's section
    inner = "".join(
        f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>"
        f"{json.dumps(a, ensure_ascii=False)}<|tool_call_end|>"
        for i, (n, a) in enumerate(calls)
    )
    return f"<|tool_calls_section_begin|>{inner}<|tool_calls_section_end|>"


FAMILIES: dict[str, Writer] = {"deepseek_dsml_v41": deepseek_v41, "kimi_k3": kimi_k3, "kimi": kimi_k26}
OWN_MARKER = {
    "deepseek_dsml_v41": '<｜DSML｜ invoke name="x"> and </｜DSML｜ invoke> and <｜DSML｜invoke name="y"/>',
    "kimi_k3": '<|open|>call tool="x" index="2"<|sep|> and <|close|>call<|sep|><|close|>tools',
    "kimi": "<think> and </think> inside <|tool_call_end|>",
}


def _read(text: str) -> list[Call]:
    try:
        return decode(text, tools=TOOLS)
    except DecodeError:
        return []  # prose that holds no call is a decode error: no call either way


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_new_family_is_read_right(family: str, scenario: str) -> None:
    if scenario == "a marker inside an argument":
        arguments = {"text": OWN_MARKER[family], "to": "Ana"}
        text, expected = FAMILIES[family]([("send_message", arguments)]), [("send_message", arguments)]
    else:
        text, expected = SCENARIOS[scenario](family, FAMILIES[family])
    assert _read(text) == [Call(name, arguments) for name, arguments in expected], text


# --- DeepSeek V4.1 --------------------------------------------------------------------------------


def test_dsml_v41_self_closing_invokes_and_either_spelling_of_the_closing_tags() -> None:
    text = (
        '<｜DSML｜ calls>\n<｜DSML｜invoke name="now"/>\n<｜DSML｜ invoke name="get_weather">\n'
        '<｜DSML｜ parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
        '<｜DSML｜ parameter name="days" string="false">3</｜DSML｜ parameter>\n'
        '</｜DSML｜invoke>\n<｜DSML｜ invoke name="now" />\n</｜DSML｜ calls>'
    )
    assert decode(text, tools=TOOLS) == [
        Call("now", {}),
        Call("get_weather", {"city": "Paris", "days": 3}),
        Call("now", {}),
    ]
    assert decode('<｜DSML｜invoke name="now"/>') == [Call("now", {})]


def test_dsml_values_are_typed_by_the_schema_then_by_the_string_attribute() -> None:
    def one(key: str, string: str, raw: str, tools: Any = TOOLS) -> Any:
        text = (
            f'<｜DSML｜ invoke name="set_thermostat"><｜DSML｜ parameter name="{key}" string="{string}">'
            f"{raw}</｜DSML｜ parameter></｜DSML｜ invoke>"
        )
        return decode(text, tools=tools)[0].arguments[key]

    assert one("label", "false", "42") == "42"  # the schema says string: a numeric-looking value stays one
    assert one("label", "false", '"quoted"') == "quoted"  # a JSON string literal is the string it writes
    assert one("count", "true", "3") == 3  # the schema says integer
    assert one("on", "false", "true") is True
    # No schema: the attribute decides (text, or JSON where it is JSON).
    assert one("label", "true", "42", tools=None) == "42"
    assert one("label", "false", "42", tools=None) == 42
    assert one("label", "false", "not json", tools=None) == "not json"


def test_a_v41_template_is_told_as_v41_and_an_older_dsml_one_as_before() -> None:
    v41 = (
        "{%- if message.tool_calls %}{{ '\\n\\n<｜DSML｜ calls>\\n' }}{%- for tool in message.tool_calls %}"
        "{{ '<｜DSML｜ invoke name=\"' + tool.function.name + '\">\\n' }}"
        "{%- for k, v in tool.arguments.items() %}"
        "{{ '<｜DSML｜ parameter name=\"' + k + '\" string=\"' }}"
        "{{ ('true' if v is string else 'false') + '\">' }}"
        "{{ v }}{{ '</｜DSML｜ parameter>\\n' }}{%- endfor %}{{ '</｜DSML｜ invoke>\\n' }}{%- endfor %}"
        "{{ '</｜DSML｜ calls>' }}{%- endif %}<｜tool▁calls▁begin｜>"
    )
    assert template_format(v41) == "deepseek_dsml_v41"
    v32 = v41.replace("｜DSML｜ calls", "｜DSML｜function_calls").replace("｜DSML｜ ", "｜DSML｜")
    assert template_format(v32) == "deepseek_dsml"


# --- Kimi K3 --------------------------------------------------------------------------------------


def test_k3_reasoning_and_response_around_the_calls() -> None:
    call = kimi_k3([("get_weather", {"city": "Paris", "days": 3})])
    thought = f"<|open|>think<|sep|>Maybe {kimi_k3([('now', {})])}? get_weather fits.<|close|>think<|sep|>"
    assert decode(thought + call, tools=TOOLS) == [Call("get_weather", {"city": "Paris", "days": 3})]
    # The template prefilled <|open|>think: only the closing tag is in the answer.
    prefilled = f"Maybe {kimi_k3([('now', {})])}? No: get_weather.<|close|>think<|sep|>{call}"
    assert decode(prefilled, tools=TOOLS) == [Call("get_weather", {"city": "Paris", "days": 3})]
    answer = "<|open|>response<|sep|>Sunny, 20 degrees.<|close|>response<|sep|>"
    assert decode(thought + answer, tools=TOOLS) == []  # reasoning and an answer: no call
    assert decode(thought + call + answer, tools=TOOLS) == [Call("get_weather", {"city": "Paris", "days": 3})]
    # A call only inside reasoning is no call.
    assert decode("<|open|>think<|sep|>" + call + "<|close|>think<|sep|>" + answer, tools=TOOLS) == []
    assert decode("<|open|>think<|sep|>" + call, tools=TOOLS) == []  # reasoning cut off


def test_k3_values_are_typed_by_the_schema_then_by_the_type_attribute() -> None:
    def one(key: str, kind: str, raw: str, tools: Any = TOOLS) -> Any:
        text = (
            f'<|open|>tools<|sep|><|open|>call tool="set_thermostat" index="1"<|sep|>'
            f'<|open|>argument key="{key}" type="{kind}"<|sep|>{raw}<|close|>argument<|sep|>'
            "<|close|>call<|sep|><|close|>tools<|sep|>"
        )
        return decode(text, tools=tools)[0].arguments[key]

    assert one("label", "number", "42") == "42"
    assert one("count", "string", "3") == 3
    assert one("ratio", "number", "0.5") == 0.5
    assert one("label", "number", "42", tools=None) == 42
    assert one("label", "string", "42", tools=None) == "42"
    assert one("label", "boolean", "TRUE", tools=None) is True
    assert one("label", "object", '{"a": [1]}', tools=None) == {"a": [1]}


def test_k3_without_the_section_and_without_closing_separators() -> None:
    bare = '<|open|>call tool="now" index="1"<|sep|><|close|>call'
    assert decode(bare) == [Call("now", {})]
    loose = (
        '<|open|>tools<|sep|>\n<|open|>call tool="get_weather" index="1"<|sep|>\n'
        '<|open|>argument key="city"<|sep|>Paris<|close|>argument\n<|close|>call\n<|close|>tools'
    )
    assert decode(loose, tools=TOOLS) == [Call("get_weather", {"city": "Paris"})]


def test_a_k3_template_is_told_as_k3_and_its_answer_read_as_words() -> None:
    k3 = (
        "{%- for tool_call in message.tool_calls -%}{%- if loop.first %}<|open|>tools<|sep|>{% endif -%}"
        '<|open|>call tool="{{ tool_call.function.name }}" index="{{ loop.index }}"<|sep|>'
        '{%- for key, value in tool_call.function.arguments.items() -%}<|open|>argument key="{{ key }}" '
        'type="{{ value | type_name }}"<|sep|>{{ value }}<|close|>argument<|sep|>{%- endfor -%}'
        "<|close|>call<|sep|>{%- if loop.last %}<|close|>tools<|sep|>{% endif -%}{%- endfor -%}"
        "<|open|>think<|sep|>{{ message.reasoning_content }}<|close|>think<|sep|>"
    )
    assert template_format(k3) == "kimi_k3"
    from subnet.miner.adapters import ADAPTERS

    words = "<|open|>think<|sep|>hm<|close|>think<|sep|><|open|>response<|sep|>Sunny.<|close|>response<|sep|>"
    assert ADAPTERS["kimi_k3"].read(words, tools=TOOLS).content == "Sunny."


def test_typed_k3_values_are_what_the_checker_accepts() -> None:
    text = kimi_k3([("set_thermostat", {"count": 3, "ratio": 0.5, "on": True, "label": "42"})])
    expected = [{"set_thermostat": {"count": [3], "ratio": [0.5], "on": [True], "label": ["42"]}}]
    assert check(text, [tool["function"] for tool in TOOLS], expected, "simple").valid


# --- malformed: truncated and garbled -----------------------------------------------------------

_WHOLE = {
    "deepseek_dsml_v41": deepseek_v41(
        [
            ("get_weather", {"city": "Paris", "days": 3}),
            ("now", {}),
            ("send_message", {"text": "x", "to": "y"}),
        ]
    ),
    "kimi_k3": "<|open|>think<|sep|>hm<|close|>think<|sep|>"
    + kimi_k3([("get_weather", {"city": "Paris", "days": 3}), ("now", {}), ("book", {"options": {"a": 1}})]),
    "kimi": "<think>hm</think>"
    + kimi_k26([("send_message", {"text": "a </think> b", "to": "y"}), ("now", {})]),
}


@pytest.mark.parametrize("family", list(_WHOLE))
def test_every_cut_of_a_new_form_reads_its_complete_calls_or_nothing(family: str) -> None:
    whole = _WHOLE[family]
    expected = decode(whole, tools=TOOLS)
    assert len(expected) >= 2
    for cut in range(len(whole)):
        try:
            calls = decode(whole[:cut], tools=TOOLS)
        except DecodeError:
            continue
        assert calls == expected[: len(calls)], whole[:cut]


_PIECES = [
    "<｜DSML｜ calls>", "</｜DSML｜ calls>", '<｜DSML｜ invoke name="f">', '<｜DSML｜invoke name="f"/>',
    '<｜DSML｜ invoke name="f" />', "</｜DSML｜ invoke>", '<｜DSML｜ parameter name="a" string="false">',
    '<｜DSML｜ parameter name="a" string="true">', "</｜DSML｜ parameter>", "</｜DSML｜parameter>",
    "<|open|>", "<|close|>", "<|sep|>", "tools", "call", 'call tool="f" index="1"', "argument",
    'argument key="a" type="number"', 'argument key="a"', "think", "response", "<|open|>think<|sep|>",
    "<|close|>think", "<|tool_calls_section_begin|>", "<|tool_call_begin|>", "functions.f:0",
    "<|tool_call_argument_begin|>", "<|tool_call_end|>", "<think>", "</think>",
    '{"a": 1}', '"', "{", "}", "1", "x", " ", "\n",
]  # fmt: skip


@settings(max_examples=800, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_garbled_new_forms_only_ever_decode_or_raise_decode_error(text: str) -> None:
    for tools in (TOOLS, None):
        try:
            calls = decode(text, tools=tools)
        except DecodeError:
            continue
        assert all(isinstance(call, Call) and isinstance(call.arguments, dict) for call in calls)


def _worst_cases() -> dict[str, str]:
    cap = 64 * 1024

    def fill(head: str, unit: str) -> str:
        # In bytes: DSML's marker is 3 bytes a character, and the decoder caps bytes.
        return head + unit * ((cap - len(head.encode())) // len(unit.encode()))

    return {
        "dsml v4.1 calls": fill("", str(render([Call("f", {"a": [1, 2, 3]})], "deepseek_dsml_v41"))),
        "dsml v4.1 parameters, unclosed": fill(
            '<｜DSML｜ invoke name="f">', '<｜DSML｜ parameter name="a">1'
        ),
        "dsml v4.1 self-closing invokes": fill("", '<｜DSML｜invoke name="f"/>'),
        "k3 calls": fill("", str(render([Call("f", {"a": [1, 2, 3]})], "kimi_k3"))),
        "k3 arguments, unclosed": fill('<|open|>call tool="f"<|sep|>', '<|open|>argument key="a"<|sep|>1'),
        "k3 heads without a separator": fill("<|open|>tools<|sep|>", "<|open|>call "),
        "k3 reasoning tags": fill("", "<|close|>think<|open|>tools<|sep|>"),
        "kimi reasoning tags in values": fill("<|tool_calls_section_begin|>", "</think><|tool_call_begin|>"),
    }


@pytest.mark.parametrize("name", list(_worst_cases()))
def test_the_64_kib_worst_cases_of_the_new_forms_stay_within_budget(name: str) -> None:
    """The issue's hard budget is 5 ms (bench/decode_check.py measures it); this generous bound only
    catches a quadratic reader on a busy test machine."""
    text = _worst_cases()[name]
    functions = [{"name": "f", "parameters": {"type": "dict", "properties": {"a": {"type": "array"}}}}]
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        check(text, functions, [{"f": {"a": [[1, 2, 3]]}}], "simple")
        best = min(best, time.process_time() - start)
    assert best < 0.05, f"{name}: {best * 1000:.1f} ms"
