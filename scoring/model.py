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


@dataclass(frozen=True)
class Call:
    """One function call as the model made it: the name as written and keyword arguments."""

    name: str
    arguments: dict[str, Any]


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

COMPONENTS = ("format", "schema", "tool", "args")


@dataclass(frozen=True)
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


_new_object = object.__new__
_set_attribute = object.__setattr__


def make_call(name: str, arguments: dict[str, Any]) -> Call:
    """``Call(name, arguments)``, built without the frozen dataclass's ``__init__``: its two
    ``object.__setattr__`` calls make it the costliest step of reading a plain call. The fields go
    straight into the instance dict, in the order ``__init__`` puts them; the object is the same
    (equal, frozen, same repr)."""
    call = _new_object(Call)
    fields = call.__dict__
    fields["name"] = name
    fields["arguments"] = arguments
    return call


def make_verdict(
    valid: bool,
    error_type: str | None,
    score: float,
    components: dict[str, float],
    message: str,
    calls: tuple[Call, ...],
) -> Verdict:
    """``Verdict(valid, error_type, score, components, message, calls)``, built without the frozen
    dataclass's ``__init__``: its six ``object.__setattr__`` calls cost here as much as checking a
    simple call. The instance dict is set in one go; the object is the same (equal, frozen)."""
    verdict = _new_object(Verdict)
    _set_attribute(
        verdict,
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
    return verdict
