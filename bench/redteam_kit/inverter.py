"""``TemplateInverter``: the attacker that inverts the public templates (see bench/redteam.py), and
``match_tool``, which maps an offered (shuffled) tool back to the tool it was made from."""

from __future__ import annotations

import datetime as dt
import re
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from scoring import function_of
from tasks.builtin import _CLOSERS, _OPENERS, JOINERS
from tasks.lexicon import synonyms, verb_phrase_index
from tasks.library import tools as library_tools
from tasks.library.common import Coordinates, CronSchedule
from tasks.shuffle import split_words
from tasks.spec import ToolSpec, openai_tool
from tasks.value_generators import (
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

Answer = list[tuple[str, dict[str, Any]]]


def request_text(messages: Sequence[dict[str, Any]]) -> str:
    """The text of the last user message ("" when there is none)."""
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


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
    forms = (  # (regex, group order: year, month, day), one per spoken form of tasks.values.Date
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
    """``low``..``high`` items said as "a, b and c" (``tasks.values._join``)."""
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
        for joiner in JOINERS:
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
