"""Simulated, stateful tool environments: the worlds episodes are played in.

An ``Environment`` is a plain class. Its state is built deterministically from a seed (and a
``size`` that grows it for long-context episodes); its tools are the methods marked ``@tool``,
each with an OpenAI-style JSON schema. Nothing here touches the real machine: a shell is a small
interpreter over in-memory files, a payment is a row in a list.

Dispatch never resolves a name the miner chose by itself: ``dispatch`` looks the name up in the
class's table of ``@tool`` methods (built once from the class body), so ``__class__``, dunder
names and ordinary methods that are not tools are unknown tools, answered with an error
observation. A tool's failure (``ToolError``) is an observation too, as a real API would answer.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from random import Random
from typing import Any, ClassVar, TypeVar

from tasks.seeding import rng_from, seed_bytes

__all__ = ["Environment", "ToolError", "ToolInfo", "prop", "tool"]

F = TypeVar("F", bound=Callable[..., Any])

#: An observation is cut to this many characters of JSON (long-context states stay bounded).
MAX_OBSERVATION_CHARS = 16_000


class ToolError(Exception):
    """A tool refused its arguments or its state (file missing, insufficient funds): an observation."""


@dataclass(frozen=True)
class ToolInfo:
    """One tool of an environment: its schema and whether it changes state."""

    name: str
    description: str
    parameters: dict[str, Any]
    mutates: bool
    function: Callable[..., Any] = field(repr=False, compare=False)

    def openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def prop(kind: str, description: str, **extra: Any) -> dict[str, Any]:
    """One JSON-schema property of a tool's parameters (for ``tool``'s ``properties``): its
    ``type`` and ``description``, then any ``extra`` keywords (``enum``, ``items``, ``minimum``)."""
    return {"type": kind, "description": description, **extra}


def tool(
    description: str,
    properties: dict[str, dict[str, Any]] | None = None,
    required: tuple[str, ...] = (),
    *,
    mutates: bool = False,
) -> Callable[[F], F]:
    """Mark a method as a tool. ``properties`` are JSON-schema properties (each with ``type`` and
    ``description``); ``mutates`` says whether a call changes the environment's state."""

    def mark(function: F) -> F:
        function.__tool__ = (  # type: ignore[attr-defined]
            description,
            {"type": "object", "properties": dict(properties or {}), "required": list(required)},
            mutates,
        )
        return function

    return mark


class Environment:
    """Base of every environment. Subclasses set ``name`` and ``observable``, build their state in
    ``build(rng, size)``, mark tools with ``@tool`` and may refuse actions in ``forbidden``."""

    #: Registry name (tasks.episodes.environments.ENVIRONMENTS).
    name: ClassVar[str] = ""
    #: The attributes the checker compares after each turn (the state a user could observe).
    observable: ClassVar[tuple[str, ...]] = ()
    #: The actions ``forbidden`` refuses, in words (shown with the episode).
    FORBIDDEN: ClassVar[tuple[str, ...]] = ()
    _tools: ClassVar[dict[str, ToolInfo]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[str, ToolInfo] = {}
        for klass in reversed(cls.__mro__):
            for attribute, value in vars(klass).items():
                marked = getattr(value, "__tool__", None)
                if callable(value) and marked is not None:
                    description, parameters, mutates = marked
                    table[attribute] = ToolInfo(attribute, description, parameters, mutates, value)
        cls._tools = table

    def __init__(self, seed: bytes | str | int, size: int = 1) -> None:
        self.seed = seed_bytes(seed)
        self.size = size
        self.build(rng_from(self.seed), size)

    def build(self, rng: Random, size: int) -> None:
        """Draw the initial state (subclasses)."""
        raise NotImplementedError

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Environment:
        """An environment built from an external episode's configuration (BFCL's), where the
        class supports one."""
        raise NotImplementedError(f"environment {cls.name!r} is built from a seed, not a configuration")

    # -- tools -------------------------------------------------------------------------------

    @classmethod
    def tools(cls) -> dict[str, ToolInfo]:
        """Every tool of the class, by name."""
        return dict(cls._tools)

    @classmethod
    def openai_tools(cls, names: list[str] | tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        """OpenAI tool dicts of the named tools (all of them when None), in the order named."""
        chosen = list(cls._tools) if names is None else list(names)
        return [cls._tools[name].openai() for name in chosen]

    def dispatch(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run the tool ``name`` with already validated ``arguments``; its JSON result, or an
        ``{"error": ...}`` observation for an unknown tool or a refused call."""
        info = self._tools.get(name)
        if info is None:
            return {"error": f"unknown tool {name[:80]!r}"}
        try:
            _signature(info.function).bind(self, **arguments)
        except TypeError as error:  # arguments the schema allowed but the method does not take
            return {"error": f"bad arguments for {name}: {str(error)[:200]}"}
        try:
            result = info.function(self, **arguments)
        except ToolError as error:
            return {"error": str(error)[:500]}
        return _bounded(result)

    def begin_turn(self) -> None:
        """Called when a new user turn starts (the engine, the checker's replays): rules that
        hold within one turn reset here. Most environments need nothing."""

    def forbidden(self, name: str, arguments: dict[str, Any]) -> str | None:
        """Why a call is unsafe (a destructive command, paying a stranger), or None. Checked
        before the call runs; a forbidden call is not executed and fails the episode."""
        return None

    # -- state -------------------------------------------------------------------------------

    def state_view(self) -> dict[str, Any]:
        """The observable state itself, not copied (read it, do not keep it). Environments whose
        state is not a set of attributes override this."""
        return {attribute: getattr(self, attribute) for attribute in self.observable}

    def state(self) -> dict[str, Any]:
        """A deep copy of the observable state."""
        return copy.deepcopy(self.state_view())

    def fingerprint(self) -> str:
        """The observable state as canonical JSON: what the checker compares after each turn
        (cheaper than a deep copy, and comparable across processes)."""
        return json.dumps(self.state_view(), sort_keys=True, ensure_ascii=False, default=str)


@cache
def _signature(function: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(function)


def _bounded(result: Any) -> Any:
    """The result, or a truncated text of it when its JSON is longer than the bound."""
    text = json.dumps(result, ensure_ascii=False, default=str)
    if len(text) <= MAX_OBSERVATION_CHARS:
        return json.loads(text)
    return {"truncated": True, "text": text[:MAX_OBSERVATION_CHARS]}
