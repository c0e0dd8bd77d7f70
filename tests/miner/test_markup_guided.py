"""Guided calls in each family's own markup (xgrammar structural tags built from the format
registry's `CallMarkup`): the grammar takes what the family's own writer writes, the forced
prefixes the adapters put in the prompt, and a guide near its budget can always close a call,
even inside a free-text XML value. No model here: tests/miner/test_guided_validity.py decodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tasks
from scoring.formats import REGISTRY
from scoring.formats.reading import typed_value
from scoring.model import Call
from subnet.miner import ModelOptions, build_backend
from subnet.miner.base import ModelLoadError
from subnet.miner.guided import GUIDED_FORMATS, CallGrammar, closing_text, markup_formats
from tasks.answers import reference_calls
from tests.support.grammar import text_matcher

TASKS = [task for task in tasks.generate("markup-guided", 60) if reference_calls(task.expected)]
MARKUP = sorted(markup_formats())


def _in_schema_order(task: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments in the order the schema declares them (xgrammar keeps that order, as the
    engines' structural tags do)."""
    function = next(tool["function"] for tool in task.tools if tool["function"]["name"] == name)
    order = list(function.get("parameters", {}).get("properties", {}))
    return {key: arguments[key] for key in sorted(arguments, key=order.index)}


def test_every_family_with_markup_is_guided() -> None:
    # the families the issue names, each in its own markup (not in the miner's own grammars)
    for name in ("qwen3_coder", "glm", "deepseek_dsml", "deepseek_dsml_v41", "kimi", "kimi_k3", "harmony"):
        assert name in MARKUP
    assert not set(MARKUP) & set(GUIDED_FORMATS)


@pytest.mark.parametrize("format_name", MARKUP)
def test_the_grammar_takes_the_familys_own_answers(format_name: str) -> None:
    family = REGISTRY[format_name]
    taken = 0
    for task in TASKS:
        grammar = CallGrammar.build(format_name, task.tools)
        assert grammar is not None
        calls = [
            Call(name, _in_schema_order(task, name, args)) for name, args in reference_calls(task.expected)
        ]
        text = family.render(calls)
        assert isinstance(text, str)
        matcher = text_matcher(grammar.ebnf)
        assert matcher.accept_string(text) and matcher.is_completed(), text
        taken += 1
    assert taken >= 40


@pytest.mark.parametrize("format_name", MARKUP)
def test_the_forced_prefixes_start_a_call_the_grammar_takes(format_name: str) -> None:
    prompting = REGISTRY[format_name].prompting
    assert prompting is not None
    task = TASKS[0]
    name = task.tools[0]["function"]["name"]
    for prefix, only in ((prompting.forced_prefix(None), None), (prompting.forced_prefix(name), name)):
        grammar = CallGrammar.build(format_name, task.tools, only=only)
        assert grammar is not None
        assert text_matcher(grammar.ebnf).accept_string(prefix), prefix


@pytest.mark.parametrize("format_name", MARKUP)
def test_a_call_can_be_closed_from_inside_any_value(format_name: str) -> None:
    """Near its budget the guide writes the closing text; inside a free-text value (XML) no
    single character ends it, so the family's end tags do, also after a half-written one."""
    prompting = REGISTRY[format_name].prompting
    assert prompting is not None
    task = TASKS[1]
    grammar = CallGrammar.build(format_name, task.tools)
    assert grammar is not None
    exits = [text.encode() for text in grammar.exits]
    answer = REGISTRY[format_name].render(
        [Call(name, _in_schema_order(task, name, args)) for name, args in reference_calls(task.expected)]
    )
    assert isinstance(answer, str)
    for cut in range(len(prompting.forced_prefix(None)), len(answer), 7):
        matcher = text_matcher(grammar.ebnf)
        assert matcher.accept_string(answer[:cut])
        closing = closing_text(matcher, exits=exits)
        assert closing is not None, answer[:cut]
        assert matcher.accept_string(closing) and matcher.is_completed(), (answer[:cut], closing)


def test_half_an_end_tag_is_finished_not_started_again() -> None:
    def first_is_text(tool: dict[str, Any]) -> bool:  # its first argument (schema order) a string
        properties = tool["function"]["parameters"].get("properties", {})
        return bool(properties) and next(iter(properties.values())).get("type") == "string"

    task = next(task for task in TASKS if first_is_text(task.tools[0]))
    grammar = CallGrammar.build("glm", task.tools)
    assert grammar is not None
    function = task.tools[0]["function"]
    key = next(iter(function["parameters"]["properties"]))
    matcher = text_matcher(grammar.ebnf)
    assert matcher.accept_string(f"<tool_call>{function['name']}\n<arg_key>{key}</arg_key><arg_value>x</")
    closing = closing_text(matcher, exits=[text.encode() for text in grammar.exits])
    assert closing is not None and closing.startswith("arg_value>")


def test_a_padded_enum_value_reads_as_the_value() -> None:
    # XML markup allows blanks around a value; the schema says which value they pad
    schema = {"type": "string", "enum": ["on", "dim", "off"]}
    assert typed_value("\tdim\n", schema) == "dim"
    assert typed_value(" bright ", schema) == " bright "  # not a value of the enum: as written
    assert typed_value(" free text ", {"type": "string"}) == " free text "


def test_values_copied_from_the_request_are_refused_in_a_familys_markup(tiny_model_dir: Path) -> None:
    # --model.guided forced|grounded copy values through the miner's own grammars only
    backend = build_backend(ModelOptions(path=str(tiny_model_dir), guided="forced", format="glm"))
    with pytest.raises(ModelLoadError, match="guided in its own markup"):
        import asyncio

        asyncio.run(backend.start())


def test_a_number_is_written_without_an_exponent() -> None:
    # 104E20205 reads back as infinity, which no schema accepts; bounds keep xgrammar to decimals
    tools = [
        {
            "type": "function",
            "function": {
                "name": "pay",
                "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}},
            },
        }
    ]
    grammar = CallGrammar.build("glm", tools)
    assert grammar is not None
    head = "<tool_call>pay\n<arg_key>amount</arg_key><arg_value>"
    for value, taken in (("12.5", True), ("104E20205", False), ("1e5", False)):
        matcher = text_matcher(grammar.ebnf)
        assert matcher.accept_string(head)
        assert (matcher.accept_string(value + "</arg_value></tool_call>") and matcher.is_completed()) is taken
