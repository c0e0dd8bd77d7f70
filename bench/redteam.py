"""Red team: model-free "miners" that attack the task generator instead of understanding requests.

The generator is public, so a cheater can invert it. ``TemplateInverter`` does that for builtin
tasks: it maps each offered tool back to its library spec (the shuffle keeps parameter
descriptions and the tail of the tool description), strips the fixed openers and closers, cuts the
request at the fixed joiners, and matches each piece against every library template, each slot a
regex built from its value generator; the slot texts turn back into reference values. A piece in
which a slot is one of the generator's ``vague`` phrases, or whose best template belongs to a tool
that is not offered, means no call at all. ``DatasetMemoriser`` is the attacker for external
sources: it looks the request text up in the published tasks. ``LexicalMiner``
(bench/redteam_lexical.py) reads any text, template or phrased, by keywords and value formats
alone. ``NeverCalls`` and ``RandomTool`` are baselines. ``evaluate_miner`` scores any of them on
the variants a miner would be shown.
Episodes have their own attacker, ``ScriptedAgent`` (bench/redteam_agent.py, ``episode_agents``).

    .venv/bin/python bench/redteam.py [--tasks 5000] [--seed 1] [--variant-seed redteam]
    .venv/bin/python bench/redteam.py --miners lexical,template,never --per-category 200 --seed 9 [--phrased]

``--phrased`` first rewords the round with the stand-in phrasing model (bench/phrasing_standin.py).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib.util
import re
import string
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from random import Random
from typing import Any, Protocol

# Run as a script, this file's folder comes first on sys.path and its name would hide the package.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

from scoring import Call, check, function_of  # noqa: E402
from subnet.config import int_arg  # noqa: E402
from tasks import CATEGORIES, Task, generate, variant  # noqa: E402
from tasks.answers import reference_calls  # noqa: E402
from tasks.builtin import _CLOSERS, _JOINERS, _OPENERS  # noqa: E402
from tasks.lexicon import synonyms, verb_phrase_index  # noqa: E402
from tasks.library import tools as library_tools  # noqa: E402
from tasks.library.common import Coordinates, CronSchedule  # noqa: E402
from tasks.shuffle import split_words  # noqa: E402
from tasks.spec import ToolSpec, openai_tool  # noqa: E402
from tasks.value_generators import (  # noqa: E402
    _MONTHS,
    ClockTime,
    Composed,
    Date,
    Decimal,
    Flag,
    Integer,
    ListOf,
    Pick,
    Quoted,
    Record,
    Records,
)

__all__ = [
    "DatasetMemoriser",
    "LexicalMiner",
    "Miner",
    "NeverCalls",
    "RandomTool",
    "TemplateInverter",
    "evaluate_miner",
    "match_tool",
    "request_text",
]

Answer = list[tuple[str, dict[str, Any]]]


def _sibling(name: str) -> Any:
    """bench/<name>.py as a module (bench/ is no package, and this file's folder is off sys.path)."""
    module_name = f"bench_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


LexicalMiner = _sibling("redteam_lexical").LexicalMiner


class Miner(Protocol):
    """Anything that answers a request: ``[(function name as offered, arguments)]``, [] for no call."""

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer: ...


def request_text(messages: Sequence[dict[str, Any]]) -> str:
    """The text of the last user message ("" when there is none)."""
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


# --- Mapping offered (shuffled) tools back to the tools they were made from -------------------


def _description_tail(text: str) -> str:
    """The description after its leading verb phrase: the part the shuffle never rewrites."""
    head = text.split(" ", 2)
    for phrase in (" ".join(head[:2]), head[0]):
        if phrase in verb_phrase_index() and len(text) > len(phrase):
            return text[len(phrase) :]
    return text


def _renamed_from(old: str, new: str) -> bool:
    """Whether the shuffle could have renamed parameter ``old`` to ``new`` (synonyms word by word,
    or the numbered fallback)."""
    if new == old or re.fullmatch(re.escape(re.sub(r"\W", "_", old)) + r"_?(?:_\d+)?", new):
        return True
    old_words, new_words = split_words(old), split_words(new)
    return len(old_words) == len(new_words) and all(
        n == o or n in synonyms(o) for o, n in zip(old_words, new_words, strict=True)
    )


def _properties(function: dict[str, Any]) -> dict[str, Any]:
    return dict((function.get("parameters") or {}).get("properties") or {})


def _signature(function: dict[str, Any]) -> tuple[str, ...]:
    """What the shuffle leaves of a tool's parameters: their descriptions, as a sorted tuple."""
    return tuple(sorted(str(prop.get("description", "")) for prop in _properties(function).values()))


def match_tool(original: dict[str, Any], offered: dict[str, Any]) -> dict[str, str] | None:
    """Original parameter -> offered parameter when ``offered`` (an OpenAI ``function`` dict) is a
    shuffle of ``original``, else None."""
    tail = _description_tail(str(original.get("description", ""))).lower()
    if tail and tail not in str(offered.get("description", "")).lower():
        return None
    free = _properties(offered)
    wanted = _properties(original)
    if len(free) != len(wanted):
        return None
    renames: dict[str, str] = {}
    for name, prop in wanted.items():
        same = [
            new
            for new, new_prop in free.items()
            if new_prop.get("description") == prop.get("description")
            and new_prop.get("type") == prop.get("type")
        ]
        chosen = [new for new in same if _renamed_from(name, new)] or same
        if not chosen:
            return None
        renames[name] = chosen[0]
        del free[chosen[0]]
    return renames


@dataclass(frozen=True, slots=True)
class _Offered:
    """How one tool is offered: its shown name and original -> shown parameter names."""

    name: str
    params: dict[str, str]


@cache
def _library_index() -> dict[tuple[str, ...], tuple[tuple[ToolSpec, dict[str, Any]], ...]]:
    """Library tools by ``_signature`` (unique in the library today; a tuple in case it is not)."""
    index: dict[tuple[str, ...], list[tuple[ToolSpec, dict[str, Any]]]] = {}
    for spec in library_tools():
        function = function_of(openai_tool(spec))
        index.setdefault(_signature(function), []).append((spec, function))
    return {key: tuple(entries) for key, entries in index.items()}


def _offered_specs(tools: Iterable[dict[str, Any]]) -> dict[ToolSpec, _Offered]:
    """The library tools among ``tools``, with their shown names."""
    offered: dict[ToolSpec, _Offered] = {}
    for tool in tools:
        function = function_of(tool)
        for spec, original in _library_index().get(_signature(function), ()):
            renames = match_tool(original, function)
            if renames is not None and spec not in offered:
                offered[spec] = _Offered(str(function.get("name", "")), renames)
                break
    return offered


# --- Slots: a regex and a decoder per value generator ------------------------------------------


class _Mismatch(ValueError):
    """Slot text that the pattern lets through but that is no value of the generator."""


_VAGUE: Any = object()
"""What a slot decodes to when it holds one of its generator's vague phrases."""

_NUMBER = r"-?\d+"
_MONTH_NUMBER = {name: index + 1 for index, name in enumerate(_MONTHS)} | {
    name[:3]: index + 1 for index, name in enumerate(_MONTHS)
}
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True, slots=True)
class _Slot:
    """A placeholder's regex (no capturing groups) and how its matched text becomes a value."""

    pattern: str
    decode: Callable[[str], Any]


