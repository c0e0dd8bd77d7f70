"""Every open model family's own tool-call format, read right.

For each family, its calls are written the way its official chat template and documentation
render them (a writer per family below), and the same scenarios are played for every family:
one call, parallel calls, no call, text before and after the calls, unicode and escapes,
nested JSON, numbers and booleans typed by the schema, empty arguments, reasoning before the
call (with and without its opening tag), a call marker inside reasoning, a marker inside an
argument, a second call cut off, and malformed output. Some families have extra shapes of
their own (Llama's bare JSON, Mistral v3 lists, DeepSeek V3 fences, Harmony's recipient in the
role header, GLM-4.7 without newlines) tested after the table.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import Call, DecodeError
from scoring.checking import check
from scoring.decoding import decode
from scoring.rendering import NATIVE_FORMATS, render

Calls = list[tuple[str, dict[str, Any]]]
Writer = Callable[[Calls], str]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": name,
            "parameters": {"type": "object", "properties": properties},
        },
    }
    for name, properties in {
        "get_weather": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "send_message": {"text": {"type": "string"}, "to": {"type": "string"}},
        "book": {
            "guests": {"type": "array", "items": {"type": "object"}},
            "options": {"type": "object"},
            "note": {"type": "string"},
        },
        "set_thermostat": {
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "on": {"type": "boolean"},
            "label": {"type": "string"},
        },
        "now": {},
    }.items()
]


def _text_value(value: Any) -> str:
    """How families that write values as text write one: strings as they are, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _json(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False)


def hermes(calls: Calls) -> str:  # Qwen3, Qwen2.5, Hermes
    return "\n".join(
        f'<tool_call>\n{{"name": "{n}", "arguments": {_json(a)}}}\n</tool_call>' for n, a in calls
    )


def qwen3_coder(calls: Calls) -> str:  # Qwen3-Coder, Qwen3.5
    blocks = []
    for name, arguments in calls:
        parameters = "".join(
            f"<parameter={k}>\n{_text_value(v)}\n</parameter>\n" for k, v in arguments.items()
        )
        blocks.append(f"<tool_call>\n<function={name}>\n{parameters}</function>\n</tool_call>")
    return "\n".join(blocks)


def llama3(calls: Calls) -> str:  # Llama 3.1-3.3, JSON tool calling
    objects = [json.dumps({"name": n, "parameters": a}, ensure_ascii=False) for n, a in calls]
    return "<|python_tag|>" + "; ".join(objects) + "<|eom_id|>"


def _python_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_python_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_python_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def llama4(calls: Calls) -> str:  # Llama 4, pythonic
    rendered = ", ".join(
        f"{n}(" + ", ".join(f"{k}={_python_literal(v)}" for k, v in a.items()) + ")" for n, a in calls
    )
    return f"<|python_start|>[{rendered}]<|python_end|>"


def mistral(calls: Calls) -> str:  # Mistral v11+ (Mistral Small 3.2, Devstral, Magistral)
    return "".join(f"[TOOL_CALLS]{n}[ARGS]{_json(a)}" for n, a in calls)


DS = {
    "calls_begin": "<｜tool▁calls▁begin｜>",
    "call_begin": "<｜tool▁call▁begin｜>",
    "sep": "<｜tool▁sep｜>",
    "call_end": "<｜tool▁call▁end｜>",
    "calls_end": "<｜tool▁calls▁end｜>",
}


def deepseek(calls: Calls) -> str:  # DeepSeek V3.1 / V3.2 / V4 (non-DSML)
    inner = "".join(f"{DS['call_begin']}{n}{DS['sep']}{_json(a)}{DS['call_end']}" for n, a in calls)
    return f"{DS['calls_begin']}{inner}{DS['calls_end']}"


def deepseek_dsml(calls: Calls) -> str:  # DeepSeek V3.2+ DSML
    invokes = []
    for name, arguments in calls:
        parameters = "".join(
            f'<｜DSML｜parameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">'
            f"{_text_value(v)}</｜DSML｜parameter>\n"
            for k, v in arguments.items()
        )
        invokes.append(f'<｜DSML｜invoke name="{name}">\n{parameters}</｜DSML｜invoke>\n')
    return "<｜DSML｜function_calls>\n" + "".join(invokes) + "</｜DSML｜function_calls>"


def kimi(calls: Calls) -> str:  # Kimi K2 / K2.5
    inner = "".join(
        f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{_json(a)}<|tool_call_end|>"
        for i, (n, a) in enumerate(calls)
    )
    return f"<|tool_calls_section_begin|>{inner}<|tool_calls_section_end|>"


