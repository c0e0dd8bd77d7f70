"""JSON-schema type names as the scorer reads them, and the function schema inside an offered tool.

One table for all of scoring: BFCL's type names (``dict``, ``float``, ``tuple``, ``any``) beside
JSON Schema's (``object``, ``number``, ``array``). Other layers that type values by a schema
should read it from here.
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