def _alternation(texts: Iterable[str]) -> str:
    """A regex for any of ``texts``, longest first so that the longest reading wins."""
    return "(?:" + "|".join(re.escape(text) for text in sorted(set(texts), key=lambda t: (-len(t), t))) + ")"


def _fields(template: str) -> list[tuple[str, str | None]]:
    """(literal text, field name or None) pairs of a format string."""
    return [(literal, name) for literal, name, _, _ in string.Formatter().parse(template)]


def _plain(pattern: str) -> str:
    """``pattern`` with its capturing groups made non-capturing (library literals hold no backslash
    before a parenthesis other than ``re.escape``'s)."""
    return re.sub(r"(?<!\\)\((?!\?)", "(?:", pattern)


def _fullmatch(regex: re.Pattern[str], text: str) -> re.Match[str]:
    found = regex.fullmatch(text)
    if found is None:
        raise _Mismatch(text)
    return found


def _pick_slot(gen: Pick) -> _Slot:
    values: dict[str, Any] = {}
    for option in gen.options:
        for say in option.says:
            values.setdefault(say, option.accepted[0])
    return _Slot(_alternation(values), values.__getitem__)


def _flag_slot(gen: Flag) -> _Slot:
    values = {say: False for say in gen.says_false} | {say: True for say in gen.says_true}
    return _Slot(_alternation(values), values.__getitem__)


