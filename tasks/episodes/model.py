"""The Episode record: a multi-turn conversation in a simulated environment, and its reference.

JSON both ways (``to_dict``/``from_dict``). The turns hold the user's messages (as miners read
them), the tools offered per turn and the reference plan per turn, all with the environment's own
names; a variant adds a ``surface`` (tool_shuffle's renames) through which the miner's names are
mapped back. The environment itself is rebuilt from (``environment``, ``env_seed``, ``size``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from tasks.episodes.designs import designed_class
from tasks.episodes.environments import environment_class

__all__ = ["Episode", "Turn"]


@dataclass
class Turn:
    """One user turn: the message, the tools offered (environment names), the reference plan."""

    user: str
    tools: list[str]
    plan: list[dict[str, Any]]
    needed: list[Any] = field(default_factory=list)
    #: What the message means, for the phrasing stage (the single-turn intent form).
    intent: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "tools": list(self.tools),
            "plan": copy.deepcopy(self.plan),
            "needed": list(self.needed),
            "intent": self.intent,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        return cls(
            user=str(data["user"]),
            tools=[str(name) for name in data["tools"]],
            plan=list(data["plan"]),
            needed=list(data.get("needed", [])),
            intent=data.get("intent"),
        )


@dataclass
class Episode:
    """An episode as generated (``surface`` None) or as one miner's variant."""

    id: str
    category: str
    environment: str
    env_seed: str
    size: int
    turns: list[Turn]
    seed: str
    source: str = "builtin"
    #: Steps a miner may take per turn before the turn fails (``multi_turn:step_limit``).
    step_cap: int = 8
    #: The actions that fail the episode whatever else happens, in words (the environment's).
    forbidden: list[str] = field(default_factory=list)
    #: A variant's renames: ``{"functions": {env name: shown name}, "parameters": {shown name:
    #: {env param: shown param}}, "tools": {env name: shown OpenAI tool dict}}``.
    surface: dict[str, Any] | None = None
    #: agent_step: the index (over the whole reference plan) of the one call to predict.
    cut: int | None = None
    #: An external episode's initial configuration (BFCL's ``initial_config`` and classes); the
    #: environment is then built by ``from_config`` instead of from the seed.
    config: dict[str, Any] | None = None
    #: The tool design the environment is offered through (tasks.episodes.designs); None: the
    #: environment's own tools (BFCL's episodes, and episodes stored before designs existed).
    design: str | None = None

    @property
    def single_step(self) -> bool:
        """Whether the episode is one request judged as a single call (an agent step: the
        reference trajectory cut before call ``cut``; ``tasks.episodes.agent_step`` builds the
        request), not a conversation played turn by turn. Callers read this, never the category."""
        return self.cut is not None

    def environment_type(self) -> Any:
        """The class the episode is played on: the environment's, or its design's wrapper."""
        if self.design is None:
            return environment_class(self.environment)
        return designed_class(self.environment, self.design)

    def make_environment(self) -> Any:
        """A fresh environment in the episode's initial state."""
        cls = self.environment_type()
        if self.config is not None:
            return cls.from_config(self.config)
        return cls(bytes.fromhex(self.env_seed), self.size)

    def offered(self, turn: int) -> list[dict[str, Any]]:
        """The OpenAI tools a miner sees in turn ``turn`` (renamed in a variant)."""
        names = self.turns[turn].tools
        if self.surface is None:
            return (
                self.make_environment().openai_tools(names)
                if self.config
                else self.environment_type().openai_tools(names)
            )
        return [copy.deepcopy(self.surface["tools"][name]) for name in names]

    def to_environment(
        self, name: str, arguments: dict[str, Any], turn: int
    ) -> tuple[str, dict[str, Any]] | None:
        """A miner's call in environment names, or None when ``name`` is not a tool offered in
        ``turn`` (unknown names are never looked up anywhere else)."""
        offered = self.turns[turn].tools
        if self.surface is None:
            return (name, dict(arguments)) if name in offered else None
        by_shown = {self.surface["functions"][env]: env for env in offered}
        env_name = by_shown.get(name)
        if env_name is None:
            return None
        back = {shown: env for env, shown in self.surface["parameters"][name].items()}
        return env_name, {back.get(key, key): value for key, value in arguments.items()}

    def shown_call(self, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """A call in environment names as this surface shows it (for reference trajectories)."""
        if self.surface is None:
            return name, dict(arguments)
        shown = self.surface["functions"][name]
        params = self.surface["parameters"][shown]
        return shown, {params.get(key, key): value for key, value in arguments.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "environment": self.environment,
            "env_seed": self.env_seed,
            "size": self.size,
            "turns": [turn.to_dict() for turn in self.turns],
            "seed": self.seed,
            "source": self.source,
            "step_cap": self.step_cap,
            "forbidden": list(self.forbidden),
            "surface": copy.deepcopy(self.surface),
            "cut": self.cut,
            "config": copy.deepcopy(self.config),
            "design": self.design,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Episode:
        return cls(
            id=str(data["id"]),
            category=str(data["category"]),
            environment=str(data["environment"]),
            env_seed=str(data["env_seed"]),
            size=int(data["size"]),
            turns=[Turn.from_dict(turn) for turn in data["turns"]],
            seed=str(data["seed"]),
            source=str(data.get("source", "builtin")),
            step_cap=int(data.get("step_cap", 8)),
            forbidden=[str(item) for item in data.get("forbidden", [])],
            surface=data.get("surface"),
            cut=data.get("cut"),
            config=data.get("config"),
            design=data.get("design"),
        )
