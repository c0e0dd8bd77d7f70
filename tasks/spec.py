"""Tool specifications: typed parameters, request templates, and their OpenAI schema form.

A ``ToolSpec`` is the library's description of one tool: what it does, its parameters (each
with a BFCL type and a value generator), and how people ask for it. ``openai_tool`` turns a
spec into the OpenAI tool dict that miners see.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from tasks.value_generators import ValueGen

#: The longest request, in characters, that a rewording may be (requests with context, facts and
#: decoys, run long); the generator keeps its own requests within it.
MAX_REQUEST_CHARS = 2000

__all__ = ["BFCL_TYPES", "NO_DEFAULT", "Param", "ToolSpec", "openai_tool"]

#: Every BFCL parameter type, mapped to its JSON-schema spelling in an OpenAI tool
#: ("any" has none: a JSON schema without "type" accepts every value).
BFCL_TYPES: dict[str, str] = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "boolean": "boolean",
    "array": "array",
    "tuple": "array",
    "dict": "object",
    "any": "",
}


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True, eq=False)
class Param:
    """One parameter: BFCL type, description, value generator, and optionality."""

    name: str
    type: str
    description: str
    gen: ValueGen
    required: bool = True
    default: Any = NO_DEFAULT
    enum: tuple[Any, ...] | None = None
    #: Extra JSON-schema keys (items, properties, ...) for arrays, tuples and objects.
    schema: dict[str, Any] = field(default_factory=dict)

    def property_schema(self) -> dict[str, Any]:
        json_type = BFCL_TYPES[self.type]
        prop: dict[str, Any] = {"type": json_type} if json_type else {}
        prop["description"] = self.description
        if self.enum is not None:
            prop["enum"] = list(self.enum)
        if self.default is not NO_DEFAULT:
            prop["default"] = self.default
        prop.update(self.schema)
        return prop


@dataclass(frozen=True, eq=False)
class ToolSpec:
    """A library tool: name, domain, description, parameters and colloquial request templates.

    ``conflicts`` names capabilities the tool shares with tools elsewhere in the library (two
    tools that could both serve one request); such tools are never each other's distractors and
    never stand in for each other in irrelevance tasks.
    """

    name: str
    domain: str
    description: str
    params: tuple[Param, ...]
    templates: tuple[str, ...]
    conflicts: tuple[str, ...] = ()

    def param(self, name: str) -> Param:
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(name)


@cache
def template_fields(template: str) -> tuple[str, ...]:
    """The placeholder names in a request template, in order."""
    return tuple(name for _, name, _, _ in string.Formatter().parse(template) if name)


@cache
def _openai_tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": {
                "type": "object",
                "properties": {param.name: param.property_schema() for param in spec.params},
                "required": [param.name for param in spec.params if param.required],
            },
        },
    }


def openai_tool(spec: ToolSpec) -> dict[str, Any]:
    """The OpenAI tool dict for a spec. Shared and cached: callers must not mutate it."""
    return _openai_tool(spec)