def _quoted_slot(gen: Quoted) -> _Slot:
    return _Slot(f'"{_alternation(gen.bodies)}{_alternation(gen.tails)}"', lambda text: text[1:-1])


def _composed_slot(gen: Composed) -> _Slot:
    pattern = ""
    for position, (literal, name) in enumerate(_fields(gen.pattern)):
        pattern += re.escape(literal)
        if name is not None:  # "{0}" or an automatically numbered "{}"
            pattern += _alternation(gen.parts[int(name) if name else position])
    if gen.quote:
        return _Slot(f'"{pattern}"', lambda text: text[1:-1])
    return _Slot(pattern, str)


def _said_number(say: str, number: str, convert: Callable[[str], Any]) -> _Slot:
    """A number said through ``say`` ("{} minutes"): ``number`` is the regex of the digits."""
    before, after = say.split("{}")
    regex = re.compile(re.escape(before) + f"({number})" + re.escape(after))
    return _Slot(
        re.escape(before) + number + re.escape(after), lambda text: convert(_fullmatch(regex, text)[1])
    )


def _integer_slot(gen: Integer) -> _Slot:
    def convert(digits: str) -> int:
        value = int(digits)
        if not gen.low <= value <= gen.high or (value - gen.low) % gen.step:
            raise _Mismatch(digits)
        return value

    return _said_number(gen.say, _NUMBER, convert)


def _decimal_slot(gen: Decimal) -> _Slot:
    digits = _NUMBER + (rf"\.\d{{{gen.places}}}" if gen.places else "")
    return _said_number(gen.say, digits, float)


def _date_slot(gen: Date) -> _Slot:
    months, shorts = _alternation(_MONTHS), _alternation(name[:3] for name in _MONTHS)
    forms = (  # (regex, group order: year, month, day), one per spoken form of tasks.value_generators.Date
        (rf"({months}) (\d{{1,2}}), (\d{{4}})", (3, 1, 2)),
        (rf"(\d{{1,2}}) ({months}) (\d{{4}})", (3, 2, 1)),
        (r"(\d{4})-(\d{2})-(\d{2})", (1, 2, 3)),
        (rf"({shorts}) (\d{{1,2}}) (\d{{4}})", (3, 1, 2)),
    )
    compiled = [(re.compile(regex), order) for regex, order in forms]

    def decode(text: str) -> str:
        for regex, (year, month, day) in compiled:
            found = regex.fullmatch(text)
            if found:
                number = _MONTH_NUMBER.get(found[month]) or int(found[month])
                try:
                    return dt.date(int(found[year]), number, int(found[day])).isoformat()
                except ValueError as error:
                    raise _Mismatch(text) from error
        raise _Mismatch(text)

    return _Slot(_plain("(?:" + "|".join(regex for regex, _ in forms) + ")"), decode)


def _clock_slot(gen: ClockTime) -> _Slot:
    regex = re.compile(r"(\d{1,2}):(\d{2})(?: ([ap]m))?")

    def decode(text: str) -> str:
        hour, minute, half = _fullmatch(regex, text).groups()
        hours = int(hour) % 12 + (12 if half == "pm" else 0) if half else int(hour)
        return f"{hours:02d}:{minute}"

    return _Slot(r"(?:\d{1,2}:\d{2} [ap]m|\d{2}:\d{2})", decode)


def _coordinates_slot(gen: Coordinates) -> _Slot:
    regex = re.compile(r"(-?\d+\.\d{4}), (-?\d+\.\d{4})")
    return _Slot(
        r"-?\d+\.\d{4}, -?\d+\.\d{4}", lambda text: [float(part) for part in _fullmatch(regex, text).groups()]
    )


def _cron_slot(gen: CronSchedule) -> _Slot:
    days = _alternation(_WEEKDAYS)
    regex = re.compile(rf"every (day|weekday|{days}) at (\d{{2}}):(\d{{2}})|every hour at (\d+) minutes past")

    def decode(text: str) -> str:
        when, hour, minute, past = _fullmatch(regex, text).groups()
        if past is not None:
            return f"{int(past)} * * * *"
        day = {"day": "*", "weekday": "1-5"}.get(when) or str((_WEEKDAYS.index(when) + 1) % 7)
        return f"{int(minute)} {int(hour)} * * {day}"

    return _Slot(_plain(regex.pattern), decode)


