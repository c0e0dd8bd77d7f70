"""The value types the scorer hands out: decoded calls, verdicts, decode errors and work limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class DecodeError(ValueError):
    """Model output that is not a tool call in any supported format, or over a work limit.

    ``reason`` is a short, human readable explanation (it is also the exception message).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# Call and Verdict are frozen dataclasses with their own __init__: the generated one sets each
# field with its own object.__setattr__ call (that is what frozen costs), the costliest step of
# reading a plain call and, for a verdict's six fields, as much as checking a simple call. Theirs
# sets the instance dict in one step; equality, repr, fields and frozenness are the dataclass's.
_set_attribute = object.__setattr__


@dataclass(frozen=True, init=False)
class Call:
    """One function call as the model made it: the name as written and keyword arguments."""

    name: str
    arguments: dict[str, Any]

    def __init__(self, name: str, arguments: dict[str, Any]) -> None:
        _set_attribute(self, "__dict__", {"name": name, "arguments": arguments})


@dataclass(frozen=True)
class Limits:
    """Bounds on the work spent decoding one output; anything over them is a DecodeError.

    ``max_items`` bounds the number of structural characters (``,([{=:`` and operators outside
    string literals) that a parser sees, which bounds the size of the syntax tree it builds:
    parse time grows with it, not with the byte size. ``max_int_bits`` bounds the integers that
    arithmetic in python-call syntax may fold to (literals themselves are bounded by Python's
    4,300-digit limit on integer conversion, as JSON numbers are).
    """

    max_bytes: int = 64 * 1024
    max_depth: int = 32
    max_calls: int = 64
    max_items: int = 1024
    max_int_bits: int = 4096


DEFAULT_LIMITS = Limits()

COMPONENTS = ("format", "schema", "tool", "args", "calls")


@dataclass(frozen=True, init=False)
class Verdict:
    """The checker's judgement of one output against one task.

    ``valid`` and ``error_type`` mean what they mean in BFCL's AST checker; ``score`` is 1.0 when
    valid and the partial credit documented in :mod:`scoring` otherwise; ``components`` holds the
    four partial scores (format, schema, tool, args), each in [0, 1]. ``message`` explains the
    first error in words; ``calls`` are the decoded calls (empty when decoding failed).
    """

    valid: bool
    error_type: str | None
    score: float
    components: dict[str, float]
    message: str = ""
    calls: tuple[Call, ...] = field(default=())

    def __init__(
        self,
        valid: bool,
        error_type: str | None,
        score: float,
        components: dict[str, float],
        message: str = "",
        calls: tuple[Call, ...] = (),
    ) -> None:
        _set_attribute(
            self,
            "__dict__",
            {
                "valid": valid,
                "error_type": error_type,
                "score": score,
                "components": components,
                "message": message,
                "calls": calls,
            },
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (what ``python -m scoring check --json`` prints)."""
        return {
            "valid": self.valid,
            "error_type": self.error_type,
            "score": self.score,
            "components": dict(self.components),
            "message": self.message,
            "calls": [{"name": c.name, "arguments": c.arguments} for c in self.calls],
        }
