"""One tool per environment with a mode parameter: ``action`` names what to do, the other
parameters are the union of every action's (each says which actions take it)."""

from __future__ import annotations

from typing import Any

from tasks.episodes.arguments import schema_error
from tasks.episodes.designs.base import Design, DesignTool
from tasks.episodes.environment import Environment, ToolError

__all__ = ["SingleTool"]


class SingleTool(Design):
    name = "single_tool"
    description = "one tool with an action parameter"

    @staticmethod
    def tool_name(cls: type[Environment]) -> str:
        return f"{cls.name}_service"

    def tools(self, cls: type[Environment]) -> dict[str, DesignTool]:
        canonical = cls.tools()
        properties: dict[str, dict[str, Any]] = {}
        takers: dict[str, list[str]] = {}
        for info in canonical.values():
            for key, spec in info.parameters["properties"].items():
                takers.setdefault(key, []).append(info.name)
                known = properties.get(key)
                if known is None:
                    properties[key] = dict(spec)
                elif known.get("type") != spec.get("type"):  # two actions disagree: any JSON value
                    properties[key] = {k: v for k, v in known.items() if k not in ("type", "enum", "items")}
                elif "enum" in known or "enum" in spec:  # each action checks its own values
                    either = [*known.get("enum", []), *spec.get("enum", [])]
                    properties[key] = dict(known, enum=list(dict.fromkeys(either)))
                    if "enum" not in known or "enum" not in spec:
                        properties[key].pop("enum")
        for key, names in takers.items():
            said = properties[key].get("description", "")
            properties[key]["description"] = f"{said} (for {', '.join(names)})".strip()
        actions = "; ".join(f"{info.name}: {info.description}" for info in canonical.values())
        parameters = {
            "type": "object",
            "properties": {
                "action": {"type": "string", "description": "What to do.", "enum": list(canonical)},
                **properties,
            },
            "required": ["action"],
        }

        def to_canonical(arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            action = arguments.pop("action", None)
            info = canonical.get(str(action))
            if info is None:
                raise ToolError(f"unknown action {str(action)[:60]!r}")
            # The action's own schema, as if it were offered alone (the union above is looser).
            problem = schema_error(arguments, info.parameters)
            if problem is not None:
                raise ToolError(f"action {info.name!r}: {problem}")
            return info.name, arguments

        name = self.tool_name(cls)
        description = f"Every action on the {cls.name.replace('_', ' ')}, chosen by 'action'. {actions}"
        mutates = any(info.mutates for info in canonical.values())
        return {name: DesignTool(name, description, parameters, mutates, tuple(canonical), to_canonical)}

    def primary(self, cls: type[Environment], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"name": self.tool_name(cls), "arguments": {"action": name, **arguments}}