def _listed(item: _Slot, low: int, high: int) -> _Slot:
    """``low``..``high`` items said as "a, b and c" (``tasks.value_generators._join``)."""
    counts = range(high, low - 1, -1)

    def joined(pattern: str, count: int) -> str:
        return ", ".join([pattern] * (count - 1)) + " and " + pattern if count > 1 else pattern

    regexes = [re.compile(joined(f"({item.pattern})", count)) for count in counts]

    def decode(text: str) -> list[Any]:
        for regex in regexes:
            found = regex.fullmatch(text)
            if found:
                return [item.decode(part) for part in found.groups()]
        raise _Mismatch(text)

    return _Slot(_plain("(?:" + "|".join(regex.pattern for regex in regexes) + ")"), decode)


def _list_of_slot(gen: ListOf) -> _Slot:
    return _listed(_slot_for(gen.item), gen.low, gen.high)


def _records_slot(gen: Records) -> _Slot:
    return _listed(_slot_for(gen.record), gen.low, gen.high)


def _record_slot(gen: Record) -> _Slot:
    slots = {key: _slot_for(field) for key, field in gen.fields}
    parts = _fields(gen.say)
    keys = [name for _, name in parts if name]
    regex = re.compile(
        "".join(re.escape(literal) + (f"({slots[name].pattern})" if name else "") for literal, name in parts)
    )

    def decode(text: str) -> dict[str, Any]:
        texts = _fullmatch(regex, text).groups()
        return {key: slots[key].decode(said) for key, said in zip(keys, texts, strict=True)}

    return _Slot(_plain(regex.pattern), decode)


_SLOT_BUILDERS: dict[type, Callable[[Any], _Slot]] = {
    Pick: _pick_slot,
    Flag: _flag_slot,
    Quoted: _quoted_slot,
    Composed: _composed_slot,
    Integer: _integer_slot,
    Decimal: _decimal_slot,
    Date: _date_slot,
    ClockTime: _clock_slot,
    Coordinates: _coordinates_slot,
    CronSchedule: _cron_slot,
    ListOf: _list_of_slot,
    Record: _record_slot,
    Records: _records_slot,
}


def _slot_for(gen: Any) -> _Slot:
    """The slot of a value generator (any text, kept as said, for a generator type not known here)."""
    builder = _SLOT_BUILDERS.get(type(gen))
    return builder(gen) if builder is not None else _Slot(r".+?", str)


def _vague_slot(gen: Any) -> _Slot:
    """``_slot_for(gen)`` that also takes the generator's vague phrases (decoded to ``_VAGUE``)."""
    slot = _slot_for(gen)
    vague = frozenset(getattr(gen, "vague", ()))
    if not vague:
        return slot

    def decode(text: str) -> Any:
        return _VAGUE if text in vague else slot.decode(text)

    return _Slot(f"(?:{slot.pattern}|{_alternation(vague)})", decode)


# --- Templates and the inverter ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Template:
    """One library request template as a regex: a group per placeholder, in order."""

    spec: ToolSpec
    regex: re.Pattern[str]
    params: tuple[str, ...]
    slots: tuple[_Slot, ...]
    #: Lower-cased literal pieces: a request without all of them cannot match (a cheap filter).
    chunks: tuple[str, ...]
    #: Characters of literal text: the more a template spells out, the more its match says.
    literal: int


@dataclass(frozen=True, slots=True)
class _Match:
    """A piece of a request read as one template: the library tool and its arguments."""

    spec: ToolSpec
    arguments: dict[str, Any]
    vague: bool
    literal: int


@cache
def _templates() -> tuple[_Template, ...]:
    compiled: list[_Template] = []
    for spec in library_tools():
        gens = {param.name: param.gen for param in spec.params}
        for template in spec.templates:
            parts = _fields(template)
            names = tuple(name for _, name in parts if name)
            slots = tuple(_vague_slot(gens[name]) for name in names)
            groups = iter(f"({slot.pattern})" for slot in slots)
            pattern = "".join(re.escape(literal) + (next(groups) if name else "") for literal, name in parts)
            literals = [literal for literal, _ in parts if literal]
            chunks = tuple(literal.lower() for literal in literals if literal.strip())
            compiled.append(
                _Template(spec, re.compile(pattern), names, slots, chunks, sum(map(len, literals)))
            )
    return tuple(compiled)


