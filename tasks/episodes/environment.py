"""Simulated, stateful tool environments: the worlds episodes are played in.

An ``Environment`` is a plain class. Its state is built deterministically from a seed (and a
``size`` that grows it for long-context episodes); its tools are the methods marked ``@tool``,
each with an OpenAI-style JSON schema. Nothing here touches the real machine: a shell is a small
interpreter over in-memory files, a payment is a row in a list.

Dispatch never resolves a name the miner chose by itself: ``dispatch`` looks the name up in the
class's table of ``@tool`` methods (built once from the class body), so ``__class__``, dunder
names and ordinary methods that are not tools are unknown tools, answered with an error
observation. A tool's failure (``ToolError``) is an observation too, as a real API would answer.

Nothing a miner sends makes ``dispatch`` raise, with one documented exception:

* A tool refuses bad input with ``ToolError`` before it changes anything (validate, then
  mutate; the fuzz tests in tests/episodes check the state is unchanged after every refusal).
* Anything else a tool raises (``OverflowError``, ``RecursionError``, ``MemoryError``, a bug) is
  an error observation too, and the call leaves no trace: a tool that changes state is undone by
  rebuilding the environment from its seed (or configuration) and replaying the calls that
  succeeded before it (environments are deterministic, so the replay is exact). Honest play
  pays nothing for this but keeping the list of calls.
* Only when that replay itself fails does ``dispatch`` raise ``EnvironmentCorrupted``: the state
  may be half-changed, and the episode fails for that miner alone (``EpisodeRunner`` ends it
  there; nothing else is touched).

Numbers read from a miner's text (``head -n 5``, a cron field) go through ``ascii_int``: ASCII
digits only (``str.isdigit`` is true for ``'²'``, which ``int`` refuses) and a bounded length.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from random import Random
from typing import Any, ClassVar, TypeVar

from tasks.seeding import rng_from, seed_bytes, sub_seed

__all__ = [
    "Environment",
    "EnvironmentCorrupted",
    "Listing",
    "ToolError",
    "ToolInfo",
    "ascii_int",
    "prop",
    "tool",
]

F = TypeVar("F", bound=Callable[..., Any])

#: An observation is cut to this many characters of JSON (long-context states stay bounded).
MAX_OBSERVATION_CHARS = 16_000


class ToolError(Exception):
    """A tool refused its arguments or its state (file missing, insufficient funds): an observation."""


class EnvironmentCorrupted(Exception):
    """A tool failed unexpectedly and the environment could not be put back as it was before the
    call: its state may be half-changed. The only exception ``Environment.dispatch`` lets out;
    whoever plays the episode ends it as failed, for that miner alone."""


#: ASCII digits, at most 18 of them (an int64): ``\d`` and ``str.isdigit`` accept other scripts'
#: digits and superscripts, and ``int`` refuses some of those and more than 4300 digits.
_ASCII_DIGITS = re.compile(r"[0-9]{1,18}", re.ASCII)


def ascii_int(text: str, maximum: int | None = None) -> int | None:
    """The number ``text`` spells in ASCII digits (no sign, no spaces), or None when it is not one
    or is larger than ``maximum``."""
    if not isinstance(text, str) or _ASCII_DIGITS.fullmatch(text) is None:
        return None
    value = int(text)
    return None if maximum is not None and value > maximum else value


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


@dataclass(frozen=True)
class Listing:
    """What a read tool's result lists, declared by the environment (``Environment.listings``) so
    that a tool design (tasks.episodes.designs) can page it, or show summaries and offer a get by
    key, without knowing the environment."""

    #: The result's key that holds the list.
    field: str
    #: The records' id field; None when the records are plain values (file paths).
    key: str | None = None
    #: The fields a summary shows (the key first).
    summary: tuple[str, ...] = ()
    #: The observable attribute holding every record, for a get by key (None: no get).
    state: str | None = None
    #: The fields of a record the listing shows (a get shows the same; None: all of them).
    fields: tuple[str, ...] | None = None
    #: One record in a word ("transaction"), for the design's tool names and descriptions.
    noun: str = "item"


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
    #: The read tools whose results list records, and how (``Listing``): what a tool design may
    #: page or summarise. Tools not named here are offered as they are by every design.
    listings: ClassVar[dict[str, Listing]] = {}
    #: Decoy kinds (tasks.episodes.decoys): each plants near duplicates after ``build``.
    decoys: ClassVar[tuple[Callable[[Any, Random], None], ...]] = ()
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
        for plant in self.decoys:  # each from a stream of its own: build's draws stay as they were
            plant(self, rng_from(sub_seed(self.seed, b"decoy|" + plant.__name__.encode())))

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

    def mutates(self, name: str, arguments: dict[str, Any]) -> bool:
        """Whether this call of ``name`` can change the state (a design's tool with a mode may do
        either, by its arguments); here, the tool's own flag."""
        return self._tools[name].mutates

    def dispatch(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run the tool ``name`` with already validated ``arguments``; its JSON result, or an
        ``{"error": ...}`` observation for an unknown tool or a refused or failed call (see the
        module docstring: only ``EnvironmentCorrupted`` is raised)."""
        info = self._tools.get(name)
        if info is None:
            return {"error": f"unknown tool {str(name)[:80]!r}"}
        try:
            _signature(info.function).bind(self, **arguments)
        except TypeError as error:  # arguments the schema allowed but the method does not take
            return {"error": f"bad arguments for {name}: {str(error)[:200]}"}
        return self._guarded(name, arguments, lambda: info.function(self, **arguments))

    def _guarded(self, name: str, arguments: dict[str, Any], run: Callable[[], Any]) -> Any:
        """``run()``'s bounded result, its ``ToolError`` as an observation, and anything else it
        raises as an observation once the state is put back (``_undo``); the call is journaled
        when it succeeds, for that replay."""
        journal = self.__dict__.setdefault("_journal", [])
        try:
            logged = copy.deepcopy(arguments)  # a tool may keep (and later change) what it was given
        except Exception as error:  # nested too deep to copy: nothing has run
            return {"error": f"bad arguments for {name}: {_describe(error)}"}
        try:
            result = run()
        except ToolError as error:
            return {"error": str(error)[:500]}
        except Exception as error:  # whatever a tool raises on miner input is contained
            self._undo()
            return self._failed(name, error)
        journal.append((name, logged))
        try:
            return _bounded(result)
        except Exception as error:  # the call happened; only its result cannot be shown
            return {"error": f"{name}: its result cannot be shown ({_describe(error)})"}

    def _failed(self, name: str, error: Exception) -> dict[str, Any]:
        """The observation of a call that raised something other than ``ToolError``."""
        return {"error": f"{name} failed: {_describe(error)}"}

    def _undo(self) -> None:
        """Put the state back as it was after the last successful call: a fresh environment from
        the same seed (``_rebuild``) replays the journal, then takes this one's place.
        ``EnvironmentCorrupted`` when the replay does not go through."""
        journal = list(self.__dict__.get("_journal", []))
        try:
            fresh = self._rebuild()
            for entry in journal:
                if entry is None:
                    fresh.begin_turn()
                else:
                    fresh._replay(*entry)
        except Exception as error:
            raise EnvironmentCorrupted(
                f"{type(self).name}: a failed call could not be undone ({_describe(error)})"
            ) from None
        self.__dict__.clear()
        self.__dict__.update(fresh.__dict__)
        self.__dict__["_journal"] = journal

    def _rebuild(self) -> Environment:
        """A fresh environment in this one's initial state (the replay's start)."""
        return type(self)(self.seed, self.size)

    def _replay(self, name: str, arguments: dict[str, Any]) -> None:
        """Run one journaled call again; raises whatever it raises (``_undo`` says why it failed)."""
        self._tools[name].function(self, **copy.deepcopy(arguments))

    def begin_turn(self) -> None:
        """Called when a new user turn starts (the runner, the checker's replays): rules that
        hold within one turn reset here (``turn_started``). Journaled, for ``_undo``'s replay."""
        self.__dict__.setdefault("_journal", []).append(None)
        self.turn_started()

    def turn_started(self) -> None:
        """What resets when a new user turn starts (subclasses); most environments need nothing."""

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


def _describe(error: BaseException) -> str:
    """An exception in one short line: its type and the start of its message."""
    try:
        text = str(error)
    except Exception:  # a message that cannot be shown (a huge int, a bad __str__)
        text = ""
    return f"{type(error).__name__}: {text[:200]}" if text else type(error).__name__


def _bounded(result: Any) -> Any:
    """The result, or a truncated text of it when its JSON is longer than the bound."""
    text = json.dumps(result, ensure_ascii=False, default=str)
    if len(text) <= MAX_OBSERVATION_CHARS:
        return json.loads(text)
    return {"truncated": True, "text": text[:MAX_OBSERVATION_CHARS]}
