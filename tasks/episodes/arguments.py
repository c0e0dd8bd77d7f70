"""Whether a call's arguments fit a tool's JSON schema: the runner's check of a miner's call before
it reaches the environment, and the generator's and the tool designs' check of their own plans.

Its own module, light (the scorer's schema tables only): generating episodes needs it, and
``import tasks.episodes`` loads neither the runner nor the decoder it plays answers with.
"""

from __future__ import annotations

from typing import Any

from scoring.schema import JSON_SCHEMA_TYPES

__all__ = ["schema_error"]


def _mistyped(value: Any, kinds: tuple[type, ...]) -> bool:
    return (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds)


def schema_error(arguments: Any, parameters: dict[str, Any]) -> str | None:
    """Why ``arguments`` do not fit a tool's JSON schema (top level: required keys, no unknown
    keys, JSON types, enums, the type of an array's items), or None.

    The JSON types are the scorer's (``scoring.schema.JSON_SCHEMA_TYPES``; a number may be an
    int)."""
    if not isinstance(arguments, dict):
        return "arguments are not an object"
    properties = parameters.get("properties") or {}
    for name in parameters.get("required") or ():
        if name not in arguments:
            return f"missing required parameter {name!r}"
    for name, value in arguments.items():
        spec = properties.get(name)
        if spec is None:
            return f"unknown parameter {str(name)[:60]!r}"
        kinds = JSON_SCHEMA_TYPES.get(str(spec.get("type", "")))
        if kinds is None:
            continue
        if _mistyped(value, kinds):
            return f"parameter {name!r} must be {spec['type']}"
        if "enum" in spec and value not in spec["enum"]:
            return f"parameter {name!r} must be one of {spec['enum']}"[:200]
        items = (
            JSON_SCHEMA_TYPES.get(str((spec.get("items") or {}).get("type", "")))
            if spec["type"] == "array"
            else None
        )
        if items is not None and any(
            (isinstance(item, bool) and bool not in items) or not isinstance(item, items) for item in value
        ):
            return f"items of parameter {name!r} must be {spec['items']['type']}"
    return None
