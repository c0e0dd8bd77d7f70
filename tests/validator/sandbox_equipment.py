"""Test equipment for the sandbox: an environment whose tools misbehave on purpose.

The sandbox's workers import this module by name (``Sandbox(preload=(MODULE,))``); importing it
registers the ``hostile`` environment there. Tests register it in their own process through the
``hostile_environment`` fixture (tests/validator/test_sandbox.py), which takes it out again.
"""

from __future__ import annotations

from random import Random
from typing import Any

from tasks.episodes.environment import Environment, prop, tool
from tasks.episodes.environments import ENVIRONMENTS
from tasks.episodes.model import Episode, Turn

MODULE = __name__
NAME = "hostile"
_RUNS = {"once": 0}  # per process


class Hostile(Environment):
    """A list of numbers, and tools that loop, hoard memory or raise when asked to."""

    name = NAME
    observable = ("items",)

    def build(self, rng: Random, size: int) -> None:
        self.items = [rng.randrange(100) for _ in range(3 * size)]
        self.hoard: list[bytearray] = []

    @tool("Append a number to the list.", {"value": prop("integer", "The number.")}, ("value",), mutates=True)
    def add(self, value: int) -> dict[str, Any]:
        self.items.append(value)
        return {"items": list(self.items)}

    @tool("The list.")
    def read(self) -> dict[str, Any]:
        return {"items": list(self.items)}

    @tool("Loop forever.")
    def spin(self) -> dict[str, Any]:
        while True:
            pass

    @tool("Keep megabytes of memory.", {"megabytes": prop("integer", "How many.")}, ("megabytes",))
    def hog(self, megabytes: int) -> dict[str, Any]:
        self.hoard.append(bytearray(megabytes << 20))
        return {"kept": sum(len(block) for block in self.hoard) >> 20}

    @tool("Append a number, once.", {"value": prop("integer", "The number.")}, ("value",), mutates=True)
    def once(self, value: int) -> dict[str, Any]:
        # Works the first time it runs in a process only: an undo, which replays the calls made
        # so far, cannot rebuild the state after it.
        _RUNS["once"] += 1
        if _RUNS["once"] > 1:
            raise RuntimeError("this cannot happen twice")
        self.items.append(value)
        return {"items": list(self.items)}

    @tool("Raise an exception.", {"kind": prop("string", "overflow, value or key.")}, ("kind",), mutates=True)
    def boom(self, kind: str) -> dict[str, Any]:
        self.items.append(-1)  # half-changed state: the episode must fail, not go on
        error = {"overflow": OverflowError, "value": ValueError}.get(kind, KeyError)
        raise error(f"boom: {kind}")


def hostile_episode(seed: int = 1, turns: int = 1) -> Episode:
    """An episode in the hostile environment offering every tool in each turn (no plan)."""
    tools = list(Hostile.tools())
    return Episode(
        id=f"hostile-{seed}",
        category="multi_turn_base",
        environment=NAME,
        env_seed=bytes([seed]).hex(),
        size=1,
        turns=[Turn(user=f"turn {index}", tools=tools, plan=[]) for index in range(turns)],
        seed=str(seed),
    )


ENVIRONMENTS.setdefault(NAME, MODULE)
