"""What a tool design is: the tools it offers over an environment's canonical actions, how each
offered call becomes a canonical call (and its observation this design's shape), and how a
canonical reference call becomes this design's calls.

A design never holds state of its own: ``DesignedEnvironment`` wraps the environment, dispatches
each offered call to one canonical call (or answers a read from the state alone: a get by key),
and delegates everything else (turns, state, fingerprints, safety) to it. So the checker, the
sandbox and the reference player see an environment like any other, whose tools are the design's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tasks.episodes.environment import Environment, ToolError, _bounded, _describe

__all__ = ["Design", "DesignTool", "DesignedEnvironment", "identity_tool", "shows", "wanted_values"]

#: A canonical call: the environment's tool name and its arguments.
Canonical = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class DesignTool:
    """One offered tool of a design."""

    name: str
    description: str
    parameters: dict[str, Any]
    #: Whether a call may change state (a tool with a mode: whether any of its actions does).
    mutates: bool
    #: The canonical tools this tool serves (a scenario offering those offers this one).
    serves: tuple[str, ...]
    #: The canonical call for these arguments; ToolError when they name none. None for ``read``.
    to_canonical: Callable[[dict[str, Any]], Canonical] | None = field(default=None, compare=False)
    #: The observation in this design's shape: (offered arguments, canonical observation) -> shown.
    shape: Callable[[dict[str, Any], Any], Any] | None = field(default=None, compare=False)
    #: A read answered from the environment's observable state alone (a get by key); never mutates.
    read: Callable[[Environment, dict[str, Any]], Any] | None = field(default=None, compare=False)

    def openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def identity_tool(cls: type[Environment], name: str) -> DesignTool:
    """The canonical tool ``name`` of ``cls``, offered as it is."""
    info = cls.tools()[name]
    return DesignTool(
        name, info.description, info.parameters, info.mutates, (name,), lambda arguments: (name, arguments)
    )


def wanted_values(calls: list[dict[str, Any]], needed: list[Any]) -> list[str]:
    """The values a reference plan still has to learn: every scalar argument of ``calls`` and every
    ``needed`` value, lower-cased text (compared as the checker compares them: as substrings)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            text = str(value).lower()
            if text and text not in found:
                found.append(text)

    for call in calls:
        walk(call["arguments"])
    walk(list(needed))
    return found


def shows(observation: Any) -> str:
    """An observation as the checker searches it: its JSON, lower-cased."""
    return json.dumps(observation, ensure_ascii=False, default=str).lower()


class Design:
    """A tool design. Subclasses set ``name`` and ``description`` and build ``tools(cls)``; those
    whose plans depend on what a canonical call observed (pages, gets) override ``plan_call`` and
    set ``reads_observations``."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: Whether ``plan_call`` needs the canonical observation (the generator then replays the plan).
    reads_observations: ClassVar[bool] = False

    def tools(self, cls: type[Environment]) -> dict[str, DesignTool]:
        """Every offered tool over ``cls``'s canonical tools, by name."""
        raise NotImplementedError

    def primary(self, cls: type[Environment], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The one design call that makes the canonical call ``name(arguments)``."""
        raise NotImplementedError

    def plan_call(
        self,
        cls: type[Environment],
        call: dict[str, Any],
        observation: Any,
        wanted: list[str],
    ) -> list[dict[str, Any]]:
        """A canonical reference call as this design's calls, given what the canonical call
        observed and the values the plan still has to learn (``wanted_values``)."""
        return [self.primary(cls, call["name"], call["arguments"])]


class DesignedEnvironment:
    """An environment offered through a design (see the module docstring). Built by
    ``tasks.episodes.designs.designed_class``, one subclass per (environment, design)."""

    base: ClassVar[type[Environment]]
    design: ClassVar[Design]
    name: ClassVar[str] = ""
    observable: ClassVar[tuple[str, ...]] = ()
    FORBIDDEN: ClassVar[tuple[str, ...]] = ()
    _tools: ClassVar[dict[str, DesignTool]] = {}

    def __init__(self, seed: bytes | str | int, size: int = 1) -> None:
        self.inner = self.base(seed, size)

    @classmethod
    def wrap(cls, inner: Environment) -> DesignedEnvironment:
        """An already built environment, offered through this class's design."""
        designed = cls.__new__(cls)
        designed.inner = inner
        return designed

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> DesignedEnvironment:
        return cls.wrap(cls.base.from_config(config))

    def __getattr__(self, attribute: str) -> Any:
        # Only reached for what this class lacks: the wrapped environment's state (tests read it).
        if attribute == "inner":
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)

    # -- tools -------------------------------------------------------------------------------

    @classmethod
    def tools(cls) -> dict[str, DesignTool]:
        return dict(cls._tools)

    @classmethod
    def openai_tools(cls, names: list[str] | tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        chosen = list(cls._tools) if names is None else list(names)
        return [cls._tools[name].openai() for name in chosen]

    def _target(self, name: str, arguments: dict[str, Any]) -> Canonical | None:
        """The canonical call of an offered call; None for a read from the state. Raises what the
        design's translation raises (ToolError on arguments that name no canonical call)."""
        tool = self._tools[name]
        if tool.read is not None or tool.to_canonical is None:
            return None
        return tool.to_canonical(dict(arguments))

    def mutates(self, name: str, arguments: dict[str, Any]) -> bool:
        target = self._target(name, arguments)
        return False if target is None else self.inner.mutates(*target)

    def forbidden(self, name: str, arguments: dict[str, Any]) -> str | None:
        try:
            target = self._target(name, arguments)
        except Exception:  # the call names no canonical action: dispatch answers it with an error
            return None
        return None if target is None else self.inner.forbidden(*target)

    def dispatch(self, name: str, arguments: dict[str, Any]) -> Any:
        """As ``Environment.dispatch``: an observation, never an exception (but
        ``EnvironmentCorrupted`` from the wrapped environment)."""
        tool = self._tools.get(name)
        if tool is None:
            return {"error": f"unknown tool {str(name)[:80]!r}"}
        try:
            if tool.read is not None:
                return _bounded(tool.read(self.inner, dict(arguments)))
            target = self._target(name, arguments)
        except ToolError as error:
            return {"error": str(error)[:500]}
        except Exception as error:  # a read or a translation failed on odd input: nothing changed
            return {"error": f"{name} failed: {_describe(error)}"}
        assert target is not None
        observation = self.inner.dispatch(*target)
        if tool.shape is None or (isinstance(observation, dict) and "error" in observation):
            return observation
        try:
            return _bounded(tool.shape(dict(arguments), observation))
        except Exception:  # the call happened; shown as the environment answered it
            return observation

    # -- the rest is the wrapped environment's -------------------------------------------------

    def begin_turn(self) -> None:
        self.inner.begin_turn()

    def state_view(self) -> dict[str, Any]:
        return self.inner.state_view()

    def state(self) -> dict[str, Any]:
        return self.inner.state()

    def fingerprint(self) -> str:
        return self.inner.fingerprint()
