"""The environment's own tools, as its class declares them."""

from __future__ import annotations

from typing import Any

from tasks.episodes.designs.base import Design, DesignTool, identity_tool
from tasks.episodes.environment import Environment

__all__ = ["Canonical"]


class Canonical(Design):
    name = "canonical"
    description = "the environment's own tools"

    def tools(self, cls: type[Environment]) -> dict[str, DesignTool]:
        return {name: identity_tool(cls, name) for name in cls.tools()}

    def primary(self, cls: type[Environment], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "arguments": dict(arguments)}
