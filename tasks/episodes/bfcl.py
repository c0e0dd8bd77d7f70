"""BFCL v4's multi-turn entries as episodes, played in BFCL's own simulated APIs.

``load_bfcl_multi_turn()`` reads ``multi_turn_base``, ``_miss_func``, ``_miss_param`` and
``_long_context`` (question file and possible answer) from the installed ``bfcl-eval`` package's
data folder, or from a folder laid out the same way, into ``Episode`` records whose environment
is ``BfclEnvironment``: instances of BFCL's classes (``GorillaFileSystem``, ``TradingBot``, ...)
loaded with the entry's ``initial_config`` as BFCL's executor loads them.

What differs from BFCL's executor, on purpose:

* Nothing is evaluated. BFCL ``eval``s call strings; here a call names a function of the
  involved classes' published docs (``multi_turn_func_doc``), looked up in a table built from
  those docs, and runs with keyword arguments. Undocumented names (``__class__``,
  ``_load_scenario``, helpers) are unknown tools. The ground truth is read by ``scoring.decode``;
  its few positional arguments are named first, from the method's signature, on the syntax tree.
* Every environment gets deep copies of loaded instances: BFCL's long-context extensions put
  module-level dicts into the state by reference, and a call on one environment would change the
  next one. Arguments are deep-copied too (BFCL keeps argument lists in its state).
* A call runs in a local decimal context, with mpmath's precision restored after it (BFCL's math
  sets both process-wide), and math that would run without bound (precision above 1000 digits,
  huge integer powers) is refused. A result too large for JSON is an error observation.
* ``needed`` holds the scalar values of the reference's observations in that turn (BFCL's
  response check wants the ground truth's execution results among the model's); values the
  reference already saw in an earlier turn are not asked again, as BFCL's check counts every
  earlier result. Strings that JSON escapes (newlines, quotes) are not asked: they are not
  found as themselves in an observation's JSON text.
* Every function counts as acting (``mutates``): BFCL's docs do not say which ones only read,
  and BFCL's irrelevance rule (``multi_turn_irrelevance_checker``) wants no call at all in a
  turn whose ground truth is empty.

The state compared after each turn is what BFCL's state checker compares: each instance's public
attributes (names without a leading ``_``), with ``Directory.parent`` left out as BFCL's
``Directory.__eq__`` leaves it out. ``excluded_function`` is kept in the config but does not
shrink the tools: BFCL's inference offers them too (it never reads that field).
"""

from __future__ import annotations

import ast
import copy
import decimal
import hashlib
import importlib
import importlib.util
import inspect
import json
import numbers
import sys
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, ClassVar

from scoring import DecodeError
from scoring.decoding import decode
from tasks.episodes.environment import Environment, ToolInfo
from tasks.episodes.model import Episode, Turn
from tasks.errors import SourceFileError
from tasks.files import json_lines, openai_schema

__all__ = ["API_CLASSES", "BFCL_MULTI_TURN_CATEGORIES", "BfclEnvironment", "load_bfcl_multi_turn"]

#: BFCL's multi-turn classes -> the stem of their module (``func_source_code``) and doc file
#: (``multi_turn_func_doc``), as bfcl_eval.constants.executable_backend_config maps them.
#: WebSearchAPI and the MemoryAPI classes are left out: they belong to BFCL's agentic categories,
#: not multi-turn, and import packages the project does not install (serpapi, requests, bs4,
#: rank_bm25, faiss, sentence_transformers).
API_CLASSES: dict[str, str] = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
#: Classes BFCL builds without ``_load_scenario`` (its STATELESS_CLASSES).
_STATELESS = frozenset({"MathAPI"})
_MODULES = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
BFCL_MULTI_TURN_CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
#: The user message of a turn where held-back functions arrive (BFCL's
#: DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC; the entry's own message list is empty).
ADDED_FUNCTIONS_MESSAGE = "I have updated some more functions you can choose from. What about now?"
_INSTALL = "pip install --no-deps bfcl-eval==2026.3.23 (scripts/setup.sh does)"
#: Attributes BFCL's own ``__eq__`` ignores, by class name: a directory's link to its parent.
_NOT_COMPARED = {"Directory": frozenset({"parent"})}
_MAX_DEPTH = 64
_MAX_PRECISION = 1000
_MAX_POWER_BITS = 1 << 16

