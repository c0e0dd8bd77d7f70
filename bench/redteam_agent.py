"""Red team for episodes: ``ScriptedAgent``, a model-free agent that plays the public scenarios.

No model, only the public code: it maps the offered (renamed) tools back to the environments'
tools by their descriptions (``match_tool``, as bench/redteam.py does for single calls),
recognises which scenario kind it is playing from keywords of the first user turn (quoted text
removed first; the phrasing stage's "purpose" words count as keywords too), reads the values off
the text by their shapes (names from the public name lists, IBANs, order ids, amounts, dates,
times, products, the fixed reference/reason/body lists), then replays the public scenario's plan
call for call, taking ids and later arguments from the observations. For a turn whose tool is not
offered it says it lacks a tool; for a turn that lacks a value it asks.

Tool designs that only reshape the same actions do not stop it: a tool with extra optional
parameters (filters) maps back by its own ones; one tool whose enum parameter names every action
maps back action by action; a listing answered in pages is read page after page, and a listing
of summaries record by record with its getter, until what the plan needs shows.

The agent keeps no state between steps: each step replays its script over the conversation so
far (the observations it already got are fed back), so it can answer any step of any episode,
``agent_step`` prefixes included. Anything it does not recognise (a scenario kind, a tool design)
ends the turn in text; it never raises.

Baselines beside it (``NeverCallAgent``, ``CannotHelpAgent``, ``ReadEveryToolAgent``), and
``play_agent`` / ``episode_table`` to score any of them in-process as the validator would::

    PYTHONPATH=. .venv/bin/python bench/redteam_agent.py [--episodes 1000] [--seed heldout] [--phrased]
        [--baselines] [--failures N]
    PYTHONPATH=. .venv/bin/python bench/redteam_agent.py --serve 8011   # for subnet.evaluate --episodes
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import importlib.util
import json
import re
import sys
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

# Run as a script, this file's folder comes first on sys.path and its name would hide the package.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

from scoring import check, function_of  # noqa: E402
from tasks.episodes import Episode, EpisodeRunner, agent_step, environment_class, variant  # noqa: E402
from tasks.episodes.checking import check_episode  # noqa: E402
from tasks.episodes.environments import drawn_environments  # noqa: E402
from tasks.library.common import CITY, FIRST_NAMES, LAST_NAMES, STREET_ADDRESS  # noqa: E402

__all__ = [
    "CannotHelpAgent",
    "EpisodeFigures",
    "NeverCallAgent",
    "ReadEveryToolAgent",
    "ScriptedAgent",
    "episode_table",
    "play_agent",
]

#: What the agent says when the tool a request needs is not offered, and when a value is missing.
LACK_TEXT = "I don't have a tool that can do that right now, so I haven't changed anything."
ASK_TEXT = "I can do that, but I need one detail from you first: which one exactly?"


def _sibling(name: str) -> ModuleType:
    """bench/<name>.py as a module (shared with bench/integrity.py's loader: one copy per process)."""
    module_name = f"bench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
    return module


# --- tools: offered (renamed) -> environment names -------------------------------------------


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
    match_tool = _sibling("redteam").match_tool
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


# --- the conversation as events ---------------------------------------------------------------


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


# --- what a script yields ---------------------------------------------------------------------


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


# --- reading values off the text by their shapes ----------------------------------------------

_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|`([^`]+)`')
_IBAN = re.compile(r"\b[A-Z]{2}\d{18}\b")
_NUMBER = re.compile(r"(?<![\w.@/-])\d+(?:\.\d+)?(?![\w/-]|\.\d)")
_ORDER = re.compile(r"\bORD-\d+\b", re.IGNORECASE)
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})(?::\d{2})?(?:\s*([ap]m))?", re.IGNORECASE)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")  # fmt: skip
_MONTH = "|".join([*_MONTHS, *(m[:3] for m in _MONTHS)])
_DATES = (
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), "ymd"),
    (re.compile(r"\b(\d{2})/(\d{2})/(\d{4})\b"), "mdy"),
    (re.compile(rf"\b({_MONTH}) (\d{{1,2}}),? (\d{{4}})\b", re.IGNORECASE), "Mdy"),
    (re.compile(rf"\b(\d{{1,2}}) ({_MONTH}) (\d{{4}})\b", re.IGNORECASE), "dMy"),
)
_WORD_NUMBERS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_FIRST, _LAST = "|".join(FIRST_NAMES), "|".join(LAST_NAMES)
#: A person: a first and a last name of the public lists, or one of them with another capitalised
#: word (a near-duplicate decoy spells one of the two differently; the text's spelling is the one).
_PERSON = re.compile(rf"\b(?:(?:{_FIRST}) (?:{_LAST})|(?:{_FIRST}) [A-Z][a-z]+|[A-Z][a-z]+ (?:{_LAST}))\b")


def _unquoted(text: str) -> str:
    return _QUOTED.sub(" ", text)


def _quoted(text: str) -> list[str]:
    return [next(group for group in match.groups() if group) for match in _QUOTED.finditer(text)]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9'_]+", text.lower())


def _find_listed(text: str, options: Iterable[str]) -> str | None:
    """The longest of ``options`` the text contains (case-insensitive), as the option spells it."""
    lowered = text.lower()
    best = None
    for option in options:
        if option.lower() in lowered and (best is None or len(option) > len(best)):
            best = option
    return best


def _date(text: str) -> str | None:
    for regex, order in _DATES:
        match = regex.search(text)
        if match is None:
            continue
        a, b, c = match.groups()
        try:
            if order == "ymd":
                day = _dt.date(int(a), int(b), int(c))
            elif order == "mdy":
                day = _dt.date(int(c), int(a), int(b))
            elif order == "Mdy":
                day = _dt.date(int(c), _month(a), int(b))
            else:
                day = _dt.date(int(c), _month(b), int(a))
        except ValueError:
            continue
        return day.isoformat()
    return None


def _month(name: str) -> int:
    lowered = name.lower()[:3]
    return next(i + 1 for i, month in enumerate(_MONTHS) if month.lower().startswith(lowered))


def _times(text: str) -> list[str]:
    found = []
    for hour, minute, half in _TIME.findall(text):
        hours = int(hour) % 12 + (12 if half.lower() == "pm" else 0) if half else int(hour)
        found.append(f"{hours:02d}:{minute}")
    return found


def _small_number(text: str, *leads: str) -> int | None:
    """A count said as a word or as one or two digits; after one of ``leads`` when one is there."""
    lowered = text.lower().replace("one of those", " ")
    for lead in leads:
        match = re.search(rf"\b{lead} (\w+)", lowered)
        if match and (match.group(1) in _WORD_NUMBERS or match.group(1).isdigit()):
            word = match.group(1)
            return _WORD_NUMBERS[word] if word in _WORD_NUMBERS else int(word)
    for word in _words(lowered):
        if word in _WORD_NUMBERS:
            return _WORD_NUMBERS[word]
        if word.isdigit() and len(word) <= 2:
            return int(word)
    return None


def _amounts(text: str) -> list[float]:
    return [float(found) for found in _NUMBER.findall(text)]


# --- recognising the scenario kind ------------------------------------------------------------


def _fuzzy_has(words: list[str], keyword: str) -> bool:
    """A keyword (one or more words) in the text, each word allowing a typo."""
    parts = keyword.split()
    for start in range(len(words) - len(parts) + 1):
        if all(
            word == part or (len(part) > 4 and SequenceMatcher(None, word, part).ratio() >= 0.8)
            for word, part in zip(words[start : start + len(parts)], parts, strict=False)
        ):
            return True
    return False


def _score(text: str, keywords: Sequence[str]) -> int:
    lowered = " ".join(_words(_unquoted(text)))
    exact = sum(1 for keyword in keywords if f" {keyword} " in f" {lowered} ")
    if exact:
        return 2 * exact
    words = lowered.split()
    return sum(1 for keyword in keywords if _fuzzy_has(words, keyword))


@dataclass(frozen=True)
class _Kind:
    name: str
    keywords: tuple[str, ...]
    script: Callable[[ScriptedAgent, str], Script]
    #: Shapes that decide the kind before keywords (a regex over the raw text).
    marker: re.Pattern[str] | None = None


# --- the agent --------------------------------------------------------------------------------


@dataclass
class ScriptedAgent:
    """See the module docstring. ``ask`` for ``EpisodeRunner``; ``respond`` is the same, sync."""

    #: Per step: which kind it recognised (for the figures), None when it did not.
    last_kind: str | None = None
    tool_cache: dict[str, tuple[str | None, dict[str, _Shown]]] = field(default_factory=dict)

    async def ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        return self.respond(messages, tools)

    def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        try:
            return self._respond(messages, tools)
        except Exception:  # whatever this agent does not understand ends the turn, never the run
            return {"role": "assistant", "content": "Done."}

    def _tools(self, tools: list[dict[str, Any]]) -> tuple[str | None, dict[str, _Shown]]:
        key = json.dumps(tools, sort_keys=True)
        if key not in self.tool_cache:
            if len(self.tool_cache) > 512:
                self.tool_cache.clear()
            self.tool_cache[key] = _map_tools(tools)
        return self.tool_cache[key]

    def _respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        env, shown = self._tools(tools)
        events = _events(messages)
        script = self._episode(env)
        index = 0
        action = script.send(None)
        for _ in range(10_000):
            live = index >= len(events)
            if isinstance(action, _Listen):
                while index < len(events) and events[index].kind != "user":
                    index += 1  # the history went on where the script had ended its turn
                if index >= len(events):
                    return _text("Done.")
                text = events[index].text
                index += 1
                action = script.send(text)
            elif isinstance(action, _Has):
                if live or action.static:
                    action = script.send(action.tool in shown)
                else:
                    action = script.send(
                        not (events[index].kind == "text" and events[index].text == LACK_TEXT)
                    )
            elif isinstance(action, _Call):
                if live:
                    target = shown.get(action.tool)
                    if target is None:
                        return _text(LACK_TEXT)
                    arguments = {
                        **target.fixed,
                        **{target.params.get(key, key): value for key, value in action.arguments.items()},
                        **{
                            target.extras[role]: v
                            for role, v in action.extras.items()
                            if role in target.extras
                        },
                    }
                    return _tool_call(target.name, arguments, len(events))
                event = events[index]
                if event.kind == "call":
                    index += 1
                    action = script.send(event.observation)
                else:  # the history ended the turn earlier than the script would: it goes on from there
                    action = script.send({})
            elif isinstance(action, _Say):
                if live:
                    return _text(action.text)
                while index < len(events) and events[index].kind == "call":
                    index += 1
                if index < len(events) and events[index].kind == "text":
                    index += 1
                action = script.send(None)
            else:
                return _text("Done.")
        return _text("Done.")

    # -- the episode's script: recognise, then play turn by turn ---------------------------------

    def _episode(self, env: str | None) -> Script:
        try:
            text = yield _Listen()
            kinds = _KINDS.get(env or "", ())
            kind = _recognise(kinds, text)
            self.last_kind = kind.name if kind else None
            if kind is None:
                text = yield _Say("I can't help with that with these tools.")
                while True:
                    yield _Say("Done.")
                    yield _Listen()
            yield from kind.script(self, text)
            while True:
                yield _Say("Done.")
                yield _Listen()
        except GeneratorExit:
            raise

    def turn(self, body: Callable[[str], Script], text: str) -> Generator[Any, Any, str]:
        """Play one user turn with ``body`` (a script of calls); on a missing tool say so and try
        again in the next turn; on a missing value ask for it and read the answer with the request.
        Returns the next user message."""
        while True:
            try:
                answer = yield from body(text)
                break
            except _Missing:
                yield _Say(LACK_TEXT)
                yield _Listen()
            except _Ask:
                yield _Say(ASK_TEXT)
                more = yield _Listen()
                text = f"{text}\n{more}"
        yield _Say(str(answer or "Done."))
        return (yield _Listen())


def _text(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _tool_call(name: str, arguments: dict[str, Any], index: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"agent_{index}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def _recognise(kinds: Sequence[_Kind], text: str) -> _Kind | None:
    for kind in kinds:
        if kind.marker is not None and kind.marker.search(text):
            return kind
    scored = [(_score(text, kind.keywords), -position, kind) for position, kind in enumerate(kinds)]
    best = max(scored, key=lambda row: (row[0], row[1]), default=None)
    if best is None or best[0] == 0:
        return None
    return best[2]


# --- bank -------------------------------------------------------------------------------------

_BANK_REFERENCES = ("Thanks!", "Dinner last week", "Concert tickets", "Half of the taxi", "Birthday gift")
_BILLERS = (
    "City Power & Light",
    "Metro Water",
    "Northwind Telecom",
    "FitLife Gym",
    "SafeHome Insurance",
    "StreamPlus",
)
_MONTHLY_REFERENCE = re.compile(r"\b(?:Rent|Account) \d{4}-\d{2}\b")


def _payee(text: str) -> str | None:
    biller = _find_listed(text, _BILLERS)
    if biller is not None:
        return biller
    match = _PERSON.search(text)
    return match.group(0) if match else None


def _reference(text: str) -> str | None:
    for quoted in _quoted(text):
        if quoted in _BANK_REFERENCES or _MONTHLY_REFERENCE.fullmatch(quoted):
            return quoted
    monthly = _MONTHLY_REFERENCE.search(text)
    if monthly:
        return monthly.group(0)
    listed = _find_listed(text, _BANK_REFERENCES)
    if listed is not None:
        return listed
    quoted_all = [q for q in _quoted(text) if not _PERSON.fullmatch(q) and q not in _BILLERS]
    return quoted_all[-1] if quoted_all else None


def _strip(text: str, *parts: str | None) -> str:
    for part in parts:
        if part:
            text = text.replace(part, " ")
    return _IBAN.sub(" ", _unquoted(text))


def _accounts(observation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    by_kind: dict[str, dict[str, Any]] = {}
    for account in observation.get("accounts") or []:
        name = str(account.get("name", "")).lower()
        for word in ("checking", "savings", "credit", "travel"):
            if word in name:
                by_kind.setdefault(word, account)
    return by_kind


def _bank_repeat(agent: ScriptedAgent, text: str) -> Script:
    state: dict[str, Any] = {}

    def first(text: str) -> Script:
        payee, reference = _payee(text), _reference(text)
        if payee is None or reference is None:
            raise _Ask
        accounts = _accounts((yield from _call("list_accounts")))
        checking = accounts["checking"]["id"]

        def found(seen: dict[str, Any]) -> bool:
            return _latest_payment(seen, payee) is not None

        def payee_row(row: dict[str, Any]) -> bool:
            return row.get("kind", "payment") == "payment" and _paid_to(row, payee)

        listing = yield from _call("list_transactions", until=found, relevant=payee_row, account_id=checking)
        row = _latest_payment(listing, payee)
        if row is None and listing.get("more"):
            listing = yield from _call(
                "list_transactions", until=found, relevant=payee_row, account_id=checking, limit=50
            )
            row = _latest_payment(listing, payee)
        if row is None:
            return "I could not find an earlier payment to them."
        done = yield from _call(
            "pay",
            payee=row["counterparty"],
            from_account=checking,
            amount=-row["amount"],
            reference=reference,
        )
        state["account"] = checking
        return f"Paid. {done.get('balance_after', '')}"

    def balance(text: str) -> Script:
        seen = yield from _call("get_balance", account_id=state.get("account", ""))
        return f"The balance is {seen.get('balance')}."

    text = yield from agent.turn(first, text)
    yield from agent.turn(balance, text)


def _latest_payment(listing: dict[str, Any], payee: str) -> dict[str, Any] | None:
    for row in listing.get("transactions") or []:
        if row.get("kind", "payment") == "payment" and _paid_to(row, payee) and "amount" in row:
            return row
    return None


def _paid_to(row: dict[str, Any], payee: str) -> bool:
    """Whether a row (or its summary, which may not show the counterparty) can be a payment to ``payee``."""
    return str(row.get("counterparty", payee)).lower() == payee.lower()


def _bank_pay(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        payee, reference = _payee(text), _reference(text)
        rest = _strip(text, reference, payee)
        amounts = _amounts(rest)
        if payee is None or reference is None or not amounts:
            raise _Ask
        label = "savings" if "savings" in _unquoted(text).lower() else "checking"
        accounts = _accounts((yield from _call("list_accounts")))
        done = yield from _call(
            "pay", payee=payee, from_account=accounts[label]["id"], amount=amounts[-1], reference=reference
        )
        return f"Paid; {done.get('balance_after', '')} left."

    yield from agent.turn(first, text)


def _bank_card(agent: ScriptedAgent, text: str) -> Script:
    state: dict[str, Any] = {}

    def first(text: str) -> Script:
        def card_balance(seen: dict[str, Any]) -> bool:
            return "balance" in _accounts(seen).get("credit", {})

        def is_card(account: dict[str, Any]) -> bool:
            return "credit" in str(account.get("name", "credit")).lower()

        accounts = _accounts((yield from _call("list_accounts", until=card_balance, relevant=is_card)))
        checking, card = accounts["checking"], accounts["credit"]
        yield from _call(
            "transfer", from_account=checking["id"], to_account=card["id"], amount=-card["balance"]
        )
        seen = yield from _call("get_balance", account_id=checking["id"])
        state.update(checking=checking["id"], savings=accounts["savings"]["id"])
        return f"Checking now holds {seen.get('balance')}."

    def top_up(text: str) -> Script:
        amounts = _amounts(_strip(text))
        if not amounts:
            raise _Ask
        yield from _call(
            "transfer", from_account=state["savings"], to_account=state["checking"], amount=amounts[-1]
        )
        return "Moved."

    text = yield from agent.turn(first, text)
    yield from agent.turn(top_up, text)


def _bank_new_payee(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        iban = _IBAN.search(text)
        reference = _reference(text)
        person = _PERSON.search(text)
        amounts = _amounts(_strip(text, reference))
        if iban is None or person is None or reference is None or not amounts:
            raise _Ask
        yield from _call("add_payee", name=person.group(0), iban=iban.group(0))
        accounts = _accounts((yield from _call("list_accounts")))
        yield from _call(
            "pay",
            payee=person.group(0),
            from_account=accounts["checking"]["id"],
            amount=amounts[-1],
            reference=reference,
        )
        return "Added and paid."

    yield from agent.turn(first, text)


# --- home -------------------------------------------------------------------------------------

_DOORS = ("front door", "back door", "garage door", "patio door", "side door", "basement door")


@cache
def _rooms() -> tuple[str, ...]:
    from tasks.library.common import ROOM

    return tuple(str(option.accepted[0]) for option in ROOM.options)


def _room(text: str) -> str | None:
    lowered = text.lower()
    best = None
    for room in _rooms():
        for match in re.finditer(rf"\b{re.escape(room)}(?: (\d+))?\b", lowered):
            found = room + (f" {match.group(1)}" if match.group(1) else "")
            if best is None or len(found) > len(best):
                best = found
    return best


def _home_lock(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        door = _find_listed(text, _DOORS)
        if door is None:
            raise _Ask
        status = yield from _call("get_status")
        if (status.get("doors") or {}).get(door, {}).get("locked") is not True:
            yield from _call("lock_door", door=door, locked=True)
        return f"The {door} is locked."

    yield from agent.turn(first, text)


def _home_leave(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        status = yield from _call("get_status")
        for door, state in (status.get("doors") or {}).items():
            if not state.get("locked"):
                yield from _call("lock_door", door=door, locked=True)
        yield from _call("arm_security", mode="away")
        return "Locked up and armed."

    yield from agent.turn(first, text)


def _home_warmer(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        step = _small_number(_unquoted(text), "by", "warmer")
        if step is None:
            raise _Ask
        status = yield from _call("get_status")
        target = float((status.get("thermostat") or {}).get("target", 20.0))
        yield from _call("set_thermostat", target=target + step)
        return "Done."

    def dim(text: str) -> Script:
        room = _room(text.replace('"', " "))
        if room is None:
            raise _Ask
        status = yield from _call("get_status", room=room)
        brightness = int((status.get("light") or {}).get("brightness", 0))
        yield from _call("set_light", room=room, on=True, brightness=brightness // 2)
        return "Dimmed."

    text = yield from agent.turn(first, text)
    yield from agent.turn(dim, text)


def _home_vacuum(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        status = yield from _call("get_status")
        dark = [room for room, light in (status.get("lights") or {}).items() if str(light).startswith("off")]
        yield from _call("start_vacuum", rooms=dark)
        return f"Battery: {(status.get('vacuum') or {}).get('battery')}%"

    yield from agent.turn(first, text)


# --- mail and calendar ------------------------------------------------------------------------

_REPLIES = (
    "Thanks, I'll review it by Friday.",
    "Sounds good, let's go ahead.",
    "Got it, thanks!",
    "Can we push this to next week?",
    "I'll send the numbers tomorrow morning.",
    "Works for me.",
)
_SERVICES = ("CloudBox", "Payly", "ShopRight", "TravelNest")


def _reply_body(text: str) -> str | None:
    listed = _find_listed(text, _REPLIES)
    if listed is not None:
        return listed
    quoted = [q for q in _quoted(text) if not _PERSON.fullmatch(q)]
    return quoted[-1] if quoted else None


def _mail_reply(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        who, body = _PERSON.search(text), _reply_body(text)
        if who is None or body is None:
            raise _Ask
        found = yield from _call("search_mail", until=_any_result, query="", sender=who.group(0))
        results = found.get("results") or []
        if not results:
            return "No mail from them."
        yield from _call("reply", mail_id=results[0]["id"], body=body)
        return "Replied."

    yield from agent.turn(first, text)


def _any_result(seen: dict[str, Any]) -> bool:
    return bool(seen.get("results"))


def _last_stock_known(seen: dict[str, Any]) -> bool:
    """The dearest product whose stock is shown holds some (or every stock is shown)."""
    results = seen.get("results") or []
    known = [product for product in results if "stock" in product]
    return len(known) == len(results) or any(product.get("stock") for product in known)


def _first_with_sender(seen: dict[str, Any]) -> bool:
    results = seen.get("results") or []
    return not results or "from" in results[0]


def _any_stocked(seen: dict[str, Any]) -> bool:
    return any(product.get("stock") for product in seen.get("results") or [])


def _attended(listing: dict[str, Any], email: str) -> dict[str, Any] | None:
    """The event of a day's listing one of whose attendees' addresses starts with ``email``."""
    return next(
        (
            event
            for event in listing.get("events") or []
            if any(str(a).startswith(email) for a in event.get("attendees", []))
        ),
        None,
    )


def _mail_move(agent: ScriptedAgent, text: str) -> Script:
    state: dict[str, Any] = {}

    def first(text: str) -> Script:
        who, day = _PERSON.search(text), _date(text)
        times = _times(text)
        if who is None or day is None or not times:
            raise _Ask
        email = who.group(0).lower().replace(" ", ".") + "@"
        listing = yield from _call(
            "list_events", until=lambda seen: _attended(seen, email) is not None, date=day
        )
        event = _attended(listing, email)
        if event is None:
            return "No such meeting."
        yield from _call("move_event", event_id=event["id"], date=day, start=times[-1])
        state.update(day=day, email=email)
        return "Moved."

    def ends(text: str) -> Script:
        email = state.get("email", "")

        def shown_end(seen: dict[str, Any]) -> bool:
            event = _attended(seen, email)
            return event is not None and "end" in event

        listing = yield from _call("list_events", until=shown_end, date=state.get("day", ""))
        return "Ends: " + ", ".join(str(e.get("end")) for e in listing.get("events") or [])

    text = yield from agent.turn(first, text)
    yield from agent.turn(ends, text)


def _mail_invite(agent: ScriptedAgent, text: str) -> Script:
    state: dict[str, Any] = {}

    def first(text: str) -> Script:
        who, day = _PERSON.search(text), _date(text)
        times = _times(text)
        title_match = re.search(r"Catch-up with [A-Z][a-z]+", text)
        if who is None or day is None or len(times) < 2 or title_match is None:
            raise _Ask
        found = yield from _call("search_mail", until=_first_with_sender, query="", sender=who.group(0))
        results = found.get("results") or []
        if not results:
            return "No mail from them."
        mail = results[0]
        start, end = sorted(times[:2])
        yield from _call(
            "create_event",
            title=title_match.group(0),
            date=day,
            start=start,
            end=end,
            attendees=[mail["from"]],
        )
        state["mail"] = mail["id"]
        return "Booked."

    def answer(text: str) -> Script:
        body = _reply_body(text)
        if body is None:
            raise _Ask
        yield from _call("reply", mail_id=state.get("mail", ""), body=body)
        return "Replied."

    text = yield from agent.turn(first, text)
    yield from agent.turn(answer, text)


def _mail_code(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        service = _find_listed(text, _SERVICES)
        if service is None:
            raise _Ask
        found = yield from _call("search_mail", until=_any_result, query="code", sender=service)
        results = found.get("results") or []
        if not results:
            return "No code."
        mail = yield from _call("read_mail", mail_id=results[0]["id"])
        codes = re.findall(r"\d{6}", str(mail.get("body", "")))
        return f"The code is {codes[0] if codes else '?'}."

    yield from agent.turn(first, text)


_EVENT_TITLES = ("Project sync", "Design review", "Budget review", "Customer call", "Sprint planning", "1:1")


def _mail_cancel(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        day = _date(text)
        if day is None:
            raise _Ask
        listing = yield from _call("list_events", date=day)
        events = listing.get("events") or []
        quoted = _quoted(text)
        titles = [str(e.get("title")) for e in events]
        title = next((q for q in quoted if q in titles), None) or _find_listed(_strip_dates(text), titles)
        event = next((e for e in events if e.get("title") == title), None)
        if event is None:
            return "No such event."
        yield from _call("cancel_event", event_id=event["id"])
        return "Also that day: " + ", ".join(t for t in titles if t != title)

    yield from agent.turn(first, text)


def _strip_dates(text: str) -> str:
    for regex, _ in _DATES:
        text = regex.sub(" ", text)
    return text


# --- shop -------------------------------------------------------------------------------------

_NOUNS = (
    "cutting board", "chef's knife", "coffee grinder", "kettle", "USB-C cable", "wireless mouse", "laptop",
    "headphones", "monitor", "desk lamp", "throw blanket", "office chair", "tent", "water bottle", "backpack",
)  # fmt: skip
_BRANDS = ("Acme", "Northwind", "Zenith", "Orbit", "Maple", "Vertex", "Nimbus", "Harbor", "Lumen", "Pioneer")
_REASONS = ("arrived damaged", "wrong size", "no longer needed", "not as described", "stopped working")
_NOUN_ALTERNATION = "|".join(re.escape(noun) for noun in _NOUNS)
_PRODUCT = re.compile(rf"\b(?:{'|'.join(_BRANDS)}) (?:{_NOUN_ALTERNATION})(?: Pro| Mini| XL| Lite)?(?![\w-])")


@cache
def _address_regex() -> re.Pattern[str]:
    _, streets, suffixes = STREET_ADDRESS.parts
    cities = [re.escape(str(option.accepted[0])) for option in CITY.options]
    return re.compile(
        rf"\b(\d+ (?:{'|'.join(map(re.escape, streets))}) (?:{'|'.join(suffixes)})),? ({'|'.join(cities)})"
    )


def _address(text: str) -> str | None:
    match = _address_regex().search(text)
    return f"{match.group(1)}, {match.group(2)}" if match else None


def _shop_cheapest(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        noun = _find_listed(text, _NOUNS)
        address = _address(text)
        count = _small_number(_strip(text, address), "how many", "order")
        if noun is None or address is None or count is None:
            raise _Ask
        found = yield from _call("search_products", until=_any_stocked, query=noun)
        stocked = [p for p in found.get("results") or [] if p.get("stock")]
        if not stocked:
            return "Nothing in stock."
        yield from _call("add_to_cart", sku=stocked[0]["sku"], quantity=count)
        order = yield from _call("checkout", address=address)
        return f"Order {order.get('id')}."

    yield from agent.turn(first, text)


def _shop_cancel(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        order = _ORDER.search(text)
        if order is None:
            raise _Ask
        order_id = order.group(0).upper()
        status = yield from _call("order_status", order_id=order_id)
        if status.get("status") == "processing":
            yield from _call("cancel_order", order_id=order_id)
        return f"It was {status.get('status')}."

    yield from agent.turn(first, text)


def _shop_return(agent: ScriptedAgent, text: str) -> Script:
    state: dict[str, Any] = {}

    def first(text: str) -> Script:
        order, reason = _ORDER.search(text), _find_listed(text, _REASONS)
        if order is None or reason is None:
            raise _Ask
        seen = yield from _call("order_status", order_id=order.group(0).upper())
        items = seen.get("items") or []
        name = _find_listed(text, [str(item.get("name")) for item in items])
        item = next((i for i in items if i.get("name") == name), None)
        if item is None:
            return "No such item."
        done = yield from _call("return_item", order_id=seen["id"], sku=item["sku"], reason=reason)
        state["address"] = seen.get("address", "")
        return f"Return {done.get('id')}."

    def reorder(text: str) -> Script:
        product = _PRODUCT.search(text)
        if product is None:
            raise _Ask
        name = product.group(0)

        def named(seen: dict[str, Any]) -> bool:
            return any(p.get("name") == name for p in seen.get("results") or [])

        found = yield from _call("search_products", until=named, query=name)
        match = next((p for p in found.get("results") or [] if p.get("name") == name), None)
        if match is None:
            return "Not found."
        yield from _call("add_to_cart", sku=match["sku"], quantity=_small_number(_strip(text, name)) or 2)
        yield from _call("checkout", address=state.get("address", ""))
        return "Ordered."

    text = yield from agent.turn(first, text)
    yield from agent.turn(reorder, text)


def _shop_budget(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        noun = _find_listed(text, _NOUNS)
        amounts = _amounts(_strip(text))
        if noun is None or not amounts:
            raise _Ask
        budget = float(amounts[-1])
        found = yield from _call(
            "search_products", until=_last_stock_known, from_end=True, query=noun, max_price=budget
        )
        stocked = [p for p in found.get("results") or [] if p.get("stock")]
        if not stocked:
            return "Nothing fits."
        yield from _call("add_to_cart", sku=stocked[-1]["sku"], quantity=1)
        cart = yield from _call("view_cart")
        return f"Cart total {cart.get('total')}."

    yield from agent.turn(first, text)


# --- workspace --------------------------------------------------------------------------------


@cache
def _function_regex() -> re.Pattern[str]:
    from tasks.episodes.environments.repository import _NOUNS as nouns
    from tasks.episodes.environments.repository import KINDS

    verbs = sorted({verb for kind in KINDS for verb in kind.verbs}, key=len, reverse=True)
    return re.compile(rf"\b(?:{'|'.join(verbs)})_(?:{'|'.join(nouns)})\b")


def _fix(path: str, content: str, function: str) -> str | None:
    """The diff that puts the known correct line back in ``function`` (the public bug kinds)."""
    from tasks.episodes.environments.patching import make_patch
    from tasks.episodes.environments.repository import KINDS

    start = content.find(f"def {function}(")
    if start < 0:
        return None
    end = content.find("\ndef ", start + 1)
    body = content[start : end if end > 0 else len(content)]
    for kind in KINDS:
        if kind.buggy + "\n" in body:
            after = content[:start] + content[start:].replace(kind.buggy + "\n", kind.fixed + "\n", 1)
            return str(make_patch(path, content, after))
    return None


def _failing(report: dict[str, Any]) -> tuple[str, str] | None:
    """(test file, test function) of the first failing test of a run_tests report."""
    for failure in report.get("failures") or []:
        test = str(failure.get("test", ""))
        if "::" in test:
            path, name = test.split("::", 1)
            return path, name
    return None


def _module_of(test_source: str) -> str | None:
    match = re.search(r"^from ([\w.]+) import", test_source, re.MULTILINE)
    return "src/" + match.group(1).replace(".", "/") + ".py" if match else None


def _ws_fix(agent: ScriptedAgent, text: str) -> Script:
    def by_tests(text: str) -> Script:
        report = yield from _call("run_tests")
        failing = _failing(report)
        if failing is None:
            return "Nothing fails."
        test = yield from _call("read_file", path=failing[0])
        module = _module_of(str(test.get("content", "")))
        if module is None:
            return "Could not find the module."
        source = yield from _call("read_file", path=module)
        function = failing[1].removeprefix("test_")
        patch = _fix(module, str(source.get("content", "")), function)
        if patch is None:
            return "Could not find the bug."
        yield from _call("apply_patch", patch=patch)
        yield from _call("run_tests")
        return f"It was {failing[1]}."

    def by_name(text: str) -> Script:
        function = _function_regex().search(_unquoted(text))
        if function is None:
            raise _Ask
        name = function.group(0)
        found = yield from _call("run_shell", command=f"grep -rn 'def {name}(' src")
        match = re.match(r"([^:\s]+):\d+:", str(found.get("output", "")))
        if match is None:
            return "Not found."
        source = yield from _call("read_file", path=match.group(1))
        patch = _fix(match.group(1), str(source.get("content", "")), name)
        if patch is None:
            return "Could not find the bug."
        yield from _call("apply_patch", patch=patch)
        yield from _call("run_tests")
        return f"It was in {match.group(1)}."

    named = _function_regex().search(_unquoted(text)) is not None
    yield from agent.turn(by_name if named else by_tests, text)


def _ws_locate(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        function = _function_regex().search(_unquoted(text))
        if function is None:
            raise _Ask
        name = function.group(0)
        found = yield from _call("run_shell", command=f"grep -rn 'def {name}(' src")
        match = re.match(r"([^:\s]+):\d+:", str(found.get("output", "")))
        if match is None:
            return "Not found."
        counted = yield from _call("run_shell", command=f"wc -l {match.group(1)}")
        return f"{match.group(1)}: {counted.get('output', '')}"

    yield from agent.turn(first, text)


_FACT_KEYS = ("release_reviewer", "staging_db_host", "deploy_branch", "oncall_handle")
_FACT_VALUE = {
    "release_reviewer": _PERSON,
    "staging_db_host": re.compile(r"\bdb-staging-\d\.(?:internal|corp\.lan|eu-west-1\.rds)\b"),
    "deploy_branch": re.compile(r"\brelease/\d+\.\d+\b"),
    "oncall_handle": re.compile(r"@[a-z]+(?:\.dev|_ops|42|\.pm|_qa|-eng)?\b"),
}
_FACT_QUESTIONS = {
    "release_reviewer": ("reviews", "reviewer"),
    "staging_db_host": ("staging", "database", "host"),
    "deploy_branch": ("branch", "deploy"),
    "oncall_handle": ("on call", "on-call", "oncall"),
}


def _ws_memory(agent: ScriptedAgent, text: str) -> Script:
    state: dict[str, Any] = {}

    def save(text: str) -> Script:
        key = _find_listed(text, _FACT_KEYS)
        if key is None:
            raise _Ask
        values = [m.group(0) for m in _FACT_VALUE[key].finditer(text)]
        values = [v for v in values if v != key]
        if not values:
            raise _Ask
        yield from _call("remember", key=key, value=values[-1])
        state["key"] = key
        return "Saved."

    def recall(text: str) -> Script:
        seen = yield from _call("retrieve_memory", key=state.get("key", ""))
        return f"{seen.get('value')}"

    text = yield from agent.turn(save, text)
    yield from agent.turn(recall, text)


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_COMMANDS = ("pytest -x -q", "pytest -q", "pytest tests")


def _schedule(text: str) -> str | None:
    plain = _unquoted(text)
    lowered = plain.lower()
    hourly = re.search(r"every hour at (\d+) minutes past", lowered)
    if hourly or re.search(r"\b(?:every hour|hourly)\b", lowered):
        if hourly:
            return f"{int(hourly.group(1))} * * * *"
        minutes = [int(n) for n in re.findall(r"(?<![\d:])\b(\d{1,2})\b(?!:)", plain)]
        return f"{minutes[-1]} * * * *" if minutes else None
    times = _times(plain)
    if not times:
        return None
    hour, minute = (int(part) for part in times[-1].split(":"))
    if re.search(r"\b(?:every weekday|weekdays)\b", lowered):
        day = "1-5"
    elif re.search(r"\b(?:every day|daily)\b", lowered):
        day = "*"
    else:
        named = next((d for d in _WEEKDAYS if d.lower() in lowered), None)
        if named is None:
            return None
        day = str((_WEEKDAYS.index(named) + 1) % 7)
    return f"{minute} {hour} * * {day}"


def _ws_cron(agent: ScriptedAgent, text: str) -> Script:
    def create(text: str) -> Script:
        command = _find_listed(text, _COMMANDS)
        schedule = _schedule(_strip(text, command) if command else text)
        if command is None or schedule is None:
            raise _Ask
        job = yield from _call("cron_create", schedule=schedule, command=command)
        return f"Job {job.get('id')}."

    def tell(text: str) -> Script:
        handle = re.search(r"@[a-z]+(?:\.dev|_ops|42|\.pm|_qa|-eng)?(?![\w-])", text)
        quoted = [q for q in _quoted(text) if q.startswith("Heads-up")] or _quoted(text)
        if handle is None or not quoted:
            raise _Ask
        yield from _call("message_send", recipient=handle.group(0), text=quoted[-1])
        return "Sent."

    text = yield from agent.turn(create, text)
    yield from agent.turn(tell, text)


def _ws_record(agent: ScriptedAgent, text: str) -> Script:
    def first(text: str) -> Script:
        key = _find_listed(text, ("broken_module", "bug_location", "failing_module"))
        if key is None:
            raise _Ask
        report = yield from _call("run_tests")
        failing = _failing(report)
        if failing is None:
            return "Nothing fails."
        test = yield from _call("read_file", path=failing[0])
        module = _module_of(str(test.get("content", "")))
        if module is None:
            return "Could not tell."
        yield from _call("remember", key=key, value=module)
        return module

    yield from agent.turn(first, text)


def _ws_survey(agent: ScriptedAgent, text: str) -> Script:
    def count(text: str) -> Script:
        listing = yield from _call(
            "list_files", until=lambda seen: True, directory="tests", pattern="test_*.py"
        )
        return f"{listing.get('count')} test files."

    def run(text: str) -> Script:
        report = yield from _call("run_tests")
        failing = _failing(report)
        return f"{failing[1] if failing else 'none'} fails."

    text = yield from agent.turn(count, text)
    yield from agent.turn(run, text)


# --- the kinds per environment: keywords of the template text and of the phrasing purposes ----

_KINDS: dict[str, tuple[_Kind, ...]] = {
    "bank": (
        _Kind("bank.new_payee", ("add", "payee", "pay someone new"), _bank_new_payee, _IBAN),
        _Kind("bank.pay_off_card", ("credit card", "pay off", "in full", "debt"), _bank_card),
        _Kind("bank.repeat_payment", ("same amount", "last time", "repeat", "regular payment"), _bank_repeat),
        _Kind(
            "bank.pay_amount",
            ("send", "owe", "pay someone", "what is left"),
            _bank_pay,
            re.compile(r"(?<![\w.-])\d+\.\d{1,2}(?![\w-])"),
        ),
    ),
    "home": (
        _Kind(
            "home.leave",
            ("heading out", "every door", "away", "alarm", "before leaving", "secure"),
            _home_leave,
        ),
        _Kind("home.lock", ("is the", "lock it", "door is locked", "make sure"), _home_lock),
        _Kind("home.warmer", ("thermostat", "warm", "degrees", "warmer"), _home_warmer),
        _Kind("home.vacuum", ("vacuum", "clean", "empty rooms", "battery"), _home_vacuum),
    ),
    "mail_calendar": (
        _Kind("mail.code", ("code", "one-time", "log in"), _mail_code),
        _Kind(
            "mail.invite", ("meeting called", "calendar", "meet the last writer", "catch-up"), _mail_invite
        ),
        _Kind("mail.move", ("move", "reschedule", "better time"), _mail_move),
        _Kind("mail.cancel", ("cancel", "free up", "what else", "rest of the day"), _mail_cancel),
        _Kind("mail.reply", ("reply", "answer", "latest mail", "colleague's last mail"), _mail_reply),
    ),
    "shop": (
        _Kind("shop.cancel", ("shipped", "cancel", "stop an order", "before it ships"), _shop_cancel),
        _Kind("shop.return", ("return", "send back", "faulty", "return number"), _shop_return),
        _Kind("shop.budget", ("under", "dearest", "budget", "cart total", "spend"), _shop_budget),
        _Kind("shop.cheapest", ("cheapest", "order", "ship", "order id"), _shop_cheapest),
    ),
    "workspace": (
        _Kind(
            "workspace.record",
            ("failing code", "save that file's path", "exercises", "note where", "source file"),
            _ws_record,
        ),
        _Kind("workspace.memory", ("memory", "keep a note", "save", "recall"), _ws_memory),
        _Kind("workspace.cron", ("cron", "schedule", "automatically", "job"), _ws_cron),
        _Kind(
            "workspace.locate",
            ("where is", "how many lines", "find the file defining a function"),
            _ws_locate,
        ),
        _Kind("workspace.fix", ("fix", "failing", "went red", "wrong results", "passing again"), _ws_fix),
        _Kind("workspace.survey", ("how many test files", "size up", "test suite", "test files"), _ws_survey),
    ),
}


# --- baselines --------------------------------------------------------------------------------


class NeverCallAgent:
    """Answers every step with a bland text: no call ever."""

    async def ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        return self.respond(messages, tools)

    def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        return _text("Okay.")


class CannotHelpAgent(NeverCallAgent):
    """Says it cannot help, every step (the abstention that must not pay)."""

    def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        return _text("I'm sorry, I cannot help with that.")


_FILLER = {"string": "x", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}


class ReadEveryToolAgent:
    """Calls every offered tool that (as mapped back) changes nothing, once, with placeholder
    arguments, then stops in text: activity without understanding."""

    async def ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        return self.respond(messages, tools)

    def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        env, shown = _map_tools(tools)
        mutating = {shown[name].name for name in _mutating(env) if name in shown}
        since_user = 0
        for message in reversed(messages):
            if message.get("role") == "user":
                break
            if message.get("role") == "assistant" and message.get("tool_calls"):
                since_user += 1
        readers = [function_of(tool) for tool in tools if function_of(tool).get("name") not in mutating]
        if since_user >= len(readers):
            return _text("Here is everything I could read.")
        function = readers[since_user]
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        arguments = {
            name: _FILLER.get(str(properties.get(name, {}).get("type")), "x")
            for name in parameters.get("required") or ()
        }
        return _tool_call(str(function.get("name")), arguments, len(messages))


# --- playing and scoring in-process -----------------------------------------------------------


@dataclass
class EpisodeFigures:
    """Valid count, total and score sum per key (category, environment)."""

    rows: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def add(self, category: str, environment: str, valid: bool, score: float) -> None:
        row = self.rows.setdefault((category, environment), [0, 0, 0.0])
        row[0] += int(valid)
        row[1] += 1
        row[2] += score

    def total(self, keep: Callable[[str, str], bool] = lambda c, e: True) -> tuple[float, float, int]:
        """(valid share, mean score, episodes) over the rows ``keep`` accepts."""
        rows = [row for (c, e), row in self.rows.items() if keep(c, e)]
        count = int(sum(row[1] for row in rows))
        if not count:
            return 0.0, 0.0, 0
        return sum(row[0] for row in rows) / count, sum(row[2] for row in rows) / count, count


def _short(category: str) -> str:
    return category.removeprefix("multi_turn_")


async def _play(agent: Any, episodes: Sequence[Episode], variant_seed: str, figures: EpisodeFigures) -> None:
    for episode in episodes:
        shown = variant(episode, variant_seed)
        try:
            if shown.single_step:
                task = agent_step(shown)
                answer = await agent.ask(task.messages, task.tools)
                verdict = check(answer, [function_of(tool) for tool in task.tools], task.expected, "simple")
            else:
                transcript = await EpisodeRunner(shown, agent.ask).play()
                verdict = check_episode(transcript, shown)
            valid, score = verdict.valid, verdict.score
        except Exception:
            valid, score = False, 0.0
        figures.add(_short(shown.category), shown.environment, valid, score)
        kind = getattr(agent, "last_kind", None)
        if kind is not None or isinstance(agent, ScriptedAgent):
            figures.kinds[str(kind)] = figures.kinds.get(str(kind), 0) + 1


def play_agent(agent: Any, episodes: Sequence[Episode], variant_seed: str = "redteam") -> EpisodeFigures:
    """Each episode shown as its variant, played and judged as the validator does."""
    figures = EpisodeFigures()
    started = time.perf_counter()
    asyncio.run(_play(agent, episodes, variant_seed, figures))
    figures.seconds = time.perf_counter() - started
    return figures


CATEGORIES = ("agent_step", "base", "long_context", "miss_func", "miss_param")


def _column(column: str) -> Callable[[str, str], bool]:
    """The rows of one table column: a category or an environment."""
    return lambda category, environment: column in (category, environment)


def episode_table(figures: dict[str, EpisodeFigures]) -> list[str]:
    """A markdown table: per agent, valid % (mean score) per category and environment, and overall."""
    envs = sorted({e for f in figures.values() for (_, e) in f.rows})
    columns = [*CATEGORIES, *envs]
    lines = ["| agent | " + " | ".join(columns) + " | all |", "|" + "---|" * (len(columns) + 2)]
    for name, f in figures.items():
        cells = []
        for column in columns:
            valid, score, count = f.total(_column(column))
            cells.append(f"{100 * valid:.1f}% ({score:.3f})" if count else "-")
        valid, score, count = f.total()
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {100 * valid:.1f}% ({score:.3f}), n={count} |")
    return lines


def baseline_agents() -> dict[str, Any]:
    return {
        "scripted agent (no model)": ScriptedAgent(),
        "never calls": NeverCallAgent(),
        '"I cannot help"': CannotHelpAgent(),
        "read every tool, then stop": ReadEveryToolAgent(),
    }


def main() -> None:
    from tasks.episodes import generate_episodes

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--seed", default="heldout")
    parser.add_argument("--phrased", action="store_true", help="also on turns phrased by the stand-in engine")
    parser.add_argument("--baselines", action="store_true", help="also the never-call and other baselines")
    parser.add_argument("--failures", type=int, default=0, help="print the first N failed episodes' kinds")
    parser.add_argument(
        "--serve", type=int, default=None, metavar="PORT", help="serve the agent over the chat API instead"
    )
    args = parser.parse_args()
    if args.serve is not None:
        asyncio.run(serve(args.serve))
        return
    episodes = generate_episodes(args.seed, args.episodes)
    sets = {"template": episodes}
    if args.phrased:
        sets["phrased"] = phrase_with_standin(episodes, args.seed)
    for label, chosen in sets.items():
        agents = baseline_agents() if args.baselines else {"scripted agent (no model)": ScriptedAgent()}
        results = {name: play_agent(agent, chosen) for name, agent in agents.items()}
        print(f"\n{label} turns ({len(chosen)} episodes, seed {args.seed}):")
        print("\n".join(episode_table(results)))
        scripted = results["scripted agent (no model)"]
        print(f"  kinds recognised: {dict(sorted(scripted.kinds.items(), key=lambda kv: -kv[1]))}")
        print(f"  {scripted.seconds:.1f} s")
        if args.failures:
            _failures(chosen, args.failures)


async def serve(port: int, host: str = "127.0.0.1") -> None:
    """The scripted agent behind ``POST /v1/chat/completions`` (OpenAI's shape), until killed:
    ``python -m subnet.evaluate --endpoint http://127.0.0.1:PORT/v1 --episodes N`` then plays it
    through the validator's own path (``--phrasing.*`` included)."""
    from aiohttp import web

    agent = ScriptedAgent()

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        message = agent.respond(list(body.get("messages") or []), list(body.get("tools") or []))
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        choice = {"index": 0, "message": message, "finish_reason": finish}
        model = "scripted-agent"
        return web.json_response(
            {"id": "agent", "object": "chat.completion", "model": model, "choices": [choice]}
        )

    async def models(_request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "scripted-agent", "object": "model"}]})

    app = web.Application(client_max_size=64 * 2**20)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    print(f"scripted agent on http://{host}:{port}/v1", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def phrase_with_standin(episodes: Sequence[Episode], seed: str) -> list[Episode]:
    """The episodes with every user turn phrased by the stand-in model (bench/phrasing_standin.py)."""
    from subnet.config import PhrasingSettings
    from subnet.phrasing import build_engine
    from subnet.phrasing.session import policy_from
    from tasks.episodes.turn_phrasing import phrase_episodes

    async def run() -> list[Episode]:
        standin = _sibling("phrasing_standin")
        server = await standin.StandinServer("private").start()
        settings = PhrasingSettings(engine="openai", url=server.url, model="standin")
        engine = build_engine(settings)
        await engine.start()
        try:
            phrased, _ = await phrase_episodes(list(episodes), engine, seed, policy_from(settings))
            return phrased
        finally:
            await engine.close()
            await server.stop()

    return asyncio.run(run())


def _failures(episodes: Sequence[Episode], count: int) -> None:
    agent = ScriptedAgent()
    shown_count = 0
    for episode in episodes:
        figures = EpisodeFigures()
        asyncio.run(_play(agent, [episode], "redteam", figures))
        if figures.total()[0] < 1.0:
            first = episode.turns[0].user[:160]
            print(f"  FAIL {episode.category} {episode.environment} kind={agent.last_kind}: {first!r}")
            shown_count += 1
            if shown_count >= count:
                return


if __name__ == "__main__":
    main()


def debug(episode: Episode) -> None:
    """Print one episode's play by the scripted agent (turn texts, calls, verdict)."""
    shown = variant(episode, "redteam")
    agent = ScriptedAgent()
    if shown.single_step:
        task = agent_step(shown)
        print(json.dumps(task.messages, indent=1)[-3000:])
        print("answer", agent.respond(task.messages, task.tools), "expected", task.expected)
        return
    transcript = asyncio.run(EpisodeRunner(shown, agent.ask).play())
    for turn, record in zip(shown.turns, transcript.turns, strict=False):
        print("USER", turn.user, "| PLAN", [(c["name"], c["arguments"]) for c in turn.plan])
        for step in record.steps:
            for c in step.calls:
                print("   CALL", c.env_name, c.env_arguments, str(c.observation)[:300])
            if step.text:
                print("   TEXT", step.text[:200])
    print(check_episode(transcript, shown))
