"""The builtin tool library: size, coverage of domains and BFCL types, and template quality."""

from __future__ import annotations

from random import Random

import pytest

from tasks.builtin import instantiate
from tasks.library import by_domain, by_name, tools
from tasks.spec import BFCL_TYPES, NO_DEFAULT, openai_tool, template_fields
from tasks.value_generators import Records

CODING_AGENT_TOOLS = (
    "read_file",
    "list_files",
    "run_shell",
    "run_tests",
    "apply_patch",
    "git_diff",
    "remember",
    "retrieve_memory",
    "cron_create",
    "message_send",
    "clarify",
    "escalate",
)
VEHICLE_TOOLS = ("set_autopilot", "control_camera", "calibrate_sensors")


def test_library_is_large_and_spans_domains() -> None:
    assert len(tools()) >= 60
    assert len(by_domain()) >= 12
    assert len(by_name()) == len(tools()), "tool names must be unique"
    for name in (*CODING_AGENT_TOOLS, *VEHICLE_TOOLS):
        assert name in by_name(), name


def test_every_bfcl_type_and_optional_defaults_are_covered() -> None:
    params = [param for tool in tools() for param in tool.params]
    assert {param.type for param in params} == set(BFCL_TYPES)
    assert any(not p.required and p.default is not NO_DEFAULT for p in params)
    assert any(not p.required and p.default is NO_DEFAULT for p in params)
    assert any(p.enum for p in params)
    arrays = [p for p in params if p.type == "array"]
    assert any(p.schema["items"]["type"] == "object" for p in arrays), "an array of objects"
    assert any(p.schema["items"]["type"] != "object" for p in arrays), "an array of scalars"
    assert any(isinstance(p.gen, Records) for p in arrays)


@pytest.mark.parametrize("tool", tools(), ids=lambda tool: tool.name)
def test_templates_are_many_complete_and_colloquial(tool) -> None:
    assert len(tool.templates) >= 4
    names = {param.name for param in tool.params}
    required = {param.name for param in tool.params if param.required}
    spaced = tool.name.replace("_", " ")
    for template in tool.templates:
        fields = set(template_fields(template))
        assert fields <= names, f"unknown placeholder in {template!r}"
        assert required <= fields, f"{template!r} misses a required value"
        literal = template.lower()
        assert tool.name not in literal and spaced not in literal, f"{template!r} mirrors the tool name"
    for param in tool.params:
        assert any(param.name in template_fields(t) for t in tool.templates) or not param.required


@pytest.mark.parametrize("tool", tools(), ids=lambda tool: tool.name)
def test_schema_and_drawn_values_agree(tool) -> None:
    schema = openai_tool(tool)["function"]["parameters"]
    assert set(schema["required"]) <= set(schema["properties"])
    rng = Random(tool.name)
    for template in tool.templates:
        for _ in range(20):
            instance = instantiate(tool, rng, template)
            assert "{" not in instance.text.replace("{'", "")
            (args,) = instance.call.values()
            for name, accepted in args.items():
                prop = schema["properties"][name]
                enum = prop.get("enum")
                if enum is not None:
                    assert all(value in enum for value in accepted if value != ""), (name, accepted)
