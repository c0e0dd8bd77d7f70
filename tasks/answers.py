"""Reference answers: one concrete call list picked from a BFCL possible answer.

The first acceptable value of every parameter is taken; ``""`` (may be omitted) as the first
value leaves the parameter out; nested dict answers (``{key: [acceptable...]}``) are resolved
the same way, recursively. Used for the fine-tuning export and the solvability tests.
"""

from __future__ import annotations

from typing import Any

__all__ = ["reference_calls"]


def _resolve(value: Any) -> Any:
    if isinstance(value, dict):
        resolved: dict[str, Any] = {}
        for key, acceptable in value.items():
            if isinstance(acceptable, list) and acceptable:
                if acceptable[0] == "":
                    continue
                resolved[key] = _resolve(acceptable[0])
            else:
                resolved[key] = acceptable
        return resolved
    if isinstance(value, list):
        return [_resolve(item) if isinstance(item, dict) else item for item in value]
    return value


def reference_calls(expected: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """``[(function_name, arguments)]``: the first acceptable value of each parameter."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for call in expected:
        for name, params in call.items():
            arguments: dict[str, Any] = {}
            for param, acceptable in params.items():
                if not acceptable or acceptable[0] == "":
                    continue
                arguments[param] = _resolve(acceptable[0])
            calls.append((name, arguments))
    return calls