def _read(template: _Template, piece: str) -> _Match | None:
    """``piece`` read as ``template`` (its first letter may have been capitalised), or None."""
    found = template.regex.fullmatch(piece)
    if found is None and piece[:1].isupper():
        found = template.regex.fullmatch(piece[:1].lower() + piece[1:])
    if found is None:
        return None
    try:
        values = [slot.decode(text) for slot, text in zip(template.slots, found.groups(), strict=True)]
    except (KeyError, ValueError):  # a _Mismatch, or no value of the generator after all
        return None
    vague = any(value is _VAGUE for value in values)
    return _Match(template.spec, dict(zip(template.params, values, strict=True)), vague, template.literal)


_MAX_PARSES = 64


class TemplateInverter:
    """Answers builtin tasks by inverting the generator: no model, only the public library code."""

    def __init__(self) -> None:
        self._templates = _templates()

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer:
        """The calls the request's templates spell out; [] when a value is only alluded to, when
        a piece is best read as a tool that is not offered, or when nothing reads."""
        offered = _offered_specs(tools)
        best: tuple[tuple[int, int], list[_Match]] | None = None
        for parse in self._parses(request_text(messages)):
            chosen = []
            for readings in parse:
                # Most literal text first; at a tie an offered, fully said reading.
                top = max(readings, key=lambda m: (m.literal, m.spec in offered and not m.vague))
                if top.vague or top.spec not in offered:
                    break
                chosen.append(top)
            else:
                rank = (sum(match.literal for match in chosen), -len(chosen))
                if best is None or rank > best[0]:
                    best = (rank, chosen)
        if best is None:
            return []
        return [
            (offered[m.spec].name, {offered[m.spec].params[k]: v for k, v in m.arguments.items()})
            for m in best[1]
        ]

    def _parses(self, text: str) -> list[tuple[list[_Match], ...]]:
        """Every way to read ``text`` as opener, pieces joined by joiners, closer: the readings of
        each piece (several templates may read one piece)."""
        lowered = text.lower()
        candidates = [t for t in self._templates if all(chunk in lowered for chunk in t.chunks)]
        if not candidates or not text:
            return []
        ends = {len(text) - len(closer) for closer in _CLOSERS if text.endswith(closer)}
        joins: dict[int, set[int]] = {}
        for joiner in _JOINERS:
            for found in re.finditer(re.escape(joiner), text):
                joins.setdefault(found.start(), set()).add(found.end())
        cuts = sorted(ends | joins.keys())
        readings: dict[tuple[int, int], list[_Match]] = {}
        tails: dict[int, list[tuple[list[_Match], ...]]] = {}

        def read(start: int, end: int) -> list[_Match]:
            if (start, end) not in readings:
                piece = text[start:end]
                readings[start, end] = [m for t in candidates if (m := _read(t, piece)) is not None]
            return readings[start, end]

        def parses_from(start: int) -> list[tuple[list[_Match], ...]]:
            if start not in tails:
                found: list[tuple[list[_Match], ...]] = []
                for cut in cuts:
                    if cut <= start or len(found) >= _MAX_PARSES or not (pieces := read(start, cut)):
                        continue
                    if cut in ends:
                        found.append((pieces,))
                    for after in sorted(joins.get(cut, ())):
                        found.extend((pieces, *rest) for rest in parses_from(after))
                tails[start] = found
            return tails[start]

        starts = sorted({len(opener) for opener in _OPENERS if text.startswith(opener)})
        return [parse for start in starts for parse in parses_from(start)]


# --- Baselines and the memoriser -------------------------------------------------------------


class NeverCalls:
    """Refuses everything: right on the no-call categories only."""

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer:
        return []


_JUNK: dict[str, Any] = {
    "string": "x",
    "integer": 1,
    "number": 1.0,
    "boolean": True,
    "array": [],
    "object": {},
}


class RandomTool:
    """Calls a random offered tool with junk of the right type in every required parameter."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = Random(seed)

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer:
        if not tools:
            return []
        function = function_of(tools[int(self._rng.random() * len(tools))])
        properties = _properties(function)
        required = (function.get("parameters") or {}).get("required") or []
        arguments = {name: _JUNK.get(str(properties.get(name, {}).get("type")), "x") for name in required}
        return [(str(function.get("name", "")), arguments)]


def _normalised(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def _conversation_key(messages: Sequence[dict[str, Any]]) -> str:
    """The conversation's text, normalised: the lookup key of a memorised task."""
    return _normalised(" ".join(str(m.get("content") or "") for m in messages if m.get("role") != "system"))


