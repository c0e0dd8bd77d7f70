"""tasks.rewrite: every offered description is reworded per task, keeping its meaning."""

from __future__ import annotations

import re
from random import Random

import pytest

from tasks import generate
from tasks.library import tools
from tasks.rewrite import RULE_SETS, rewrite_text, rewrite_tool
from tasks.spec import openai_tool


def _texts() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for spec in tools():
        found.append((spec.description, "tool"))
        found += [(param.description, "param") for param in spec.params]
    return found


def _phrase_words() -> set[str]:
    return {
        word
        for rules in RULE_SETS
        for group in rules.phrases
        for phrase in group
        for word in re.findall(r"[a-z0-9]+", phrase.lower())
    }


def test_rule_sets_are_named_once_and_every_frame_fills() -> None:
    names = [rules.name for rules in RULE_SETS]
    assert len(names) == len(set(names)) >= 4
    for rules in RULE_SETS:
        for frame in (*rules.tool_frames, *rules.param_frames):
            assert frame.format(C="X y", l="x y").strip()


def test_every_library_description_is_reworded_and_never_given_back() -> None:
    rng = Random("reword")
    for text, role in _texts():
        for _ in range(6):
            out = rewrite_text(text, role, rng)
            assert out and out != text, text


def test_rewording_keeps_the_words_that_carry_the_meaning() -> None:
    """Words outside every phrase group (the nouns that say what a tool is about) all stay."""
    swappable = _phrase_words()
    rng = Random("meaning")
    for text, role in _texts():
        kept = {word for word in re.findall(r"[a-z0-9]+", text.lower()) if word not in swappable}
        out = rewrite_text(text, role, rng).lower()
        missing = {word for word in kept if not re.search(rf"\b{re.escape(word)}\b", out)}
        assert not missing, (text, out)


def test_distinct_tools_keep_distinct_descriptions() -> None:
    rng = Random("distinct")
    reworded = [rewrite_tool(openai_tool(spec), rng)["function"]["description"] for spec in tools()]
    assert len(set(reworded)) == len(reworded)


def test_rewording_is_seeded_and_leaves_the_tool_dict_untouched() -> None:
    tool = openai_tool(tools()[0])
    before = repr(tool)
    first = rewrite_tool(tool, Random(5))
    assert first == rewrite_tool(tool, Random(5))
    assert repr(tool) == before
    assert first["function"]["name"] == tool["function"]["name"]
    assert first["function"]["parameters"]["required"] == tool["function"]["parameters"]["required"]


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_descriptions_stay_empty(text: str) -> None:
    assert rewrite_text(text, "param", Random(1)) == text


def test_no_offered_tool_keeps_a_library_description() -> None:
    library = {text for text, _ in _texts()}
    for task in generate("reworded", 300):
        for tool in task.tools:
            function = tool["function"]
            assert function["description"] not in library
            for prop in function["parameters"]["properties"].values():
                assert prop.get("description") not in library, prop


def test_nested_field_descriptions_are_reworded_too() -> None:
    from tasks.library import by_name

    tool = openai_tool(by_name()["create_event"])
    reworded = rewrite_tool(tool, Random(2))
    fields = tool["function"]["parameters"]["properties"]["reminder"]["properties"]
    new_fields = reworded["function"]["parameters"]["properties"]["reminder"]["properties"]
    assert set(fields) == set(new_fields)
    assert all(new_fields[key]["description"] != fields[key]["description"] for key in fields)


def _case_variants() -> list[str]:
    texts = [text for text, _ in _texts() if text.strip()]
    # Capitals, title case, and text that is not ASCII (lowering it may change its length, and
    # IGNORECASE matches the Kelvin sign as a "k"): the lower-case fast path must find the same.
    return [
        *texts,
        *(text.upper() for text in texts),
        *(text.title() for text in texts),
        *(f"Café: {text}" for text in texts[:40]),
        *(f"\u0130stanbul: {text}" for text in texts[:40]),
        *(text.replace("k", "\u212a") for text in texts[:40]),
    ]


def test_phrases_are_found_as_the_case_insensitive_pattern_finds_them() -> None:
    from tasks.rewrite import _matches, _phrase_tables

    for table in _phrase_tables():
        pattern, _, groups = table
        assert pattern is not None
        for text in _case_variants():
            expected = [(m.start(), m.end(), groups[m.group(0).lower()]) for m in pattern.finditer(text)]
            assert _matches(table, text) == expected, text


def test_an_offered_plan_shuffles_as_the_reworded_tool_dict_does() -> None:
    """``_offered_plan`` rewords without building the reworded dict: same draws, same surface."""
    from tasks.distractors import lookalikes
    from tasks.shuffle import shuffle_planned, shuffle_surface
    from tasks.synth import draw_synth
    from tasks.task_sets import _offered_plan

    specs = list(tools())
    specs += [draw_synth(Random(index)) for index in range(40)]
    specs += lookalikes(tuple(tools()[:12]), 30, Random(3))
    for index, spec in enumerate(specs):
        via_dict, planned = Random(index), Random(index)
        expected = shuffle_surface([rewrite_tool(openai_tool(spec), via_dict)], [], via_dict)
        assert shuffle_planned([_offered_plan(spec, planned)], [], planned) == expected, spec.name
        assert via_dict.random() == planned.random()
