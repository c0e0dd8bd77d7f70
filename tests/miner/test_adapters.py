"""Output adapters: recorded outputs of each model family read into OpenAI tool calls; prompts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scoring import Call
from scoring.rendering import render
from subnet.miner.adapters import (
    ADAPTERS,
    DEFAULT_FORMAT,
    MODEL_FORMATS,
    forced_function,
    format_for_template,
    native_format,
    native_history,
    template_takes_tools,
    text_history,
)

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
READ_FILE = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file of the repository.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
}

Expected = list[tuple[str, dict[str, Any]]]

# (format, what the model wrote, the calls it means). Samples follow each family's format, as in
# its model card: Qwen/Hermes/HRM tags, BitAgent's BFCL list, BusyBeaver's strict JSON policy
# action, Llama-3.1 / Mistral JSON, CodeActAgent's <execute> blocks and python fences.
RECORDED: list[tuple[str, str, Expected]] = [
    (
        "hermes",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}'
        "\n</tool_call>",
        [("get_weather", {"city": "Paris", "unit": "celsius"})],
    ),
    (
        "hermes",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n</tool_call>',
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})],
    ),
    (
        "hermes",
        "<think>\nThe user wants the weather in Berlin, so I call get_weather.\n</think>\n\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Berlin"}}\n</tool_call>',
        [("get_weather", {"city": "Berlin"})],
    ),
    (
        "pythonic",
        "[get_weather(city='Paris', unit='celsius')]",
        [("get_weather", {"city": "Paris", "unit": "celsius"})],
    ),
    (
        "pythonic",
        '[get_weather(city="Paris"), get_weather(city="Tokyo", unit="fahrenheit")]',
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo", "unit": "fahrenheit"})],
    ),
    ("pythonic", "```python\n[get_weather(city='Rome')]\n```", [("get_weather", {"city": "Rome"})]),
    (
        "json",
        '{"tool":"read_file","args":{"path":"src/parser.py"},"confidence":0.97,'
        '"state_update":"Read the referenced file before editing."}',
        [("read_file", {"path": "src/parser.py"})],
    ),
    (
        "json",
        '{"name": "get_weather", "parameters": {"city": "Paris"}}',
        [("get_weather", {"city": "Paris"})],
    ),
    (
        "json",
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_weather", "arguments": {"city": "Lima"}}]',
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Lima"})],
    ),
    (
        "json",
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}<|eom_id|>',
        [("get_weather", {"city": "Oslo"})],
    ),
    (
        "codeact",
        'I will look up the weather first.\n<execute>\nget_weather(city="Paris")\n</execute>',
        [("get_weather", {"city": "Paris"})],
    ),
    (
        "codeact",
        "```python\nget_weather(city='Paris')\nget_weather(city='Tokyo', unit='celsius')\n```",
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo", "unit": "celsius"})],
    ),
]

# Answers that hold no call: returned as content, as written (reasoning stripped).
NO_CALL: list[tuple[str, str]] = [
    ("hermes", "None of the available functions can book a restaurant table."),
    ("pythonic", "The question lacks the city parameter required by get_weather."),
    ("json", "I cannot answer that with these tools."),
    ("codeact", "There is nothing to run: no function fits this request."),
    # Code that would do harm if run: it is not a call list, so it is only text.
    ("codeact", "```python\nimport os\nos.remove('/etc/passwd')\n```"),
    ("pythonic", "[__import__('os').system('rm -rf /')]"),
]


def _calls(tool_calls: list[dict[str, Any]] | None) -> Expected:
    assert tool_calls is not None
    return [(call["function"]["name"], json.loads(call["function"]["arguments"])) for call in tool_calls]


@pytest.mark.parametrize(("fmt", "text", "expected"), RECORDED)
def test_each_family_output_reads_as_openai_tool_calls(fmt: str, text: str, expected: Expected) -> None:
    answer = ADAPTERS[fmt].read(text)
    assert answer.content is None
    assert _calls(answer.tool_calls) == expected
    assert all(call["type"] == "function" and call["id"] for call in answer.tool_calls or [])


@pytest.mark.parametrize(("fmt", "text"), NO_CALL)
def test_text_without_a_call_is_content(fmt: str, text: str) -> None:
    answer = ADAPTERS[fmt].read(text)
    assert answer.tool_calls is None
    assert answer.content == text


def test_reasoning_is_stripped_from_content() -> None:
    answer = ADAPTERS["hermes"].read("<think>no tool fits</think>\nI cannot do that.")
    assert answer.tool_calls is None
    assert answer.content == "I cannot do that."


def test_tool_choice_none_keeps_calls_as_text() -> None:
    text = "[get_weather(city='Paris')]"
    assert ADAPTERS["pythonic"].read(text, allow_calls=False).content == text


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{% for tool in tools %}{{ tool | tojson }}{% endfor %}<tool_call>", "hermes"),
        ("[TOOL_CALLS] {{ tools }}", "mistral"),
        (
            'Respond in the format {"name": function name, '
            '"parameters": dictionary of argument name and its value}',
            "llama3",
        ),
        ("you MUST put it in the format of [func_name1(params_name1=params_value1)]", "pythonic"),
        ("Wrap code in <execute> tags", "codeact"),
    ],
)
def test_auto_picks_the_templates_own_format(template: str, expected: str) -> None:
    assert native_format(template) == expected
    assert format_for_template("auto", template).name == expected


def test_auto_without_a_known_format_uses_the_default_and_explicit_wins() -> None:
    chatml = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}"
    assert format_for_template("auto", chatml).name == DEFAULT_FORMAT
    assert format_for_template("auto", None).name == DEFAULT_FORMAT
    assert format_for_template("json", "<tool_call>").name == "json"
    assert not template_takes_tools(chatml)
    assert template_takes_tools("{% if tools %}x{% endif %}")
    with pytest.raises(ValueError, match="unknown model format"):
        format_for_template("yaml", None)


@pytest.mark.parametrize("fmt", sorted(ADAPTERS))
def test_system_prompt_describes_every_tool_and_the_answer_form(fmt: str) -> None:
    prompt = ADAPTERS[fmt].system_prompt([WEATHER, READ_FILE])
    assert "get_weather" in prompt and "read_file" in prompt and "city" in prompt
    marker = {
        "hermes": "<tool_call>",
        "pythonic": "[func_name(",
        "json": '"arguments"',
        "codeact": "```python",
    }.get(fmt, ADAPTERS[fmt].forced_prefix(None))  # a native family shows its own call's start
    assert marker in prompt


@pytest.mark.parametrize("fmt", sorted(ADAPTERS))
def test_a_forced_answer_completed_by_the_model_reads_back(fmt: str) -> None:
    # What a model writes after the forced prefix, in each format.
    completions = {
        "hermes": '{"city": "Paris"}}\n</tool_call>',
        "pythonic": 'city="Paris")]',
        "json": '{"city": "Paris"}}',
        "codeact": 'city="Paris")\n```',
        "qwen3_coder": "<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        "llama3": '{"city": "Paris"}}',
        "llama4": 'city="Paris")]<|python_end|>',
        "mistral": '{"city": "Paris"}',
        "deepseek": '{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        "deepseek_dsml": (
            '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>'
        ),
        "deepseek_dsml_v41": (
            '<｜DSML｜ parameter name="city" string="true">Paris</｜DSML｜ parameter>\n</｜DSML｜ invoke>'
        ),
        "kimi": '{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>',
        "kimi_k3": '<|open|>argument key="city"<|sep|>Paris<|close|>argument<|sep|><|close|>call',
        "glm": "<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
        "gemma4": 'city:<|"|>Paris<|"|>}<tool_call|>',
        "harmony": '{"city": "Paris"}<|call|>',
    }
    adapter = ADAPTERS[fmt]
    answer = adapter.read(adapter.forced_prefix("get_weather") + completions[fmt])
    assert _calls(answer.tool_calls) == [("get_weather", {"city": "Paris"})]


def test_forced_function_follows_openai_tool_choice() -> None:
    named = {"type": "function", "function": {"name": "read_file"}}
    assert forced_function(named, [WEATHER, READ_FILE]) == (True, "read_file")
    assert forced_function("required", [WEATHER]) == (True, "get_weather")
    assert forced_function("required", [WEATHER, READ_FILE]) == (True, None)
    assert forced_function("auto", [WEATHER]) == (False, None)
    assert forced_function(None, [WEATHER]) == (False, None)


def _history() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "name": "get_weather", "content": '{"temp": 21}'},
        {"role": "user", "content": [{"type": "text", "text": "And in Tokyo?"}]},
    ]


@pytest.mark.parametrize("fmt", sorted(ADAPTERS))
def test_text_history_writes_calls_and_results_in_the_format(fmt: str) -> None:
    messages = text_history(ADAPTERS[fmt], _history(), [WEATHER])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "user"]
    assert messages[0]["content"].startswith("Be brief.")
    assert "get_weather" in messages[0]["content"]
    assert all(isinstance(m["content"], str) for m in messages)
    # The assistant turn reads back as the call it was.
    assert _calls(ADAPTERS[fmt].read(messages[2]["content"]).tool_calls) == [
        ("get_weather", {"city": "Paris"})
    ]
    assert '{"temp": 21}' in messages[3]["content"]
    assert messages[4]["content"] == "And in Tokyo?"


def test_text_history_without_tools_adds_no_prompt() -> None:
    messages = text_history(ADAPTERS["hermes"], [{"role": "user", "content": "hi"}], [])
    assert messages == [{"role": "user", "content": "hi"}]


def test_native_history_gives_templates_argument_objects() -> None:
    messages = native_history(_history())
    assert messages[2]["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}
    assert "content" not in messages[2]
    assert messages[4]["content"] == "And in Tokyo?"


@pytest.mark.parametrize("fmt", sorted(ADAPTERS))
def test_engine_markers_are_read_whatever_the_format(fmt: str) -> None:
    text = '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    assert _calls(ADAPTERS[fmt].read(text).tool_calls) == [("get_weather", {"city": "Paris"})]


# --- the native markup of every open model family -------------------------------------------------

# Excerpts of each family's chat template: the part that renders an assistant's tool calls (and
# the tools), written from the family's documented format.
FAMILY_TEMPLATES = {
    "hermes": (
        "<tools>{% for tool in tools %}{{ tool | tojson }}{% endfor %}</tools> For each function call, "
        'return <tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    ),
    "qwen3_coder": (
        "{% for tc in message.tool_calls %}<tool_call>\n<function={{ tc.function.name }}>\n"
        "{% for k, v in tc.function.arguments.items() %}<parameter={{ k }}>\n{{ v }}\n</parameter>\n"
        "{% endfor %}</function>\n</tool_call>{% endfor %}"
    ),
    "glm": (
        "{% for tc in m.tool_calls %}<tool_call>{{ tc.function.name }}\n{% for k, v in tc.function.arguments"
        ".items() %}<arg_key>{{ k }}</arg_key>\n<arg_value>{{ v }}</arg_value>\n{% endfor %}"
        "</tool_call>{% endfor %}"
    ),
    "kimi": (
        "<|tool_calls_section_begin|>{% for tc in message.tool_calls %}<|tool_call_begin|>{{ tc.id }}"
        "<|tool_call_argument_begin|>{{ tc.function.arguments }}<|tool_call_end|>{% endfor %}"
        "<|tool_calls_section_end|>"
    ),
    "deepseek": (
        "{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['function']['name'] + "
        "'<｜tool▁sep｜>' + tool['function']['arguments'] + '<｜tool▁call▁end｜>'}}"
    ),
    "deepseek_dsml": (
        '<｜DSML｜function_calls>{% for tc in tool_calls %}<｜DSML｜invoke name="{{ tc.name }}">'
        '{% for k, v in tc.arguments.items() %}<｜DSML｜parameter name="{{ k }}" string="true">{{ v }}'
        "</｜DSML｜parameter>{% endfor %}</｜DSML｜invoke>{% endfor %}</｜DSML｜function_calls>"
    ),
    "harmony": (
        "{{- '<|start|>assistant to=functions.' + tool_call.name + '<|channel|>commentary json<|message|>' "
        "+ tool_call.arguments|tojson + '<|call|>' }}{{- '<|start|>assistant<|channel|>final<|message|>' }}"
    ),
    "gemma4": (
        "{% for tc in message.tool_calls %}<|tool_call>call:{{ tc.function.name }}{...}<tool_call|>"
        "{% endfor %}"
    ),
    "llama4": (
        "<|python_start|>{% for tc in message.tool_calls %}{{ tc.function.name }}(...){% endfor %}"
        "<|python_end|>"
    ),
    "llama3": "Environment: ipython\n{{- '<|python_tag|>' + tool_call.name + '.call(' }}",
    "mistral": (
        "[AVAILABLE_TOOLS]{{ tools|tojson }}[/AVAILABLE_TOOLS]{% for tc in tool_calls %}"
        "[TOOL_CALLS]{{ tc.name }}[ARGS]{{ tc.arguments }}{% endfor %}"
    ),
}


@pytest.mark.parametrize("family", list(FAMILY_TEMPLATES))
def test_auto_picks_each_familys_format_from_its_template(family: str) -> None:
    assert native_format(FAMILY_TEMPLATES[family]) == family
    assert format_for_template("auto", FAMILY_TEMPLATES[family]).name == family


NATIVE = [name for name in ADAPTERS if name not in ("hermes", "pythonic", "json", "codeact")]
READ_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]  # fmt: skip


@pytest.mark.parametrize("family", NATIVE)
def test_each_family_answer_becomes_tool_calls_and_its_words_content(family: str) -> None:
    call = render([Call("get_weather", {"city": "Paris", "days": 3})], family)
    text = f"<think>The weather tool fits.</think>\nLet me look that up.\n{call}\nBack soon."
    answer = ADAPTERS[family].read(text, tools=READ_TOOLS)
    assert answer.tool_calls is not None
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in answer.tool_calls] == [
        ("get_weather", {"city": "Paris", "days": 3})
    ]
    assert answer.content == "Let me look that up.\nBack soon."  # no marker, no reasoning


@pytest.mark.parametrize("family", NATIVE)
def test_a_forced_call_starts_as_the_family_writes_one(family: str) -> None:
    adapter = ADAPTERS[family]
    rendered = str(render([Call("get_weather", {"city": "Paris"})], family))
    assert rendered.startswith(adapter.forced_prefix("get_weather"))
    assert adapter.forced_prefix("get_weather").startswith(adapter.forced_prefix(None))
    assert adapter.keeps_special_tokens


def test_a_harmony_answer_without_a_call_is_its_final_text() -> None:
    text = (
        "<|channel|>analysis<|message|>Nothing fits.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>I cannot do that.<|return|>"
    )
    answer = ADAPTERS["harmony"].read(text, tools=READ_TOOLS)
    assert (answer.tool_calls, answer.content) == (None, "I cannot do that.")


def test_the_flag_offers_every_adapter() -> None:
    from subnet import config

    assert config.MODEL_FORMATS == MODEL_FORMATS