def glm(calls: Calls) -> str:  # GLM-4.5 / 4.6
    blocks = []
    for name, arguments in calls:
        pairs = "".join(
            f"<arg_key>{k}</arg_key>\n<arg_value>{_text_value(v)}</arg_value>\n" for k, v in arguments.items()
        )
        blocks.append(f"<tool_call>{name}\n{pairs}</tool_call>")
    return "\n".join(blocks)


def harmony(calls: Calls) -> str:  # gpt-oss
    messages = [
        f"<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json"
        f"<|message|>{_json(a)}<|call|>"
        for n, a in calls
    ]
    # The first message's <|start|>assistant is the prompt's prefill: the answer opens at its channel.
    return "".join(messages).removeprefix("<|start|>assistant")


def _gemma_value(value: Any) -> str:
    if isinstance(value, str):
        return f'<|"|>{value}<|"|>'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(_gemma_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_gemma_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def gemma4(calls: Calls) -> str:
    return "".join(f"<|tool_call>call:{n}{_gemma_value(a)}<tool_call|>" for n, a in calls)


FAMILIES: dict[str, Writer] = {
    "hermes": hermes,
    "qwen3_coder": qwen3_coder,
    "llama3": llama3,
    "llama4": llama4,
    "mistral": mistral,
    "deepseek": deepseek,
    "deepseek_dsml": deepseek_dsml,
    "kimi": kimi,
    "glm": glm,
    "harmony": harmony,
    "gemma4": gemma4,
}

# A marker of each family's own call markup, put inside an argument value.
OWN_MARKER = {
    "hermes": "Use </tool_call> tags",
    "qwen3_coder": "Use <tool_call> tags",
    "llama3": "<|python_tag|> and <|eom_id|>",
    "llama4": "the <|python_end|> token",
    "mistral": "[TOOL_CALLS]x[ARGS]{}",
    "deepseek": "<｜tool▁call▁end｜> ends it",
    "deepseek_dsml": '<｜DSML｜invoke name="x"> starts it',
    "kimi": "<|tool_call_end|> ends it",
    "glm": "<tool_call> starts it",
    "harmony": "<|call|> ends it",
    "gemma4": "<tool_call|> ends it",
}

WEATHER = ("get_weather", {"city": "Paris", "days": 3})
TOKYO = ("get_weather", {"city": "Tokyo", "days": 1})
UNICODE = ("send_message", {"text": 'Zoë says "hi" — ✓ 東京\nnew line \\ back', "to": "Ana"})
NESTED = (
    "book",
    {"guests": [{"name": "A", "age": 3}, {"name": "B"}], "options": {"late": True, "tags": ["x"]}},
)
TYPED = ("set_thermostat", {"count": 3, "ratio": 0.5, "on": True, "label": "42"})
EMPTY = ("now", {})

SCENARIOS: dict[str, Callable[[str, Writer], tuple[str, Calls]]] = {
    "one call": lambda f, w: (w([WEATHER]), [WEATHER]),
    "parallel calls": lambda f, w: (w([WEATHER, TOKYO]), [WEATHER, TOKYO]),
    "three calls, two functions": lambda f, w: (w([WEATHER, EMPTY, TOKYO]), [WEATHER, EMPTY, TOKYO]),
    "no call": lambda f, w: ("I can't help with that: no tool fits.", []),
    "text before the call": lambda f, w: ("Let me check the weather for you.\n\n" + w([WEATHER]), [WEATHER]),
    "text after the call": lambda f, w: (w([WEATHER]) + "\nI asked for the forecast.", [WEATHER]),
    "unicode and escapes": lambda f, w: (w([UNICODE]), [UNICODE]),
    "nested JSON": lambda f, w: (w([NESTED]), [NESTED]),
    "numbers and booleans typed by the schema": lambda f, w: (w([TYPED]), [TYPED]),
    "empty arguments": lambda f, w: (w([EMPTY]), [EMPTY]),
    "reasoning before the call": lambda f, w: (
        "<think>The user wants the weather; get_weather fits.</think>\n" + w([WEATHER]),
        [WEATHER],
    ),
    "reasoning without its opening tag": lambda f, w: (
        "The user wants the weather; get_weather fits.\n</think>\n\n" + w([WEATHER]),
        [WEATHER],
    ),
    "a call inside reasoning is no call": lambda f, w: (
        f"<think>Maybe {w([TOKYO])}? No, nothing fits.</think>\nNone of the tools fits.",
        [],
    ),
    "a marker inside an argument": lambda f, w: (
        w([("send_message", {"text": OWN_MARKER[f], "to": "Ana"})]),
        [("send_message", {"text": OWN_MARKER[f], "to": "Ana"})],
    ),
    "a second call cut off": lambda f, w: (_cut_second(w), [WEATHER]),
}


def _cut_second(write: Writer) -> str:
    """Two calls, the text cut in the middle of the second one's arguments."""
    whole = write([WEATHER, ("get_weather", {"city": "Tokyo-cut-here", "days": 9})])
    return whole[: whole.index("Tokyo-cut-here") + 5]


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_is_read_right(family: str, scenario: str) -> None:
    text, expected = SCENARIOS[scenario](family, FAMILIES[family])
    try:
        calls = decode(text, tools=TOOLS)
    except DecodeError:
        calls = []  # prose that holds no call is a decode error, as it always was: no call either way
    assert calls == [Call(name, arguments) for name, arguments in expected], text


MALFORMED = {
    "hermes": ["<tool_call>\n{not json}\n</tool_call>", "<tool_call></tool_call>x"],
    # (A missing </parameter> or </function> is read as the engines read it: test_native_edges.)
    "qwen3_coder": [
        "<tool_call>\n<function=f>\n<parameter=a\n1\n</tool_call>",
        "<function=f>\n<parameter=a>\n1",
    ],
    "llama3": ["<|python_tag|>not json at all", "<|python_tag|>"],
    "llama4": ["<|python_start|>[f(a=)]<|python_end|>", "<|python_start|><|python_end|>"],
    "mistral": ["[TOOL_CALLS]", "[TOOL_CALLS]name[ARGS]not json", '[TOOL_CALLS][{"x": 1}]'],
    "deepseek": [DS["calls_begin"] + DS["call_begin"] + "f" + DS["sep"] + "{oops" + DS["call_end"]],
    "deepseek_dsml": ['<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="true">1'],
    "kimi": ["<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_calls_section_end|>"],
    # (A missing </arg_value> before </tool_call> is read as the engines read it: test_native_edges.)
    "glm": ["<tool_call>f<arg_key>a</arg_key></tool_call>", "<tool_call>f<arg_key>a<arg_value>1</tool_call>"],
    "harmony": ["<|channel|>commentary to=functions.f <|constrain|>json<|message|>{broken<|call|>"],
    "gemma4": ['<|tool_call>call:f{a:<|"|>open string}<tool_call|>', "<|tool_call>nonsense<tool_call|>"],
}


@pytest.mark.parametrize(
    ("family", "text"), [(family, text) for family, texts in MALFORMED.items() for text in texts]
)
def test_malformed_output_is_no_call_never_a_crash(family: str, text: str) -> None:
    try:
        calls = decode(text, tools=TOOLS)
    except DecodeError:
        return
    assert all(isinstance(call, Call) for call in calls)
    assert calls == [] or family in ("hermes",), calls


# --- shapes of one family ----------------------------------------------------------------------


def test_llama3_bare_json_with_and_without_type() -> None:
    one = '{"type": "function", "name": "get_weather", "parameters": {"city": "Paris", "days": 3}}'
    assert decode(one) == [Call(*WEATHER)]
    two = (
        '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}; '
        '{"name": "now", "parameters": {}}'
    )
    assert decode(two) == [Call(*WEATHER), Call(*EMPTY)]
    assert decode('<|python_tag|>{"name": "now", "arguments": {}}<|eot_id|>') == [Call(*EMPTY)]


def test_mistral_v3_list_and_call_ids() -> None:
    v3 = (
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}, '
        '{"name": "now", "arguments": {}}]'
    )
    assert decode(v3) == [Call(*WEATHER), Call(*EMPTY)]
    with_id = '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris", "days": 3}'
    assert decode(with_id) == [Call(*WEATHER)]
    magistral = "[THINK]The weather tool fits.[/THINK]" + mistral([WEATHER])
    assert decode(magistral) == [Call(*WEATHER)]
    assert decode('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 3}now[ARGS]{}') == [
        Call(*WEATHER),
        Call(*EMPTY),
    ]


