"""A list plus a get: every tool that lists records with a key (``Environment.listings``) shows
only a summary of each (its key and a few fields), and a ``get_<noun>`` tool gives one record in
full by its key; the other tools are offered as they are."""

from __future__ import annotations

from typing import Any

from tasks.episodes.designs.base import Design, DesignTool, identity_tool, shows
from tasks.episodes.environment import Environment, Listing, ToolError

__all__ = ["SummaryGet"]


def _get_name(cls: type[Environment], listing: Listing) -> str:
    name = f"get_{listing.noun.replace(' ', '_')}"
    return f"{name}_details" if name in cls.tools() else name


def _detailed(listing: Listing) -> bool:
    return listing.key is not None and listing.state is not None and bool(listing.summary)


class SummaryGet(Design):
    name = "summary_get"
    description = "listings of summaries, and a get for each record"
    reads_observations = True

    def tools(self, cls: type[Environment]) -> dict[str, DesignTool]:
        offered: dict[str, DesignTool] = {}
        for name in cls.tools():
            listing = cls.listings.get(name)
            if listing is None or not _detailed(listing):
                offered[name] = identity_tool(cls, name)
                continue
            offered[name] = self._summarised(cls, name, listing)
            getter = self._getter(cls, name, listing)
            offered[getter.name] = getter
        return offered

    @staticmethod
    def _summarised(cls: type[Environment], name: str, listing: Listing) -> DesignTool:
        info = cls.tools()[name]
        getter = _get_name(cls, listing)
        description = (
            f"{info.description} Each {listing.noun} is shown as {', '.join(listing.summary)} only; "
            f"{getter} gives the rest."
        )

        def shape(arguments: dict[str, Any], observation: Any) -> Any:
            records = observation.get(listing.field) if isinstance(observation, dict) else None
            if not isinstance(records, list):
                return observation
            brief = [
                {key: record[key] for key in listing.summary if key in record}
                if isinstance(record, dict)
                else record
                for record in records
            ]
            return {**observation, listing.field: brief}

        return DesignTool(
            name, description, info.parameters, False, (name,), lambda arguments: (name, arguments), shape
        )

    @staticmethod
    def _getter(cls: type[Environment], listing_tool: str, listing: Listing) -> DesignTool:
        assert listing.key is not None and listing.state is not None
        key, state = listing.key, listing.state
        name = _get_name(cls, listing)

        def read(environment: Environment, arguments: dict[str, Any]) -> Any:
            wanted = str(arguments.get(key, "")).strip().lower()
            records = environment.state_view().get(state) or []
            record = next((r for r in records if str(r.get(key, "")).lower() == wanted), None)
            if record is None:
                raise ToolError(f"no {listing.noun} {str(arguments.get(key))[:40]!r}")
            fields = listing.fields or tuple(record)
            return {field: record[field] for field in fields if field in record}

        parameters = {
            "type": "object",
            "properties": {key: {"type": "string", "description": f"The {listing.noun}'s {key}."}},
            "required": [key],
        }
        description = f"One {listing.noun} in full, by its {key} (as {listing_tool} shows it)."
        return DesignTool(name, description, parameters, False, (listing_tool,), read=read)

    def primary(self, cls: type[Environment], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "arguments": dict(arguments)}

    def plan_call(
        self, cls: type[Environment], call: dict[str, Any], observation: Any, wanted: list[str]
    ) -> list[dict[str, Any]]:
        calls = [self.primary(cls, call["name"], call["arguments"])]
        listing = cls.listings.get(call["name"])
        records = observation.get(listing.field) if listing and isinstance(observation, dict) else None
        if listing is None or not _detailed(listing) or not isinstance(records, list):
            return calls
        # Get, for each value the plan still needs that only a full record shows, the first
        # record that holds it.
        brief = shows(self._summarised(cls, call["name"], listing).shape({}, observation))  # type: ignore[misc]
        fetched: list[str] = []
        for value in wanted:
            if value in brief:
                continue
            holder = next((r for r in records if isinstance(r, dict) and value in shows(r)), None)
            if holder is None or str(holder.get(listing.key)) in fetched:
                continue
            fetched.append(str(holder.get(listing.key)))
            calls.append({"name": _get_name(cls, listing), "arguments": {listing.key: fetched[-1]}})
        return calls