class DatasetMemoriser:
    """Answers published tasks from memory: the request text looked up, the remembered reference
    calls carried over to the offered (renamed) tools by description; unknown text: no call."""

    def __init__(self, public_tasks: Iterable[Task]) -> None:
        self._memory: dict[str, list[tuple[list[dict[str, Any]], Answer]]] = {}
        for task in public_tasks:
            entry = ([function_of(tool) for tool in task.tools], reference_calls(task.expected))
            self._memory.setdefault(_conversation_key(task.messages), []).append(entry)

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer:
        shown = [function_of(tool) for tool in tools]
        for functions, calls in self._memory.get(_conversation_key(messages), []):
            renamed: dict[str, _Offered] = {}
            for original in functions:
                for function in shown:
                    params = match_tool(original, function)
                    if params is not None:
                        renamed[str(original.get("name", ""))] = _Offered(
                            str(function.get("name", "")), params
                        )
                        break
            if all(name in renamed for name, _ in calls):
                return [
                    (renamed[name].name, {renamed[name].params.get(k, k): v for k, v in arguments.items()})
                    for name, arguments in calls
                ]
        return []


# --- Evaluation ------------------------------------------------------------------------------


def evaluate_miner(
    miner: Miner, tasks_list: Iterable[Task], variant_seed: bytes | str | int
) -> dict[str, tuple[int, int]]:
    """Category -> (valid answers, tasks): each task shown as a miner's variant and judged by
    ``scoring.check``; a task the checker refuses (ValueError) counts as invalid."""
    tally: dict[str, list[int]] = {}
    for task in tasks_list:
        shown = variant(task, variant_seed)
        calls = [Call(name, arguments) for name, arguments in miner.answer(shown.messages, shown.tools)]
        functions = [function_of(tool) for tool in shown.tools]
        try:
            valid = check(calls, functions, shown.expected, shown.scoring_category).valid
        except ValueError:
            valid = False
        counts = tally.setdefault(task.category, [0, 0])
        counts[0] += int(valid)
        counts[1] += 1
    return {category: (valid, total) for category, (valid, total) in tally.items()}


def episode_agents() -> dict[str, Any]:
    """The episode attackers of bench/redteam_agent.py: the scripted agent (scenario recognition,
    values by shape, plan replay) and its baselines, by label; each has ``ask`` for an
    ``EpisodeRunner`` and ``respond`` (sync)."""
    import importlib.util

    name = "bench_redteam_agent"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("redteam_agent.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    agents: dict[str, Any] = sys.modules[name].baseline_agents()
    return agents


_MINERS: dict[str, Callable[[], Miner]] = {
    "lexical": LexicalMiner,
    "template": TemplateInverter,
    "never": NeverCalls,
    "random": RandomTool,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int_arg(1), default=5_000, help="builtin tasks to attack")
    parser.add_argument("--per-category", type=int_arg(0), default=0, help="N tasks of each category instead")
    parser.add_argument("--seed", default="1", help="round seed of the tasks")
    parser.add_argument("--variant-seed", default="redteam", help="miner seed of the variants shown")
    parser.add_argument("--miners", default="template,never,random", help=f"any of {', '.join(_MINERS)}")
    parser.add_argument("--phrased", action="store_true", help="reword the round with the stand-in model")
    args = parser.parse_args()
    unknown = [name for name in args.miners.split(",") if name not in _MINERS]
    if unknown:
        parser.error(f"unknown miners: {', '.join(unknown)} (known: {', '.join(_MINERS)})")
    if args.per_category:
        mix = {category: 1.0 for category in CATEGORIES}
        tasks_list = generate(args.seed, args.per_category * len(CATEGORIES), mix=mix)
    else:
        tasks_list = generate(args.seed, args.tasks)
    if args.phrased:
        integrity = _sibling("integrity")
        tasks_list = list(asyncio.run(integrity.phrase_with_standin(tasks_list, args.seed)).tasks)
    for label in args.miners.split(","):
        miner = _MINERS[label]()
        started = time.perf_counter()
        results = evaluate_miner(miner, tasks_list, args.variant_seed)
        per_task_ms = 1000 * (time.perf_counter() - started) / len(tasks_list)
        print(f"{type(miner).__name__} ({per_task_ms:.2f} ms/task with variant and check):")
        for category in CATEGORIES:
            valid, total = results.get(category, (0, 0))
            print(f"  {category:<18} {valid:>5}/{total:<5} {valid / total if total else 0:7.1%}")


if __name__ == "__main__":
    main()
