"""A search with filters: every tool that lists records (``Environment.listings``) is offered as
``search_<noun>s``, taking the listing's own parameters and three optional filters: ``contains``
(records whose text holds it), ``sort_by`` (a field) and ``descending``; the other tools are
offered as they are."""

from __future__ import annotations

import json
from typing import Any

from tasks.episodes.designs.base import Design, DesignTool, identity_tool
from tasks.episodes.environment import Environment, Listing, ToolError

__all__ = ["SearchFilters"]


def _search_name(cls: type[Environment], name: str, listing: Listing) -> str:
    renamed = f"search_{listing.noun.replace(' ', '_')}s"
    return renamed if renamed == name or renamed not in cls.tools() else f"{renamed}_filtered"


def _sort_key(field: str) -> Any:
    def key(record: Any) -> tuple[int, Any]:
        value = record.get(field) if isinstance(record, dict) else record
        if isinstance(value, int | float) and not isinstance(value, bool):
            return (0, value)
        return (1, str(value).lower())

    return key


class SearchFilters(Design):
    name = "search_filters"
    description = "searches with filters in place of listings"

    def tools(self, cls: type[Environment]) -> dict[str, DesignTool]:
        offered: dict[str, DesignTool] = {}
        for name in cls.tools():
            listing = cls.listings.get(name)
            tool = identity_tool(cls, name) if listing is None else self._search(cls, name, listing)
            offered[tool.name] = tool
        return offered

    @staticmethod
    def _search(cls: type[Environment], name: str, listing: Listing) -> DesignTool:
        info = cls.tools()[name]
        fields = list(listing.fields or listing.summary)
        filters: dict[str, dict[str, Any]] = {
            "contains": {"type": "string", "description": f"Only {listing.noun}s whose text holds this."}
        }
        if fields:
            filters["sort_by"] = {"type": "string", "description": "Order by this field.", "enum": fields}
            filters["descending"] = {"type": "boolean", "description": "Largest or latest first."}
        clash = [key for key in filters if key in info.parameters["properties"]]
        if clash:  # the listing already takes such a parameter: offered as it is
            return identity_tool(cls, name)
        parameters = dict(info.parameters, properties={**info.parameters["properties"], **filters})
        renamed = _search_name(cls, name, listing)
        description = f"{info.description} Filters: contains, " + ("sort_by, descending." if fields else "")

        def to_canonical(arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            if len(str(arguments.get("contains") or "")) > 200:
                raise ToolError("contains is too long (at most 200 characters)")
            for key in filters:
                arguments.pop(key, None)
            return name, arguments

        def shape(arguments: dict[str, Any], observation: Any) -> Any:
            records = observation.get(listing.field) if isinstance(observation, dict) else None
            if not isinstance(records, list):
                return observation
            text = str(arguments.get("contains") or "").strip().lower()
            chosen = [r for r in records if text in json.dumps(r, ensure_ascii=False, default=str).lower()]
            field = arguments.get("sort_by")
            if field in fields:
                chosen.sort(key=_sort_key(str(field)), reverse=bool(arguments.get("descending")))
            return {**observation, listing.field: chosen}

        return DesignTool(renamed, description, parameters, False, (name,), to_canonical, shape)

    def primary(self, cls: type[Environment], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        listing = cls.listings.get(name)
        tool = name if listing is None else self._search(cls, name, listing).name
        return {"name": tool, "arguments": dict(arguments)}
