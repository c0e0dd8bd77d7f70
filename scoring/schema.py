"""JSON-schema type names as the scorer reads them, and the function schema inside an offered tool.

One table for all of scoring: BFCL's type names (``dict``, ``float``, ``tuple``, ``any``) beside
JSON Schema's (``object``, ``number``, ``array``), with its views: BFCL's names written as JSON
Schema's (``SCHEMA_TYPE_ALIASES``), and JSON Schema's names alone (``JSON_SCHEMA_TYPES``). Other
layers that type values by a schema, or unwrap a tool's function, read them from here, at the top
of their modules: ``import scoring`` loads this module and the value types, never the decoder or
the checker.
"""

from __future__ import annotations

from typing import Any

# Schema type name -> the Python type a value must have; None means any value is accepted.
SCHEMA_TYPES: dict[str, type | None] = {
    "string": str,
    "integer": int,
    "float": float,
    "number": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "object": dict,
    "any": None,
}
# The type names whose values may be ints too (at the top level), and those of lists.
FLOAT_TYPES = frozenset({"float", "number"})
LIST_TYPES = frozenset({"array", "tuple"})
# BFCL's and Python's type names -> the JSON Schema name of the same type, for writing a BFCL
# schema as an OpenAI tool (BFCL's ``any`` has no JSON Schema name: it drops its ``type``).
SCHEMA_TYPE_ALIASES: dict[str, str] = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "double": "number",
    "bool": "boolean",
    "int": "integer",
    "str": "string",
    "list": "array",
}
# JSON Schema's own names in SCHEMA_TYPES (no aliases, no ``any``) -> the Python types a JSON
# value of that type may have: a number may be written as an int.
JSON_SCHEMA_TYPES: dict[str, tuple[type, ...]] = {
    name: (int, float) if name in FLOAT_TYPES else (py_type,)
    for name, py_type in SCHEMA_TYPES.items()
    if py_type is not None and name not in SCHEMA_TYPE_ALIASES
}
# The scalar entries of SCHEMA_TYPES: schema type name -> str, int, float or bool. The checks'
# inline paths for scalars read one of these with a single lookup.
SCALAR_SCHEMA_TYPES: dict[str, type] = {
    name: py_type for name, py_type in SCHEMA_TYPES.items() if py_type in (str, int, float, bool)
}


def function_of(tool: Any) -> Any:
    """The function schema of an offered tool: the ``function`` of an OpenAI tool
    (``{"type": "function", "function": {...}}``), else the tool itself (a BFCL schema)."""
    if isinstance(tool, dict):
        function = tool.get("function")
        if isinstance(function, dict):
            return function
    return tool
