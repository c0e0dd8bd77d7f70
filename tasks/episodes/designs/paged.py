"""Listings in pages: every tool that lists records (``Environment.listings``) takes a ``page``
and answers one page of ``PAGE_SIZE`` records, with the page's number and the count of pages;
the other tools are offered as they are."""

from __future__ import annotations

from typing import Any

from tasks.episodes.designs.base import Design, DesignTool, identity_tool, shows
from tasks.episodes.environment import Environment, Listing, ToolError

__all__ = ["PAGE_SIZE", "Paged"]

PAGE_SIZE = 5


def _page(arguments: dict[str, Any]) -> int:
    page = arguments.get("page", 1)
    if isinstance(page, float) and page % 1 == 0:
        page = int(page)
    if isinstance(page, bool) or not isinstance(page, int) or not 1 <= page <= 10_000:
        raise ToolError("page must be a whole number from 1")
    return page


class Paged(Design):
    name = "paged"
    description = "listings answered one page at a time"
    reads_observations = True

    def tools(self, cls: type[Environment]) -> dict[str, DesignTool]:
        offered = {name: identity_tool(cls, name) for name in cls.tools()}
        for name, listing in cls.listings.items():
            offered[name] = self._paged(cls, name, listing)
        return offered

    @staticmethod
    def _paged(cls: type[Environment], name: str, listing: Listing) -> DesignTool:
        info = cls.tools()[name]
        page = {"type": "integer", "description": "Which page, from 1 (the default)."}
        parameters = dict(info.parameters, properties={**info.parameters["properties"], "page": page})
        description = (
            f"{info.description} Answers {PAGE_SIZE} {listing.noun}s a page, with 'page' and 'pages' "
            "(how many there are); ask for the next page to see more."
        )

        def to_canonical(arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            _page(arguments)
            arguments.pop("page", None)
            return name, arguments

        def shape(arguments: dict[str, Any], observation: Any) -> Any:
            records = observation.get(listing.field) if isinstance(observation, dict) else None
            if not isinstance(records, list):
                return observation
            number = _page(arguments)
            pages = max(1, -(-len(records) // PAGE_SIZE))
            shown = records[(number - 1) * PAGE_SIZE : number * PAGE_SIZE]
            return {**observation, listing.field: shown, "page": number, "pages": pages}

        return DesignTool(name, description, parameters, False, (name,), to_canonical, shape)

    def primary(self, cls: type[Environment], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "arguments": dict(arguments)}

    def plan_call(
        self, cls: type[Environment], call: dict[str, Any], observation: Any, wanted: list[str]
    ) -> list[dict[str, Any]]:
        listing = cls.listings.get(call["name"])
        records = observation.get(listing.field) if listing and isinstance(observation, dict) else None
        if listing is None or not isinstance(records, list):
            return [self.primary(cls, call["name"], call["arguments"])]
        # Turn pages until every value the plan still needs that this listing holds was seen.
        whole = shows(observation)
        header = shows({key: value for key, value in observation.items() if key != listing.field})
        missing = [value for value in wanted if value in whole and value not in header]
        calls = []
        for number in range(1, max(1, -(-len(records) // PAGE_SIZE)) + 1):
            calls.append({"name": call["name"], "arguments": {**call["arguments"], "page": number}})
            seen = shows(records[(number - 1) * PAGE_SIZE : number * PAGE_SIZE])
            missing = [value for value in missing if value not in seen]
            if not missing:
                break
        return calls