#: Ground truths that cannot pass for a reason in BFCL's own data, by entry id (the four
#: categories share their scenarios, so a fault comes four times).
_TICKET_173 = (
    "the initial ticket's id is the string 'ticket_001' but TicketAPI's doc types ticket_id as "
    "integer: the ground truth's close_ticket(ticket_id='ticket_001') breaks the schema, and no "
    "call that fits it can close the ticket"
)
EXCLUDED: dict[str, str] = {
    **{f"{category}_173": _TICKET_173 for category in BFCL_MULTI_TURN_CATEGORIES},
    "multi_turn_miss_func_49": (
        "the ground truth of turn 2 calls tail, which the entry holds back until turn 4 "
        "(missed_function): the plan is not a trajectory a model could play"
    ),
}


# -- BFCL's package ---------------------------------------------------------------------------


def _package_dir() -> Path:
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise SourceFileError("bfcl-eval", f"package not installed: {_INSTALL}")
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def _function_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    """BFCL's function docs of one class (its ``multi_turn_func_doc`` file)."""
    path = _package_dir() / "data" / "multi_turn_func_doc" / f"{API_CLASSES[class_name]}.json"
    docs = []
    for line, doc in json_lines(path):
        name = doc.get("name") if isinstance(doc, dict) else None
        if not (isinstance(name, str) and name.isidentifier() and not name.startswith("_")):
            raise SourceFileError(str(path), "each function needs a public identifier as 'name'", line)
        docs.append(doc)
    return tuple(docs)


@cache
def _api_class(class_name: str) -> type:
    module = f"{_MODULES}.{API_CLASSES[class_name]}"
    _package_dir()
    try:
        found: type = getattr(importlib.import_module(module), class_name)
    except (ImportError, AttributeError) as error:
        raise SourceFileError(module, f"cannot load BFCL's {class_name} ({error}): {_INSTALL}") from None
    return found


@lru_cache(maxsize=128)
def _loaded(class_name: str, initial_config: str, long_context: bool) -> Any:
    """An instance in its initial state, as BFCL's executor loads it: a template, only ever
    handed out as a deep copy."""
    instance = _api_class(class_name)()
    if class_name not in _STATELESS:
        instance._load_scenario(json.loads(initial_config), long_context=long_context)
    return instance


def _positional_names(class_name: str, function: str) -> list[str]:
    """The method's parameters in order (self left out), to name positional ground-truth values."""
    return list(inspect.signature(getattr(_api_class(class_name), function)).parameters)[1:]


# -- the environment --------------------------------------------------------------------------


def _relay(name: str) -> Callable[..., Any]:
    def call(environment: BfclEnvironment, **arguments: Any) -> Any:
        return environment.dispatch(name, arguments)

    return call


