"""Response rows for tests that seed a store: written as the column mappings they are stored as."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from subnet.validator.rows import Outcome, ResponseRow

_KEYS = ("round_id", "task_id", "hotkey", "uid")


def response_row(columns: Mapping[str, Any]) -> ResponseRow:
    """The row whose ``columns()`` are ``columns`` (an outcome's defaults filling the rest)."""
    outcome = {name: value for name, value in columns.items() if name not in _KEYS}
    outcome.setdefault("latency_s", 0.0)
    return ResponseRow(*(columns[name] for name in _KEYS), Outcome(**outcome))
