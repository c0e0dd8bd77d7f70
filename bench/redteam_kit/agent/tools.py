"""Offered (renamed) tools mapped back to the environments' tools, and the script steps: calls, paged
listings, details.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

from scoring import function_of
from tasks.episodes import environment_class
from tasks.episodes.environments import drawn_environments

from ..inverter import match_tool

#: What the agent says when the tool a request needs is not offered, and when a value is missing.
LACK_TEXT = "I don't have a tool that can do that right now, so I haven't changed anything."


ASK_TEXT = "I can do that, but I need one detail from you first: which one exactly?"


@dataclass(frozen=True)
class _Shown:
    name: str
    params: dict[str, str]  # environment parameter -> shown parameter
    #: Shown arguments every call of this tool carries (a one-tool design's action).
    fixed: dict[str, Any] = field(default_factory=dict)
    #: Optional parameters the environment's tool lacks, by role ("page") -> shown parameter.
    extras: dict[str, str] = field(default_factory=dict)


@cache
def _environment_functions() -> tuple[tuple[str, str, dict[str, Any], bool], ...]:
    """(environment, tool, OpenAI function, mutates) for every generated environment's tools."""
    rows = []
    for env in drawn_environments():
        try:
            cls = environment_class(env)
            infos = cls.tools()
            for tool in cls.openai_tools():
                function = function_of(tool)
                info = infos.get(function["name"])
                rows.append((env, function["name"], function, bool(getattr(info, "mutates", False))))
        except Exception:  # an environment this agent cannot read: it simply does not map there
            continue
    return tuple(rows)


def _map_tools(tools: Sequence[dict[str, Any]]) -> tuple[str | None, dict[str, _Shown]]:
    """(the environment the tools belong to, environment tool -> how it is offered). A tool is
    matched as a shuffle of an environment's tool (redteam.match_tool), of one with extra optional
    parameters (filters: left out of every call), or as one tool for every action of an
    environment, the action named by an enum parameter."""
    found: dict[str, dict[str, _Shown]] = {}
    getters: dict[str, _Shown] = {}
    for tool in tools:
        try:
            offered = function_of(tool)
        except Exception:
            continue
        for env, name, original, _ in _environment_functions():
            try:
                renames = match_tool(original, offered) or match_tool(
                    original, _without_extras(original, offered)
                )
            except Exception:
                renames = None
            if renames is not None:
                shown = _Shown(str(offered.get("name")), renames, extras=_extra_roles(offered, renames))
                found.setdefault(env, {}).setdefault(name, shown)
        for env, name, shown in _one_tool_actions(offered):
            found.setdefault(env, {}).setdefault(name, shown)
        getter = _getter(offered)
        if getter is not None:
            getters[getter[0]] = getter[1]
    if not found:
        return None, {}
    env = max(found, key=lambda name: len(found[name]))
    mapped = dict(found[env])
    for listing, shown in getters.items():
        if listing in mapped:
            mapped[DETAIL + listing] = shown
    return env, mapped


#: The pseudo-tool name under which a listing's "get one record in full" tool is mapped.
DETAIL = "detail:"


_GETTER_PARAM = re.compile(r"The .+'s (\w+)\.")


_GETTER_OF = re.compile(r"\(as (\w+) shows it\)")


def _getter(offered: dict[str, Any]) -> tuple[str, _Shown] | None:
    """(the listing tool, how its record getter is offered) when ``offered`` gets one record of a
    listing in full by its key ("One product in full, by its sku (as search_products shows it)")."""
    parameters = offered.get("parameters") or {}
    properties = parameters.get("properties") or {}
    of = _GETTER_OF.search(str(offered.get("description", "")))
    if of is None or len(properties) != 1:
        return None
    ((shown_key, prop),) = properties.items()
    key = _GETTER_PARAM.fullmatch(str(prop.get("description", "")))
    if key is None:
        return None
    return of.group(1), _Shown(str(offered.get("name")), {key.group(1): shown_key})


def _extra_roles(offered: dict[str, Any], renames: dict[str, str]) -> dict[str, str]:
    """The offered tool's extra parameters this agent can fill, by role: a page number."""
    properties = (offered.get("parameters") or {}).get("properties") or {}
    pages = [
        key
        for key, prop in properties.items()
        if key not in renames.values()
        and prop.get("type") == "integer"
        and "page" in str(prop.get("description", "")).lower()
    ]
    return {"page": pages[0]} if pages else {}


def _without_extras(original: dict[str, Any], offered: dict[str, Any]) -> dict[str, Any]:
    """``offered`` less the optional parameters whose descriptions ``original`` does not have."""
    parameters = offered.get("parameters") or {}
    required = set(parameters.get("required") or ())
    known = {
        str(p.get("description"))
        for p in ((original.get("parameters") or {}).get("properties") or {}).values()
    }
    kept = {
        key: prop
        for key, prop in (parameters.get("properties") or {}).items()
        if key in required or str(prop.get("description")) in known
    }
    return dict(offered, parameters=dict(parameters, properties=kept))


@cache
def _union_descriptions(env: str) -> dict[str, dict[str, str]]:
    """Per tool of ``env``, parameter -> its description in a one-tool design's union of every
    action's parameters (the first declaring tool's description, then "(for tool, tool)")."""
    first: dict[str, str] = {}
    takers: dict[str, list[str]] = {}
    rows = [(name, function) for e, name, function, _ in _environment_functions() if e == env]
    for name, function in rows:
        for key, prop in ((function.get("parameters") or {}).get("properties") or {}).items():
            first.setdefault(key, str(prop.get("description", "")))
            takers.setdefault(key, []).append(name)
    union = {key: f"{first[key]} (for {', '.join(names)})".strip() for key, names in takers.items()}
    return {
        name: {key: union[key] for key in ((function.get("parameters") or {}).get("properties") or {})}
        for name, function in rows
    }