class BfclEnvironment(Environment):
    """BFCL's simulated APIs for one entry. Built by ``from_config``; its tools are the documented
    functions of the involved classes (an instance's table: the class-level one is empty)."""

    name: ClassVar[str] = "bfcl"

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = copy.deepcopy(config)
        self.classes = [str(name) for name in config["involved_classes"]]
        unknown = [name for name in self.classes if name not in API_CLASSES]
        if unknown:
            raise ValueError(f"unsupported BFCL classes {unknown} (known: {', '.join(API_CLASSES)})")
        self._owner: dict[str, str] = {}
        self._table: dict[str, ToolInfo] = {}
        for class_name in self.classes:
            for doc in _function_docs(class_name):
                parameters = openai_schema(doc.get("parameters") or {"type": "dict", "properties": {}})
                parameters.setdefault("properties", {})
                self._owner[doc["name"]] = class_name
                self._table[doc["name"]] = ToolInfo(
                    doc["name"], str(doc.get("description", "")), parameters, True, _relay(doc["name"])
                )
        self._instances: dict[str, Any] | None = None

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> BfclEnvironment:
        """The environment of an episode's ``config`` (what ``Episode.make_environment`` calls)."""
        return cls(config)

    def _apis(self) -> dict[str, Any]:
        """The instances, loaded on first use (the tools alone need none)."""
        if self._instances is None:
            initial = self.config.get("initial_config") or {}
            long_context = bool(self.config.get("long_context"))
            self._instances = {
                name: copy.deepcopy(_loaded(name, json.dumps(initial.get(name, {})), long_context))
                for name in self.classes
            }
        return self._instances

    def tools(self) -> dict[str, ToolInfo]:  # type: ignore[override]
        """Every documented function of the involved classes, by name (all count as acting)."""
        return dict(self._table)

    def openai_tools(  # type: ignore[override]
        self, names: list[str] | tuple[str, ...] | None = None
    ) -> list[dict[str, Any]]:
        chosen = list(self._table) if names is None else list(names)
        return [self._table[name].openai() for name in chosen]

    def dispatch(self, name: str, arguments: dict[str, Any]) -> Any:
        """As ``Environment.dispatch``: whatever BFCL's code raises is an observation (as in its
        executor), and the call is undone by replaying the calls before it on fresh copies."""
        owner = self._owner.get(name)
        if owner is None:
            return {"error": f"unknown tool {str(name)[:80]!r}"}
        try:
            inspect.signature(getattr(_api_class(owner), name)).bind(None, **arguments)
        except TypeError as error:
            return {"error": f"bad arguments for {name}: {str(error)[:200]}"}
        costly = _too_costly(name, arguments)
        if costly is not None:
            return {"error": f"{name}: {costly}"}
        return self._guarded(name, arguments, lambda: _jsonable(self._call(name, arguments)))

    def _call(self, name: str, arguments: dict[str, Any]) -> Any:
        method = getattr(self._apis()[self._owner[name]], name)
        saved_dps = _mpmath_dps()
        try:
            # BFCL's math sets the decimal context's precision and mpmath's, both process-wide:
            # a local decimal context and mpmath's old value keep them to this call.
            with decimal.localcontext():
                # A copy: BFCL keeps argument lists in its state (a tweet's mentions), and the
                # caller's dict is the plan's or the transcript's.
                return method(**copy.deepcopy(arguments))
        finally:
            if saved_dps is not None:
                sys.modules["mpmath"].mp.dps = saved_dps

    def _failed(self, name: str, error: Exception) -> dict[str, Any]:
        """BFCL's code failing is an observation, as in its executor: the exception's type and text."""
        try:
            text = str(error)
        except Exception:  # a message that cannot be shown
            text = ""
        return {"error": f"{type(error).__name__}: {text[:400]}"}

    def _rebuild(self) -> BfclEnvironment:
        return type(self)(self.config)

    def _replay(self, name: str, arguments: dict[str, Any]) -> None:
        self._call(name, arguments)

    def state_view(self) -> dict[str, Any]:
        """Per involved class, its instance's public attributes as JSON-like values (a fresh copy,
        built on each call; ``fingerprint`` is its canonical JSON)."""
        return {
            class_name: {
                key: _jsonable(value) for key, value in vars(instance).items() if not key.startswith("_")
            }
            for class_name, instance in self._apis().items()
        }

    def state(self) -> dict[str, Any]:
        return self.state_view()  # already a copy


def _mpmath_dps() -> Any:
    mpmath = sys.modules.get("mpmath")
    return None if mpmath is None else mpmath.mp.dps


def _too_costly(name: str, arguments: dict[str, Any]) -> str | None:
    """Why a call would make BFCL's math run without bound, or None: mpmath and decimal work to
    any precision asked, and Python's integers to any size."""
    precision = arguments.get("precision") if name in ("logarithm", "square_root") else None
    if isinstance(precision, int | float) and abs(precision) > _MAX_PRECISION:
        return f"precision above {_MAX_PRECISION} digits is not supported"
    base, exponent = arguments.get("base"), arguments.get("exponent")
    if name == "power" and isinstance(base, int) and isinstance(exponent, int):
        bits = abs(exponent) * max(1, abs(base).bit_length())
        return "the result would be too large" if bits > _MAX_POWER_BITS else None
    return None