def test_deepseek_v3_fenced_json() -> None:
    v3 = (
        f"{DS['calls_begin']}{DS['call_begin']}function{DS['sep']}get_weather\n```json\n"
        f'{{"city": "Paris", "days": 3}}\n```{DS["call_end"]}{DS["call_begin"]}function{DS["sep"]}now\n'
        f"```json\n{{}}\n```{DS['call_end']}{DS['calls_end']}"
    )
    assert decode(v3) == [Call(*WEATHER), Call(*EMPTY)]


def test_harmony_recipient_in_the_role_header_and_the_analysis_channel() -> None:
    text = (
        "<|channel|>analysis<|message|>I could call functions.get_weather here.<|end|>"
        "<|start|>assistant to=functions.get_weather<|channel|>commentary json"
        '<|message|>{"city": "Paris", "days": 3}<|call|>'
    )
    assert decode(text) == [Call(*WEATHER)]
    final = (
        "<|channel|>analysis<|message|>No tool fits.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Sorry.<|return|>"
    )
    assert decode(final) == []


def test_glm_47_without_newlines_and_values_typed_by_the_schema() -> None:
    pairs = {"count": "3", "ratio": "0.5", "on": "true", "label": "42"}
    text = (
        "<tool_call>set_thermostat"
        + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in pairs.items())
        + "</tool_call>"
    )
    assert decode(text, tools=TOOLS) == [Call(*TYPED)]
    # Without the schema a value is JSON when it reads as JSON: the string "42" becomes 42.
    assert decode(text)[0].arguments["label"] == 42
    assert decode("<tool_call>now</tool_call>") == [Call(*EMPTY)]


