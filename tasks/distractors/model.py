"""The record a distractor kind module exports (``KIND``), and helpers the kinds share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tasks.spec import ToolSpec

__all__ = ["WRITE_VERBS", "Kind", "clause", "name_words"]

#: Name verbs of tools that do something (book, send, create) rather than read.
WRITE_VERBS = frozenset(
    {
        "add",
        "apply",
        "arm",
        "book",
        "calibrate",
        "create",
        "dispatch",
        "enroll",
        "log",
        "order",
        "place",
        "plan",
        "rent",
        "report",
        "reserve",
        "return",
        "schedule",
        "send",
        "set",
        "start",
        "transfer",
    }
)


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of lookalike distractor: ``derive`` makes, from a gold tool, a tool with the same
    words and parameters (so the same types) that does something else, or None where the kind
    does not apply to that tool. ``derive`` must be deterministic: it is called once per tool."""

    name: str
    derive: Callable[[ToolSpec], ToolSpec | None]
    #: Ways a person asks for this kind instead of the gold tool's action ("{request}" is the gold
    #: tool's request); () where a task never asks for it. Then the lookalike is the gold tool and
    #: the tool it was made from the distractor, so "a lookalike is never the answer" fails too.
    asks: tuple[str, ...] = ()
    #: Words of the ask that a rewording must keep (a phrasing "flag": without them the request
    #: would ask for the original action).
    keeps: tuple[str, ...] = ()


def name_words(spec: ToolSpec) -> list[str]:
    """The words of a tool's name."""
    return [word for word in spec.name.split("_") if word]


def clause(spec: ToolSpec) -> str:
    """The tool's description as a clause after "one that": "reserves a hotel room in a city"."""
    text = spec.description.strip().rstrip(".")
    return text if text[1:2].isupper() else text[:1].lower() + text[1:]
