"""The Task record that flows from the generator to the validator, the scorer and the database."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scoring.schema import function_of
from tasks.categories import CATEGORIES

__all__ = ["GENERATOR_VERSION", "Task"]

#: Bumped whenever the same seed would produce different tasks.
GENERATOR_VERSION = "12"


@dataclass
class Task:
    """One task: a chat request, the tools offered, and every acceptable answer (BFCL form).

    ``expected`` is a list of calls ``{function_name: {param: [acceptable values...]}}``; an
    empty list means the right answer is to make no call (irrelevance, missing_param).
    Treat a Task as a value: nested dicts may be shared with other tasks of the same round.
    """

    id: str
    category: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    expected: list[dict[str, Any]]
    seed: str
    source: str
    generator_version: str = GENERATOR_VERSION
    #: What the request means (``tasks.phrasing.intent``): validator-side only, never sent to miners.
    intent: dict[str, Any] | None = None
    #: How the request was phrased (engine, the template text it replaced, attempts); None: as generated.
    phrasing: dict[str, Any] | None = None

    @property
    def scoring_category(self) -> str:
        """The category name to pass to ``scoring.check`` (BFCL dispatches on it)."""
        entry = CATEGORIES.get(self.category)
        return entry.scoring_category if entry is not None else self.category

    @property
    def request(self) -> str:
        """The text of the last user message."""
        for message in reversed(self.messages):
            if message.get("role") == "user" and isinstance(message.get("content"), str):
                return str(message["content"])
        return ""

    @property
    def tool_names(self) -> list[str]:
        """Names of the offered functions, in the order offered."""
        return [str(function_of(tool).get("name", "")) for tool in self.tools]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict; ``Task.from_dict`` reads it back."""
        data: dict[str, Any] = {
            "id": self.id,
            "category": self.category,
            "messages": self.messages,
            "tools": self.tools,
            "expected": self.expected,
            "seed": self.seed,
            "source": self.source,
            "generator_version": self.generator_version,
        }
        if self.intent is not None:
            data["intent"] = self.intent
        if self.phrasing is not None:
            data["phrasing"] = self.phrasing
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        """Read a dict written by ``to_dict`` (missing keys raise KeyError naming the key)."""
        return cls(
            id=str(data["id"]),
            category=str(data["category"]),
            messages=list(data["messages"]),
            tools=list(data["tools"]),
            expected=list(data["expected"]),
            seed=str(data["seed"]),
            source=str(data["source"]),
            generator_version=str(data.get("generator_version", GENERATOR_VERSION)),
            intent=data.get("intent"),
            phrasing=data.get("phrasing"),
        )