def _one_tool_actions(offered: dict[str, Any]) -> list[tuple[str, str, _Shown]]:
    """(environment, tool, how it is offered) for each action of a tool whose enum parameter names
    two or more of an environment's tools."""
    properties = (offered.get("parameters") or {}).get("properties") or {}
    by_description = {str(prop.get("description")): key for key, prop in properties.items()}
    rows: list[tuple[str, str, _Shown]] = []
    for action_key, prop in properties.items():
        actions = [str(value) for value in prop.get("enum") or ()]
        for env in drawn_environments():
            unions = _union_descriptions(env)
            if sum(action in unions for action in actions) < 2:
                continue
            for action in actions:
                wanted = unions.get(action)
                if wanted is None or any(text not in by_description for text in wanted.values()):
                    continue
                params = {key: by_description[text] for key, text in wanted.items()}
                rows.append((env, action, _Shown(str(offered.get("name")), params, {action_key: action})))
    return rows


def _mutating(env: str | None) -> set[str]:
    return {name for e, name, _, mutates in _environment_functions() if e == env and mutates}


@dataclass
class _Event:
    kind: str  # "user", "call", "text"
    text: str = ""
    observation: Any = None


def _events(messages: Sequence[dict[str, Any]]) -> list[_Event]:
    results = {
        str(message.get("tool_call_id")): message.get("content")
        for message in messages
        if message.get("role") == "tool"
    }
    events: list[_Event] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            events.append(_Event("user", str(message.get("content") or "")))
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            for item in calls:
                raw = results.get(str(item.get("id")), "{}")
                try:
                    observation = json.loads(raw) if isinstance(raw, str) else raw
                except ValueError:
                    observation = {"text": raw}
                events.append(_Event("call", observation=observation))
            if not calls:
                events.append(_Event("text", str(message.get("content") or "")))
    return events


@dataclass
class _Listen:
    """The script wants the next user message."""


@dataclass
class _Has:
    tool: str
    #: Answered from the tools offered now even in replay (a design's tools do not change within
    #: an episode; only a miss_func turn holds one back, and that one is asked for non-statically).
    static: bool = False


@dataclass
class _Call:
    tool: str
    arguments: dict[str, Any]
    #: Values for parameters the environment's tool does not have but its offered form may: by
    #: role ("page"), dropped where the offered tool has no such parameter.
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Say:
    text: str


class _Missing(Exception):
    """The tool the next call needs is not offered."""


class _Ask(Exception):
    """A value the request needs is not in the text."""


Script = Generator[Any, Any, Any]


class Agent(Protocol):
    """What a scenario's script asks of the agent that plays it (``agent.ScriptedAgent``): the
    scripts take it by this protocol, so they need not import the agent that imports them."""

    def turn(self, body: Callable[[str], Script], text: str) -> Generator[Any, Any, str]: ...


#: Pages of one listing read at most (a paged design answers a few records a page).
MAX_PAGES = 5


def _call(
    tool: str,
    until: Callable[[dict[str, Any]], bool] | None = None,
    relevant: Callable[[dict[str, Any]], bool] | None = None,
    from_end: bool = False,
    **arguments: Any,
) -> Generator[Any, Any, Any]:
    """One call of the environment's ``tool``, as its offered form takes it; a listing answered in
    pages is read page after page (their records joined) until ``until`` holds or none is left."""
    offered = yield _Has(tool)
    if not offered:
        raise _Missing(tool)
    given = {key: value for key, value in arguments.items() if value is not None}
    observation = yield _Call(tool, given, {"page": 1})
    seen = observation if isinstance(observation, dict) else {}
    page, pages = seen.get("page"), seen.get("pages")
    while (
        isinstance(page, int)
        and isinstance(pages, int)
        and page < min(pages, MAX_PAGES)
        and not (until is not None and until(seen))
    ):
        page += 1
        more = yield _Call(tool, given, {"page": page})
        if not isinstance(more, dict):
            break
        seen = {
            key: [*value, *more[key]]
            if isinstance(value, list) and isinstance(more.get(key), list)
            else value
            for key, value in seen.items()
        }
    if until is not None and not until(seen) and (yield _Has(DETAIL + tool, static=True)):
        seen = yield from _details(tool, seen, until, relevant, from_end)
    return seen


#: Records read in full at most after one listing (a list-plus-get design shows summaries).
MAX_DETAILS = 4


def _details(
    tool: str,
    seen: dict[str, Any],
    until: Callable[[dict[str, Any]], bool],
    relevant: Callable[[dict[str, Any]], bool] | None = None,
    from_end: bool = False,
) -> Generator[Any, Any, dict[str, Any]]:
    """The listing with its records read in full one by one (the listing's get tool), in order,
    until ``until`` holds."""
    field_name = next((key for key, value in seen.items() if isinstance(value, list)), None)
    if field_name is None:
        return seen
    records = list(seen[field_name])
    wanted = [
        index
        for index, record in enumerate(records)
        if isinstance(record, dict) and record and (relevant is None or relevant(record))
    ]
    for index in (wanted[::-1] if from_end else wanted)[:MAX_DETAILS]:
        record = records[index]
        # The record's key: an id field when it has one, else the first field a summary shows.
        key = next((name for name in ("sku", "id", "key") if name in record), next(iter(record)))
        value = record[key]
        full = yield _Call(DETAIL + tool, {key: value})
        if isinstance(full, dict) and "error" not in full:
            records[index] = {**record, **full}
        seen = {**seen, field_name: records}
        if until(seen):
            break
    return seen
