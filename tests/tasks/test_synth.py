"""tasks.synth: synthesised tools meet the library's standards and take their share of tasks."""

from __future__ import annotations

import keyword
import re
from random import Random

from tasks import generate
from tasks.builtin import instantiate
from tasks.library import by_name
from tasks.spec import BFCL_TYPES, openai_tool, template_fields
from tasks.synth import FAMILIES, draw_synth, is_synth, siblings, synth_tool


def _every_synth_tool() -> list:  # type: ignore[type-arg]
    return [
        synth_tool(family, action, thing)
        for family, entry in enumerate(FAMILIES)
        for action in range(len(entry.actions))
        for thing in range(len(entry.things))
    ]


def test_the_space_is_large_with_unique_valid_names_none_from_the_library() -> None:
    every = _every_synth_tool()
    assert len(every) >= 300
    names = [spec.name for spec in every]
    assert len(set(names)) == len(names)
    for name in names:
        assert re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name) and not keyword.iskeyword(name), name
        assert name not in by_name()
    assert len({entry.domain for entry in FAMILIES}) == len(FAMILIES)


def test_the_same_key_gives_the_same_tool_object() -> None:
    assert synth_tool(0, 1, 2) is synth_tool(0, 1, 2)
    assert is_synth(synth_tool(0, 1, 2)) and not any(is_synth(spec) for spec in by_name().values())


def test_schemas_use_nested_objects_arrays_and_enums() -> None:
    types = {param.type for spec in _every_synth_tool() for param in spec.params}
    assert {"dict", "array", "string", "integer", "float", "boolean"} <= types
    assert any(param.enum for spec in _every_synth_tool() for param in spec.params)
    assert any(
        "properties" in param.schema.get("items", {}) for spec in _every_synth_tool() for param in spec.params
    )


def test_templates_name_every_required_value_and_never_the_tool() -> None:
    for entry_index, entry in enumerate(FAMILIES):
        for action in range(len(entry.actions)):
            spec = synth_tool(entry_index, action, 0)
            assert len(spec.templates) >= 4
            names = {param.name for param in spec.params}
            required = {param.name for param in spec.params if param.required}
            for template in spec.templates:
                fields = set(template_fields(template))
                assert required <= fields <= names, template
                assert spec.name not in template and spec.name.replace("_", " ") not in template.lower()
            for param in spec.params:
                assert param.type in BFCL_TYPES


def test_drawn_values_fit_the_schema() -> None:
    rng = Random("synth-values")
    for _ in range(400):
        spec = draw_synth(rng)
        schema = openai_tool(spec)["function"]["parameters"]
        assert set(schema["required"]) <= set(schema["properties"])
        instance = instantiate(spec, rng)
        assert "{" not in instance.text and "<thing>" not in instance.text
        (args,) = instance.call.values()
        for name, accepted in args.items():
            enum = schema["properties"][name].get("enum")
            if enum is not None:
                assert all(value in enum for value in accepted if value != ""), (name, accepted)


def test_siblings_share_the_thing_and_differ_in_action() -> None:
    spec = synth_tool(0, 0, 5)
    near = siblings(spec)
    assert near and spec not in near
    thing = FAMILIES[0].things[5]
    assert all(thing in sibling.description for sibling in near)


def test_about_thirty_percent_of_gold_tools_are_synthesised() -> None:
    synthesised = {spec.name for spec in _every_synth_tool()}
    asked = [ask["tool"] for task in generate("synth-share", 1000) for ask in (task.intent or {})["asks"]]
    share = sum(name in synthesised for name in asked) / len(asked)
    assert 0.2 <= share <= 0.4, share


def test_tasks_on_synthesised_tools_are_solvable_in_every_format(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The oracle over tasks whose every gold tool is synthesised: the reference answer, in each
    model family's format, passes the checker on the task and on a miner's variant."""
    import tasks.categories as categories
    from scoring import Call
    from scoring.checking import check
    from scoring.rendering import FORMATS, render
    from tasks import variant
    from tasks.answers import reference_calls

    monkeypatch.setattr(categories, "SYNTH_SHARE", 1.0)
    generated = generate("synth-solvable", 300)
    synthesised = {spec.name for spec in _every_synth_tool()}
    asked = [ask["tool"] for task in generated for ask in (task.intent or {})["asks"]]
    # The rest ask for a lookalike of a synthesised tool (LOOKALIKE_GOLD_SHARE of multiple).
    assert sum(name in synthesised for name in asked) >= 0.9 * len(asked)
    for task in generated:
        for surface in (task, variant(task, b"miner")):
            calls = [Call(name, args) for name, args in reference_calls(surface.expected)]
            for fmt in FORMATS:
                output = render(calls, fmt) if calls else "I can't do that with these tools."
                verdict = check(output, surface.tools, surface.expected, surface.scoring_category)
                assert verdict.valid, (surface.id, fmt, verdict.error_type)


def test_same_seed_same_tools_descriptions_tasks_and_golds() -> None:
    first = [task.to_dict() for task in generate("synth-determinism", 300)]
    assert first == [task.to_dict() for task in generate("synth-determinism", 300)]
    assert first != [task.to_dict() for task in generate("synth-determinism-2", 300)]
