"""Edge cases of the existing families' markup, read as the inference engines read them (issue 31):
Harmony's recipient in the prefilled role header, markers inside argument values, Qwen3-Coder and
GLM recovery, Gemma 4 keys with spaces, and values typed by the offered schema in every family
that writes values as text. Malformed output of each new form is a decode error or no call."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import Call, DecodeError
from scoring.decoding import decode
from scoring.rendering import NATIVE_FORMATS, render
from tests.scoring.test_native_formats import TOOLS, TYPED, WEATHER

PARIS = Call(*WEATHER)
_ARGS = '{"city": "Paris", "days": 3}'

# --- Harmony: " to=functions.NAME" in the role header the prompt prefilled ---------------------

HARMONY_HEADER = [
    f" to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{_ARGS}<|call|>",
    f" to=functions.get_weather<|channel|>analysis<|message|>{_ARGS}<|call|>",
    f" to=functions.get_weather<|channel|>commentary json<|message|>{_ARGS}<|call|>",
    f"<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{_ARGS}<|call|>",
]


@pytest.mark.parametrize("text", HARMONY_HEADER)
def test_harmony_recipient_in_the_prefilled_role_header(text: str) -> None:
    assert decode(text, tools=TOOLS) == [PARIS]


def test_harmony_header_recipient_then_a_second_call() -> None:
    text = HARMONY_HEADER[0] + "<|start|>assistant<|channel|>commentary to=functions.now<|message|>{}<|call|>"
    assert decode(text, tools=TOOLS) == [PARIS, Call("now", {})]


def test_harmony_without_a_recipient_is_no_call() -> None:
    assert decode(f"<|channel|>commentary json<|message|>{_ARGS}<|call|>", tools=TOOLS) == []


# --- markers inside argument values ------------------------------------------------------------

SEND = "send_message"


def _send(text: str) -> list[Call]:
    return [Call(SEND, {"text": text, "to": "Ana"})]


def _qwen(value: str) -> str:
    return (
        f"<tool_call>\n<function={SEND}>\n<parameter=text>\n{value}\n</parameter>\n"
        "<parameter=to>\nAna\n</parameter>\n</function>\n</tool_call>"
    )


def _glm(value: str) -> str:
    return (
        f"<tool_call>{SEND}<arg_key>text</arg_key><arg_value>{value}</arg_value>"
        "<arg_key>to</arg_key><arg_value>Ana</arg_value></tool_call>"
    )


def _hermes(value: str) -> str:
    return '<think>It fits.</think><tool_call>{"name": "send_message", "arguments": ' + (
        f'{{"text": "{value}", "to": "Ana"}}}}</tool_call>'
    )


def _mistral(value: str) -> str:
    return f'[THINK]It fits.[/THINK][TOOL_CALLS]{SEND}[ARGS]{{"text": "{value}", "to": "Ana"}}'


INNER_MARKERS = {
    "qwen3_coder </tool_call>": (_qwen, "Use </tool_call> tags"),
    "qwen3_coder </parameter> and </function>": (_qwen, "Use </parameter> and </function> tags"),
    "qwen3_coder <tool_call> then a close": (_qwen, "a <tool_call> b </tool_call> c"),
    "glm </tool_call>": (_glm, "Use </tool_call> tags"),
    "glm </arg_value>": (_glm, "a </arg_value> b"),
    "hermes </think> after reasoning": (_hermes, "close it with </think> then"),
    "mistral [/THINK] after reasoning": (_mistral, "close it with [/THINK] then"),
    "mistral [TOOL_CALLS] after reasoning": (_mistral, "[TOOL_CALLS]x[ARGS]{}"),
}


@pytest.mark.parametrize("case", list(INNER_MARKERS))
def test_a_marker_inside_a_value_is_the_values_text(case: str) -> None:
    write, value = INNER_MARKERS[case]
    assert decode(write(value), tools=TOOLS) == _send(value)


def test_mistral_call_markup_inside_reasoning_is_no_call() -> None:
    text = (
        f"[THINK]I could write [TOOL_CALLS]{SEND}[ARGS]{{}} here[/THINK][TOOL_CALLS]get_weather[ARGS]{_ARGS}"
    )
    assert decode(text, tools=TOOLS) == [PARIS]
    assert decode(f"[THINK]I could write [TOOL_CALLS]get_weather[ARGS]{_ARGS}", tools=TOOLS) == []


# --- Qwen3-Coder XML recovery -----------------------------------------------------------------


def test_qwen3_coder_missing_parameter_close_before_the_next_parameter_or_function_end() -> None:
    before_next = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>"
        "\nParis\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    )
    before_end = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>"
        "\nParis\n</parameter>\n<parameter=days>\n3\n</function>\n</tool_call>"
    )
    neither = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>"
        "\nParis\n<parameter=days>\n3\n</function>\n</tool_call>"
    )
    for text in (before_next, before_end, neither):
        assert decode(text, tools=TOOLS) == [PARIS], text


def test_qwen3_coder_bare_function_without_tool_call_tags() -> None:
    bare = (
        "<function=get_weather>\n<parameter=city>\nParis\n</parameter>"
        "\n<parameter=days>\n3\n</parameter>\n</function>"
    )
    assert decode(bare, tools=TOOLS) == [PARIS]
    assert decode("Checking.\n" + bare + "\nDone.", tools=TOOLS) == [PARIS]
    two = bare + "\n<function=now>\n</function>"
    assert decode(two, tools=TOOLS) == [PARIS, Call("now", {})]


def test_qwen3_coder_values_typed_by_the_schema() -> None:
    text = (
        "<tool_call>\n<function=set_thermostat>\n<parameter=count>\n3\n</parameter>\n"
        "<parameter=ratio>\n0.5\n</parameter>\n<parameter=on>\nTrue\n</parameter>\n"
        "<parameter=label>\n42\n</parameter>\n</function>\n</tool_call>"
    )
    assert decode(text, tools=TOOLS) == [Call(*TYPED)]
    off = text.replace("True", "False")
    assert decode(off, tools=TOOLS)[0].arguments["on"] is False
    # A numeric-looking value stays a string where the schema says string, and only there.
    assert decode(text)[0].arguments["label"] == 42


# --- GLM ---------------------------------------------------------------------------------------


def test_glm_json_looking_value_stays_a_string_where_the_schema_says_string() -> None:
    text = (
        f'<tool_call>{SEND}<arg_key>text</arg_key><arg_value>{{"a": 1}}</arg_value>'
        "<arg_key>to</arg_key><arg_value>[1, 2]</arg_value></tool_call>"
    )
    assert decode(text, tools=TOOLS) == [Call(SEND, {"text": '{"a": 1}', "to": "[1, 2]"})]
    assert decode(text)[0].arguments == {"text": {"a": 1}, "to": [1, 2]}


def test_glm_missing_arg_value_close_before_the_call_end_or_the_next_key() -> None:
    at_end = (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>"
        "Paris</arg_value><arg_key>days</arg_key><arg_value>3</tool_call>"
    )
    before_key = (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris<arg_key>"
        "days</arg_key><arg_value>3</arg_value></tool_call>"
    )
    for text in (at_end, before_key, at_end + "\n" + at_end):
        assert decode(text, tools=TOOLS) == [PARIS] * text.count("<tool_call>"), text


# --- Gemma 4 -----------------------------------------------------------------------------------


def test_gemma4_keys_with_spaces() -> None:
    text = (
        '<|tool_call>call:send_message{my text:<|"|>hi, you: there<|"|>'
        ',to:<|"|>Ana<|"|>,n m:{a b:[1,2]}}<tool_call|>'
    )
    assert decode(text, tools=TOOLS) == [
        Call(SEND, {"my text": "hi, you: there", "to": "Ana", "n m": {"a b": [1, 2]}})
    ]


# --- item 2: every family that writes values as text types them by the offered schema ----------

_TEXT_TOOLS = [
    {"name": "f", "parameters": {"type": "object", "properties": {
        "s": {"type": "string"}, "i": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
    }}},
]  # fmt: skip


@pytest.mark.parametrize("fmt", NATIVE_FORMATS)
def test_every_native_family_reads_values_in_the_offered_schemas_types(fmt: str) -> None:
    calls = [Call("f", {"s": "42", "i": 7, "x": 0.5, "b": False})]
    assert decode(render(calls, fmt), tools=_TEXT_TOOLS) == calls
    truthy = [Call("f", {"s": "true", "i": -3, "x": 2, "b": True})]
    assert decode(render(truthy, fmt), tools=_TEXT_TOOLS) == truthy


# --- malformed new forms: a decode error or no call, never a crash -----------------------------

MALFORMED_NEW = [
    " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{broken<|call|>",
    " to=functions.get_weather<|channel|>analysis<|message|>",
    " to=<|channel|>commentary json<|message|>{}<|call|>",
    "<function=get_weather>\n<parameter=city>\nParis",
    "<function=get_weather>\n<parameter=city\nParis</parameter></function>",
    "<function=>\n</function>",
    "<tool_call>\n<function=f>\n<parameter=a>\n</parameter></parameter>\n",
    "<tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value></arg_value>",
    "<tool_call>f<arg_key>a</arg_key><arg_value>",
    "<|tool_call>call:f{a b c}<tool_call|>",
    '<|tool_call>call:f{:<|"|>x<|"|>}<tool_call|>',
    "[THINK][/THINK][THINK][TOOL_CALLS]f[ARGS]{}",
    "<think></think></think><think>",
]


@pytest.mark.parametrize("text", MALFORMED_NEW)
def test_malformed_new_forms_are_no_call_or_a_decode_error(text: str) -> None:
    try:
        calls = decode(text, tools=TOOLS)
    except DecodeError:
        return
    assert all(isinstance(call, Call) and isinstance(call.arguments, dict) for call in calls)


_WHOLE = [HARMONY_HEADER[0], _qwen("a </parameter> b"), _glm("a </tool_call> b"), _hermes("x </think> y")]


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_WHOLE), st.data())
def test_cut_or_garbled_new_forms_never_crash(text: str, data: Any) -> None:
    cut = data.draw(st.integers(0, len(text)))
    drop = data.draw(st.integers(0, len(text)))
    for candidate in (text[:cut], text[:drop] + text[drop + 7 :], text[cut:]):
        try:
            calls = decode(candidate, tools=TOOLS)
        except DecodeError:
            continue
        assert all(isinstance(call, Call) and isinstance(call.arguments, dict) for call in calls)