def test_typed_values_are_what_the_checker_accepts() -> None:
    text = qwen3_coder([TYPED])
    expected = [{"set_thermostat": {"count": [3], "ratio": [0.5], "on": [True], "label": ["42"]}}]
    functions = [tool["function"] for tool in TOOLS]
    assert check(text, functions, expected, "simple").valid


def test_a_marker_inside_a_hermes_json_string_is_a_value() -> None:
    text = (
        '<tool_call>{"name": "send_message", "arguments": '
        '{"text": "a </tool_call> b <tool_call> c", "to": "x"}}</tool_call>'
    )
    assert decode(text) == [Call("send_message", {"text": "a </tool_call> b <tool_call> c", "to": "x"})]


# --- hostile text built from every family's markers -------------------------------------------

_PIECES = [
    "<tool_call>", "</tool_call>", "<function=f>", "<parameter=a>", "</parameter>", "</function>",
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<|python_tag|>", "<|python_start|>",
    "<|python_end|>", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]", "<think>", "</think>",
    DS["calls_begin"], DS["call_begin"], DS["sep"], DS["call_end"], "function", "<｜DSML｜invoke name=\"f\">",
    "<｜DSML｜parameter name=\"a\" string=\"false\">", "</｜DSML｜parameter>", "</｜DSML｜invoke>",
    "<|tool_calls_section_begin|>", "<|tool_call_begin|>", "functions.f:0", "<|tool_call_argument_begin|>",
    "<|tool_call_end|>", "<|channel|>", "commentary to=functions.f", "<|constrain|>json", "<|message|>",
    "<|call|>", "<|end|>", "<|start|>assistant", "<|tool_call>", "call:f", "<tool_call|>", '<|"|>',
    "{", "}", "[", "]", '"a"', ":", ",", "1", "f(a=1)", "\n", " ", "x", "```json\n", "```",
]  # fmt: skip


@settings(max_examples=600, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=24).map("".join))
def test_text_of_markers_only_ever_decodes_or_raises_decode_error(text: str) -> None:
    try:
        calls = decode(text, tools=TOOLS)
    except DecodeError:
        return
    assert all(isinstance(call, Call) and isinstance(call.arguments, dict) for call in calls)


# --- the renderers of scoring.rendering (the miner's history, the benchmark) --------------------

_WEATHER_PARAMETERS = {
    "city": {"type": "string"},
    "days": {"type": "integer"},
    "ratio": {"type": "float"},
    "metric": {"type": "boolean"},
    "note": {"type": "any"},
}
RENDER_TOOLS = [
    {"name": "get_weather", "parameters": {"type": "dict", "properties": _WEATHER_PARAMETERS}},
    {"name": "math.hypot", "parameters": {"type": "dict", "properties": {"xs": {"type": "array"}}}},
    {"name": "f", "parameters": {"type": "dict", "properties": {"s": {"type": "string"}}}},
]
RENDER_CALLS = [
    Call("get_weather", {"city": "Paris", "days": 3, "ratio": 0.5, "metric": True, "note": None}),
    Call("math.hypot", {"xs": [1, -2.5, 1e300], "opts": {"a": {"b": [True, "x"]}}}),
    Call("noop", {}),
]


@pytest.mark.parametrize("fmt", NATIVE_FORMATS)
def test_native_renderings_round_trip_with_the_tools(fmt: str) -> None:
    assert decode(render(RENDER_CALLS, fmt), tools=RENDER_TOOLS) == RENDER_CALLS
    assert decode(render(RENDER_CALLS[:1], fmt), tools=RENDER_TOOLS) == RENDER_CALLS[:1]
    numbers_as_text = [Call("f", {"s": "42"})]
    assert decode(render(numbers_as_text, fmt), tools=RENDER_TOOLS) == numbers_as_text


@pytest.mark.parametrize("fmt", NATIVE_FORMATS)
def test_native_renderings_keep_markers_in_values(fmt: str) -> None:
    tricky = [Call("f", {"s": "<tool_call> [TOOL_CALLS] <|call|> <|python_end|> <tool_call|> ' \" \\ \n é"})]
    assert decode(render(tricky, fmt), tools=RENDER_TOOLS) == tricky