def _jsonable(value: Any, ancestors: tuple[int, ...] = ()) -> Any:
    """A JSON-like copy: containers recursively, sets sorted, other numbers as text, objects as
    their public attributes, anything else as text. A link back to an object being copied, or
    anything nested deeper than ``_MAX_DEPTH``, is cut (``"<cut>"``)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, numbers.Number):  # Decimal, mpmath's mpf: as text, every digit kept
        return str(value)
    if id(value) in ancestors or len(ancestors) >= _MAX_DEPTH:
        return "<cut>"
    inner = (*ancestors, id(value))
    if isinstance(value, dict):
        return {str(key): _jsonable(item, inner) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item, inner) for item in value]
    if isinstance(value, set | frozenset):
        return sorted((_jsonable(item, inner) for item in value), key=repr)
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        skipped = _NOT_COMPARED.get(type(value).__name__, frozenset())
        return {
            key: _jsonable(item, inner)
            for key, item in attributes.items()
            if not key.startswith("_") and key not in skipped
        }
    return str(value)


# -- loading ----------------------------------------------------------------------------------


def _keyword_call(text: str, owner: dict[str, str], where: str) -> str:
    """A ground-truth call with its positional values named from the method's signature. Read
    on the syntax tree (``ast.parse``): nothing is evaluated."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise SourceFileError(where, f"ground-truth call is not python-call syntax: {text[:80]!r}") from None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        raise SourceFileError(where, f"ground-truth entry is not a call: {text[:80]!r}")
    if not node.args:
        return text
    if node.func.id not in owner:
        raise SourceFileError(where, f"ground truth calls {node.func.id!r}, no function of its classes")
    names = _positional_names(owner[node.func.id], node.func.id)
    if len(node.args) > len(names):
        raise SourceFileError(where, f"too many positional values in {text[:80]!r}")
    node.keywords = [
        ast.keyword(arg=n, value=v) for n, v in zip(names[: len(node.args)], node.args, strict=True)
    ] + node.keywords
    node.args = []
    return ast.unparse(node)


def _plan(calls: list[Any], owner: dict[str, str], where: str) -> list[dict[str, Any]]:
    if not calls:
        return []
    if not all(isinstance(call, str) for call in calls):
        raise SourceFileError(where, "each ground-truth call must be a string")
    text = "[" + ", ".join(_keyword_call(call, owner, where) for call in calls) + "]"
    try:
        decoded = decode(text)
    except DecodeError as error:
        raise SourceFileError(where, f"ground truth does not decode: {error.reason}") from None
    if len(decoded) != len(calls):
        raise SourceFileError(where, f"ground truth decodes to {len(decoded)} calls, not {len(calls)}")
    return [{"name": call.name, "arguments": dict(call.arguments)} for call in decoded]


def _scalars(value: Any) -> list[Any]:
    """The numbers and strings inside an observation (bools and None say little on their own)."""
    if isinstance(value, dict):
        return [found for item in value.values() for found in _scalars(item)]
    if isinstance(value, list):
        return [found for item in value for found in _scalars(item)]
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return [value]
    # A string JSON escapes is not found in an observation's JSON text as itself.
    if isinstance(value, str) and value and json.dumps(value, ensure_ascii=False)[1:-1] == value:
        return [value]
    return []


def _needed(environment: BfclEnvironment, turns: list[Turn]) -> None:
    """Fill each turn's ``needed`` by playing the plan (see the module docstring)."""
    seen: set[str] = set()
    for turn in turns:
        values: list[Any] = []
        for call in turn.plan:
            observation = environment.dispatch(call["name"], call["arguments"])
            if isinstance(observation, dict) and ("error" in observation or "truncated" in observation):
                continue
            values.extend(_scalars(observation))
        fresh = {repr(value): value for value in values if repr(value) not in seen}
        turn.needed = list(fresh.values())
        seen.update(repr(value) for value in values)


