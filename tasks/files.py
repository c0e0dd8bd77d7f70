"""Reading the files of external task and episode sources: JSON lines, BFCL's function schemas.

Shared by the single-turn loaders (``tasks.sources``) and BFCL's multi-turn one
(``tasks.episodes.bfcl``); a missing or malformed file is a ``SourceFileError`` naming the file
and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scoring.schema import SCHEMA_TYPE_ALIASES
from tasks.errors import SourceFileError

__all__ = ["json_lines", "openai_schema"]


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, record) for each non-blank line of a JSON-lines file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SourceFileError(str(path), "file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SourceFileError(str(path), f"cannot read: {error}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as error:
            raise SourceFileError(str(path), f"not valid JSON ({error.msg})", number) from None


def openai_schema(schema: Any) -> Any:
    """BFCL type names -> JSON-schema ones, recursively; ``any`` loses its type (accepts all)."""
    if isinstance(schema, list):
        return [openai_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            if value == "any":
                continue
            out[key] = SCHEMA_TYPE_ALIASES.get(value, value)
        elif key in ("properties",) and isinstance(value, dict):
            out[key] = {name: openai_schema(prop) for name, prop in value.items()}
        elif key in ("items", "parameters"):
            out[key] = openai_schema(value)
        else:
            out[key] = value
    return out