def _episode(entry: dict[str, Any], truth: list[Any], category: str, where: str) -> Episode:
    entry_id = str(entry["id"])
    questions = entry.get("question")
    if not (isinstance(questions, list) and all(isinstance(turn, list) for turn in questions)):
        raise SourceFileError(where, f"{entry_id}: 'question' must be a list of message lists")
    if len(truth) != len(questions):
        raise SourceFileError(where, f"{entry_id}: {len(truth)} ground-truth turns for {len(questions)}")
    config = {
        "involved_classes": list(entry.get("involved_classes") or []),
        "initial_config": copy.deepcopy(entry.get("initial_config") or {}),
        "long_context": "long_context" in category,
        "excluded_functions": list(entry.get("excluded_function") or []),
    }
    try:
        environment = BfclEnvironment(config)
    except (KeyError, ValueError) as error:
        raise SourceFileError(where, f"{entry_id}: {error}") from None
    held_back = {int(index): list(names) for index, names in (entry.get("missed_function") or {}).items()}
    hidden = {name for names in held_back.values() for name in names}
    offered = [name for name in environment.tools() if name not in hidden]
    turns = []
    for index, (messages, calls) in enumerate(zip(questions, truth, strict=True)):
        offered += [name for name in held_back.get(index, []) if name not in offered]
        user = "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
        if not messages and index in held_back:
            user = ADDED_FUNCTIONS_MESSAGE
        plan = _plan(calls, environment._owner, f"{where}: {entry_id} turn {index + 1}")
        turns.append(Turn(user=user, tools=list(offered), plan=plan))
    _needed(environment, turns)
    record = json.dumps({"entry": entry, "ground_truth": truth}, sort_keys=True, ensure_ascii=False)
    return Episode(
        id=entry_id,
        category=category,
        environment=BfclEnvironment.name,
        env_seed=hashlib.sha256(f"bfcl|{entry_id}".encode()).hexdigest(),
        size=1,
        turns=turns,
        seed=hashlib.sha256(record.encode()).hexdigest(),
        source="bfcl",
        # A few turns hold dozens of calls: room for each one in its own step, and then some.
        step_cap=max(10, max((len(turn.plan) for turn in turns), default=0) + 2),
        config=config,
    )


def load_bfcl_multi_turn(
    path: str | Path | None = None, categories: Sequence[str] = BFCL_MULTI_TURN_CATEGORIES
) -> tuple[Episode, ...]:
    """BFCL v4's multi-turn entries as episodes, from ``path`` (a folder laid out like
    ``bfcl_eval/data``) or the installed package's data folder. Entries in ``EXCLUDED`` are left
    out. A missing package, folder or file is a ``SourceFileError`` saying what to do."""
    folder = _package_dir() / "data" if path is None else Path(path)
    if not folder.is_dir():
        raise SourceFileError(str(folder), "no such data folder (expected bfcl_eval/data's layout)")
    episodes: list[Episode] = []
    for category in categories:
        question_path = folder / f"BFCL_v4_{category}.json"
        answer_path = folder / "possible_answer" / f"BFCL_v4_{category}.json"
        for required in (question_path, answer_path):
            if not required.is_file():
                raise SourceFileError(
                    str(required), f"file not found (a {category} file of bfcl-eval's data)"
                )
        answers: dict[str, list[Any]] = {}
        for line, record in json_lines(answer_path):
            if not (
                isinstance(record, dict) and "id" in record and isinstance(record.get("ground_truth"), list)
            ):
                raise SourceFileError(
                    str(answer_path), "expected an object with 'id' and a 'ground_truth' list", line
                )
            answers[str(record["id"])] = record["ground_truth"]
        for line, entry in json_lines(question_path):
            where = f"{question_path}:{line}"
            if not isinstance(entry, dict) or "id" not in entry:
                raise SourceFileError(str(question_path), "expected an object with an 'id'", line)
            if str(entry["id"]) in EXCLUDED:
                continue
            truth = answers.get(str(entry["id"]))
            if truth is None:
                raise SourceFileError(str(question_path), f"{entry['id']}: no ground truth for this id", line)
            episodes.append(_episode(entry, truth, category, where))
    return tuple(episodes)
