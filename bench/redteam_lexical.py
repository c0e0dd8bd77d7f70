"""Red team: the lexical miner, a model-free keyword program that reads any text, template or phrased.

It knows only the public code: the tool library (descriptions, parameter descriptions, request
templates, value generators) and the value formats of ``tasks.value_generators``. For each request it

1. maps every offered (renamed, reworded) tool back to the library tool it was most likely made
   from, by word overlap weighted with IDF over names, descriptions and parameter descriptions;
   each offered parameter gets the value generator of its closest library parameter (same JSON
   type, nearest description); a tool that fits no library tool keeps its own text and its
   parameters are read by JSON type, enum and the nearest library parameter over the whole library;
2. cuts the request into clauses (the generator's joiners, sentence ends, conjunctions) and groups
   them: a clause that names a tool opens a call once the previous call has its values;
3. picks per group the offered tool whose words (and its library tool's templates) best overlap
   the group's words, unless a library tool that is not offered fits clearly better (no call);
4. pulls typed values out of the group with every public pool and format (pick lists, composed
   ids and paths, number say-forms, the date forms, times, coordinates, cron phrases, quoted text)
   and assigns them to parameters greedily by type strength and the description and template words
   next to each value;
5. answers no call when a required parameter got no value (and a vague phrase stands in for it).

    .venv/bin/python bench/redteam.py --miners lexical [--tasks 600]
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from random import Random
from typing import Any, cast

from tasks import Task, generate, variant
from tasks.answers import reference_calls
from tasks.builtin import _JOINERS
from tasks.devices._words import ORDINALS
from tasks.lexicon import synonym_index
from tasks.library import tools as library_tools
from tasks.library.common import Coordinates, CronSchedule
from tasks.spec import BFCL_TYPES, Param, ToolSpec, openai_tool
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

__all__ = ["LexicalMiner"]

Answer = list[tuple[str, dict[str, Any]]]

_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "but",
        "if",
        "as",
        "is",
        "are",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "my",
        "me",
        "i",
        "you",
        "your",
        "we",
        "our",
        "us",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "please",
        "can",
        "could",
        "would",
        "will",
        "just",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "so",
        "some",
        "any",
        "all",
        "one",
        "each",
        "every",
        "into",
        "out",
        "up",
        "about",
        "than",
        "then",
        "there",
        "here",
        "what",
        "which",
        "who",
        "when",
        "where",
        "how",
        "not",
        "no",
        "yes",
        "ok",
        "okay",
        "hey",
        "hi",
        "thanks",
        "thank",
        "need",
        "want",
        "like",
        "get",
        "let",
        "lets",
        "s",
        "t",
        "e",
        "g",
        "eg",
        "via",
        "per",
        "also",
        "plus",
        "after",
        "oh",
        "too",
        "only",
    ]
)
_TOKEN = re.compile(r"[A-Za-z]+|\d+")


def _stem(word: str) -> str:
    for suffix in ("ings", "ing", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


@lru_cache(maxsize=65536)
def _canon(word: str) -> str:
    """One spelling per synonym group (the shuffle renames by the public synonym lists), stemmed."""
    group = synonym_index().get(word)
    return _stem(min(group) if group else word)


def _words(text: str) -> list[str]:
    """Content words of any text or identifier (camelCase and snake_case split), canonical."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return [
        _canon(w) for w in (t.lower() for t in _TOKEN.findall(spaced)) if w not in _STOP and not w.isdigit()
    ]


# --- The library, indexed -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _LibParam:
    spec: ToolSpec
    param: Param
    json_type: str
    words: frozenset[str]  # description and name words
    context: frozenset[str]  # words right before its placeholder in the templates, plus ``words``
    after: frozenset[str]  # words right after its placeholder in the templates


@dataclass(frozen=True, slots=True)
class _LibTool:
    spec: ToolSpec
    words: frozenset[str]  # name, description, parameter descriptions
    asked: frozenset[str]  # ``words`` and the templates' literal words: how people ask for it
    params: tuple[_LibParam, ...]


def _template_context(spec: ToolSpec) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per parameter: the literal words right before (three) and right after (two) its
    placeholders in the templates ("from {origin} to", "put it in {to_scale}")."""
    before: dict[str, set[str]] = {param.name: set() for param in spec.params}
    after: dict[str, set[str]] = {param.name: set() for param in spec.params}
    for template in spec.templates:
        parts = list(string.Formatter().parse(template))
        for index, (literal, name, _, _) in enumerate(parts):
            if name and name in before:
                before[name].update(_words(literal)[-3:])
                following = parts[index + 1][0] if index + 1 < len(parts) else ""
                after[name].update(_words(following)[:2])
    return before, after


@cache
def _library() -> tuple[tuple[_LibTool, ...], dict[str, float]]:
    """The library tools with their vocabularies, and the IDF of every word over them."""
    entries: list[_LibTool] = []
    for spec in library_tools():
        before, after = _template_context(spec)
        params = []
        for param in spec.params:
            own = frozenset(_words(param.description) + _words(param.name))
            json_type = BFCL_TYPES[param.type]
            params.append(
                _LibParam(spec, param, json_type, own, own | before[param.name], frozenset(after[param.name]))
            )
        words = set(_words(spec.name) + _words(spec.description))
        for p in params:
            words |= p.words
        asked = set(words)
        for template in spec.templates:
            asked.update(_words(re.sub(r"\{\w*\}", " ", template)))
        entries.append(_LibTool(spec, frozenset(words), frozenset(asked), tuple(params)))
    frequency: Counter[str] = Counter()
    for entry in entries:
        frequency.update(entry.asked)
    count = len(entries)
    idf = {word: math.log((1 + count) / (1 + n)) + 0.2 for word, n in frequency.items()}
    return tuple(entries), idf


@cache
def _unseen_idf() -> float:
    return math.log(1 + len(_library()[0])) + 0.2


def _idf(word: str) -> float:
    return _library()[1].get(word) or _unseen_idf()


def _overlap(a: Iterable[str], b: frozenset[str] | set[str]) -> float:
    return sum(_idf(w) for w in set(a) if w in b)


@lru_cache(maxsize=65536)
def _norm(words: frozenset[str]) -> float:
    return math.sqrt(sum(_idf(w) ** 2 for w in words))


def _similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """IDF-weighted cosine of two word sets."""
    if not a or not b:
        return 0.0
    shared = sum(_idf(w) ** 2 for w in a & b)
    return shared / (_norm(a) * _norm(b)) if shared else 0.0


@cache
def _calibration() -> tuple[dict[str, float], float, float]:
    """What the public generator teaches about offered tools that are not the answer, learned
    here from a round it draws (any miner can draw rounds, with their gold answers):

    per word of a tool's name and description that the request does NOT say, the log-odds that
    the tool is still the one to call (a lookalike's "checks whether ... would be accepted",
    "estimates the cost", "sets a reminder ... later" are never the answer unless asked for);
    and the score under which a tool is not the answer (below 99% of the answers' scores)."""
    gold: Counter[str] = Counter()
    other: Counter[str] = Counter()
    samples: list[tuple[frozenset[str], bool]] = []
    for shown in _calibration_round():
        said = set(_plain_words(_request(shown.messages)))
        answers = {name for name, _ in reference_calls(shown.expected)}
        for tool in shown.tools:
            function = _function(tool)
            unsaid = _described(function) - said
            is_gold = str(function.get("name", "")) in answers
            (gold if is_gold else other).update(unsaid)
            samples.append((unsaid, is_gold))
    golds = max(1, sum(is_gold for _, is_gold in samples))
    others = max(1, len(samples) - golds)
    weights = {
        word: math.log((gold[word] + 0.5) / golds) - math.log((other[word] + 0.5) / others)
        for word in set(gold) | set(other)
    }
    unseen = 0.0
    scores = sorted(sum(weights.get(w, unseen) for w in unsaid) for unsaid, is_gold in samples if is_gold)
    floor = scores[len(scores) // 100] - 1.0 if scores else -math.inf
    return weights, unseen, floor


@cache
def _calibration_round() -> tuple[Task, ...]:
    """A round the public generator draws, as miners are shown it (the learner's material)."""
    return tuple(variant(task, "lexical-calibration") for task in generate("lexical-calibration", 1500))


@dataclass(frozen=True, slots=True)
class _Pool:
    """Values seen in answers of the calibration round for parameters described alike."""

    texts: tuple[str, ...]


@cache
def _observed() -> tuple[dict[tuple[str, frozenset[str]], set[str]], frozenset[str]]:
    """Per (JSON type, description words) of an offered parameter: the answer values seen for it
    in the calibration round (list items for arrays); and the description words too common to
    tell parameters apart (the rewording's "Purpose:", "as stated", ...)."""
    frequency: Counter[str] = Counter()
    seen: dict[tuple[str, frozenset[str]], set[str]] = {}
    described: list[tuple[str, list[str], Any]] = []
    for shown in _calibration_round():
        answers = dict(reference_calls(shown.expected))
        for tool in shown.tools:
            function = _function(tool)
            arguments = answers.get(str(function.get("name", "")), {})
            for name, prop in ((function.get("parameters") or {}).get("properties") or {}).items():
                words = _words(str(prop.get("description", "")))
                frequency.update(set(words))
                if arguments.get(name) not in (None, ""):
                    described.append((str(prop.get("type", "")), words, arguments[name]))
    total = max(1, sum(1 for shown in _calibration_round() for _ in shown.tools))
    common = frozenset(word for word, n in frequency.items() if n > 0.05 * total * 2)
    for json_type, words, value in described:
        items = value if isinstance(value, list) else [value]
        texts = {str(item) for item in items if isinstance(item, str) and item}
        if texts:
            seen.setdefault((json_type, frozenset(words) - common), set()).update(texts)
    return seen, common


def _observed_gen(json_type: str, words: frozenset[str]) -> Any:
    """A pool of the values seen for the most alike described parameter, or None."""
    seen, common = _observed()
    mine = words - common
    best = max(
        ((_similarity(mine, key[1]), key) for key in seen if key[0] == json_type and key[1]),
        key=lambda item: item[0],
        default=None,
    )
    if best is None or best[0] < 0.5:
        return None
    pool = _Pool(tuple(sorted(seen[best[1]])))
    return ListOf(cast(Any, pool), 1, 8) if json_type == "array" else pool


def _described(function: dict[str, Any]) -> frozenset[str]:
    return frozenset(_words(str(function.get("name", ""))) + _words(str(function.get("description", ""))))


def _unsaid_score(tool: _Tool, said: set[str]) -> float:
    """The learned log-odds, over what the tool's description says and the request does not,
    that the tool is the one to call (see ``_calibration``)."""
    weights, unseen, _ = _calibration()
    return sum(weights.get(w, unseen) for w in tool.described if w not in said)


# --- Offered tools, mapped back -----------------------------------------------------------------


@dataclass(slots=True)
class _Slot:
    """One offered parameter: its shown name, type, whether required, and how its values look."""

    name: str
    json_type: str
    required: bool
    enum: tuple[Any, ...] | None
    gen: Any  # the library value generator it most likely takes, or None
    context: frozenset[str]  # words said before its values: its description, its templates' words
    after: frozenset[str]  # words said after its values in its templates
    order: int  # its library parameter's position (the order templates state same-typed values in)
    role: str = (
        ""  # the preposition its description ends on ("Address to collect from"): said before its value
    )


@dataclass(slots=True)
class _Tool:
    name: str
    slots: list[_Slot]
    lib: _LibTool | None
    asked: frozenset[str]  # words people use for it: its own text, and its library tool's templates
    described: frozenset[str]  # the words of its own name and description


_UNIT_WORDS = {
    "mg": ("milligrams", "milligram"),
    "g": ("grams", "gram"),
    "kg": ("kilograms", "kilogram"),
    "l": ("litre", "liter", "litres", "liters"),
    "ml": ("millilitres", "milliliters", "millilitre", "milliliter"),
    "km": ("kilometres", "kilometers"),
    "m": ("metres", "meters"),
    "ppm": ("parts per million",),
    "ppb": ("parts per billion",),
    "kwh": ("kilowatt hours", "kilowatt-hours"),
}


def _unit_says(value: str) -> set[str]:
    """Ways to say a unit-like enum value in words ("mg_per_l": "milligrams per litre")."""
    parts = value.lower().split("_")
    if not any(part in _UNIT_WORDS for part in parts):
        return set()
    said = [""]
    for part in parts:
        choices = [part, *_UNIT_WORDS.get(part, ())] if part != "per" else ["per"]
        said = [f"{head} {choice}".strip() for head in said for choice in choices][:64]
    return set(said)


def _enum_gen(enum: Sequence[Any]) -> Pick:
    """A pick among an offered enum's values, said through every public pick that offers them."""
    options: dict[Any, set[str]] = {
        value: {
            str(value),
            str(value).replace("_", " "),
            str(value).replace("_per_", "/"),
            str(value).replace("_", "-"),
        }
        | _unit_says(str(value))
        for value in enum
    }
    for pick in _all_picks():
        for option in pick.options:
            for value in option.accepted:
                if isinstance(value, str) and value in options:
                    options[value].update(option.says)
    from tasks.value_generators import Option

    return Pick(tuple(Option(tuple(sorted(says)), (value,)) for value, says in options.items()))


@cache
def _all_picks() -> tuple[Pick, ...]:
    found: list[Pick] = []
    for entry in _library()[0]:
        for p in entry.params:
            gen = p.param.gen
            if isinstance(gen, ListOf):
                gen = gen.item
            if isinstance(gen, Pick):
                found.append(gen)
    return tuple(found)


def _param_score(lib: _LibParam, json_type: str, words: frozenset[str], enum: Any, desc: str) -> float:
    if lib.json_type != json_type and json_type:
        return -1.0
    score = _similarity(words, lib.words)
    if desc == lib.param.description:
        score += 1.0
    if enum and lib.param.enum:
        shared = len(set(map(str, enum)) & set(map(str, lib.param.enum)))
        score += shared / max(len(enum), len(lib.param.enum))
    elif bool(enum) != bool(lib.param.enum):
        score -= 0.3
    return score


@cache
def _flat_params() -> tuple[_LibParam, ...]:
    return tuple(p for entry in _library()[0] for p in entry.params)


@lru_cache(maxsize=16384)
def _param_scores(
    json_type: str, words: frozenset[str], enum: tuple[Any, ...] | None, desc: str
) -> dict[int, float]:
    """How well an offered parameter matches each library parameter (by ``id``)."""
    return {id(p): _param_score(p, json_type, words, enum, desc) for p in _flat_params()}


_ROLES = frozenset(
    {"from", "to", "into", "at", "via", "until", "since", "after", "before", "with", "by", "for"}
)


def _role_of(desc: str) -> str:
    words = re.findall(r"[a-z]+", re.sub(r"\(.*?\)|,.*$", "", desc.lower().rstrip(". ")))
    return words[-1] if words and words[-1] in _ROLES else ""


def _nearest(
    json_type: str, words: frozenset[str], enum: tuple[Any, ...] | None, desc: str
) -> tuple[_LibParam | None, Any]:
    """The closest library parameter over the whole library and the generator to read values
    with; an array may also take a list of the closest single-valued parameter's values."""
    table = _param_scores(json_type, words, enum, desc)
    closest = max(((table[id(p)], p) for p in _flat_params()), key=lambda item: item[0], default=None)
    best = closest if closest is not None and closest[0] >= 0.25 else None
    if json_type == "array":
        singles = _param_scores("string", words, enum, desc)
        single = max(((singles[id(p)], p) for p in _flat_params()), key=lambda item: item[0], default=None)
        if single is not None and single[0] >= 0.25 and (best is None or single[0] > best[0] + 0.05):
            return single[1], ListOf(single[1].param.gen, 1, 6)
    return (best[1], best[1].param.gen) if best is not None else (None, None)


@dataclass(frozen=True, slots=True)
class _AnyNumber:
    """Any number said, for a loosely matched numeric parameter (its pool's range may not hold)."""

    whole: bool


@dataclass(frozen=True, slots=True)
class _Union:
    """Several ways a loosely matched value may look, quoted text among them."""

    gens: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _Shaped:
    """An identifier shaped like a description's example ("Sample reference, e.g. SMP-K48213."):
    its leading letters as written, then letters and digits where the example has them."""

    regex: str


_EXAMPLE_IN = re.compile(
    r"(?:e\.\s?g\.?|such as|for example|for instance|like)\s*,?\s*"
    r"([A-Za-z0-9]+(?:[-_/.:][A-Za-z0-9]+)+|[A-Z]+\d+)",
)


def _shape_of(desc: str) -> _Shaped | None:
    found = _EXAMPLE_IN.search(desc)
    if found is None or not re.search(r"\d", found[1]):
        return None
    example = found[1].rstrip(".")
    head = re.match(r"[A-Za-z]+[-_]?", example)
    prefix = head.group() if head and not head.group().isalnum() else ""
    shape = re.escape(prefix)
    for char in example[len(prefix) :]:
        shape += (
            r"\d"
            if char.isdigit()
            else "[A-Z]"
            if char.isupper()
            else "[a-z]"
            if char.islower()
            else re.escape(char)
        )
    return _Shaped(shape)


def _shaped_finder(gen: _Shaped) -> Finder:
    regex = re.compile(rf"(?<![\w-])({gen.regex})(?![\w-])", re.IGNORECASE)
    return lambda text: [_Find(m.start(), m.end(), m[1].upper(), 3.5) for m in regex.finditer(text)]


def _resolve(function_json: str) -> _Tool:
    return _resolve_cached(function_json)


@lru_cache(maxsize=8192)
def _resolve_cached(function_json: str) -> _Tool:
    function = json.loads(function_json)
    schema = function.get("parameters") or {}
    props: dict[str, Any] = dict(schema.get("properties") or {})
    required = set(schema.get("required") or ())
    shown = []
    for name, prop in props.items():
        desc = str(prop.get("description", ""))
        enum = tuple(prop["enum"]) if isinstance(prop.get("enum"), list) else None
        shown.append((name, str(prop.get("type", "")), frozenset(_words(desc) + _words(name)), enum, desc))
    own = set(_words(str(function.get("name", ""))) + _words(str(function.get("description", ""))))
    for _, _, words, _, _ in shown:
        own |= words
    entries, _ = _library()
    best: tuple[float, _LibTool, dict[str, _LibParam]] | None = None
    for entry in entries:
        pairing: dict[str, _LibParam] = {}
        total = 0.0
        free = list(entry.params)
        for name, json_type, words, enum, desc in shown:
            table = _param_scores(json_type, words, enum, desc)
            scored = [(table[id(p)], i) for i, p in enumerate(free)]
            if not scored:
                break
            top, index = max(scored)
            if top <= 0.2:
                continue
            total += top
            pairing[name] = free.pop(index)
        size = max(len(shown), len(entry.params), 1)
        score = (
            0.5 * _similarity(frozenset(own), entry.words)
            + total / size
            - 0.15 * abs(len(shown) - len(entry.params))
        )
        if best is None or score > best[0]:
            best = (score, entry, pairing)
    lib = best[1] if best is not None and best[0] >= 0.55 else None
    pairing = best[2] if lib is not None and best is not None else {}
    slots: list[_Slot] = []
    for name, json_type, words, enum, desc in shown:
        match = pairing.get(name)
        gen: Any = None
        if match is None:  # nearest parameter over the whole library, for its value generator
            match, gen = _nearest(json_type, words, enum, desc)
            if json_type in ("string", "array"):
                # A loose match: also the values seen for parameters described alike, and quotes.
                table = _param_scores(json_type, words, enum, desc)
                if match is None or table.get(id(match), 0.0) < 0.45:
                    observed = _observed_gen(json_type, words)
                    kinds = tuple(g for g in (gen, observed) if g is not None)
                    gen = _Union(kinds) if json_type == "string" and not enum else (observed or gen)
            elif json_type in ("integer", "number") and gen is not None:
                table = _param_scores(json_type, words, enum, desc)
                if match is None or table.get(id(match), 0.0) < 0.45:
                    gen = _Union((gen, _AnyNumber(json_type == "integer")))
        elif match is not None:
            gen = match.param.gen
        shaped = _shape_of(desc)
        if shaped is not None and not isinstance(gen, Composed | ListOf):
            gen = ListOf(cast(Any, shaped), 1, 6) if json_type == "array" else shaped
        if enum and (
            gen is None
            or not isinstance(gen, Pick)
            or match is None
            or not match.param.enum
            or set(map(str, enum)) != set(map(str, match.param.enum))
        ):
            gen = _enum_gen(enum)
        context = words | (match.context if match is not None else frozenset())
        order = list(match.spec.params).index(match.param) if match is not None else 100 + len(slots)
        slots.append(
            _Slot(
                name,
                json_type,
                name in required,
                tuple(enum) if enum else None,
                gen,
                context,
                match.after if match is not None else frozenset(),
                order,
                _role_of(desc),
            )
        )
    asked = frozenset(own | (lib.asked if lib is not None else frozenset()))
    described = frozenset(
        _words(str(function.get("name", ""))) + _words(str(function.get("description", "")))
    )
    return _Tool(str(function.get("name", "")), slots, lib, asked, described)


# --- Typed values in text -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Find:
    """A value found in text: its span(s), the value, and how sure its type makes it (0-4)."""

    start: int
    end: int
    value: Any
    strength: float
    spans: tuple[tuple[int, int], ...] = ()

    def cover(self) -> tuple[tuple[int, int], ...]:
        return self.spans or ((self.start, self.end),)


Finder = Callable[[str], list[_Find]]


def _alt(texts: Iterable[str]) -> str:
    return "|".join(re.escape(t) for t in sorted(set(texts), key=lambda t: (-len(t), t)) if t)


# A number standing alone (not inside an id, date, time, path or exponent); "12x" is a coefficient.
_NUM = r"(?<![\w.:/+^-])-?\d+(?:\.\d+)?(?![a-wyzA-Z0-9_:/]|\.\d|-\d|x[a-z])"
_NUM_RE = re.compile(_NUM)
_MONTH = {m.lower(): i + 1 for i, m in enumerate(_MONTHS)} | {
    m[:3].lower(): i + 1 for i, m in enumerate(_MONTHS)
}
_MONTHS_ALT = _alt([*_MONTHS, *(m[:3] for m in _MONTHS)])
_DATE_RE = re.compile(
    rf"\b(?:(?P<m1>{_MONTHS_ALT})\.? (?P<d1>\d{{1,2}}),? (?P<y1>\d{{4}})"
    rf"|(?P<d2>\d{{1,2}}) (?P<m2>{_MONTHS_ALT}),? (?P<y2>\d{{4}})"
    r"|(?P<y3>\d{4})-(?P<m3>\d{2})-(?P<d3>\d{2})"
    r"|(?P<m4>\d{2})/(?P<d4>\d{2})/(?P<y4>\d{4}))\b",
    re.IGNORECASE,
)
_TIME_RE = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::00)?(?:\s?([ap])\.?m\.?)?(?![\d:])", re.IGNORECASE)
_QUOTED_RE = re.compile(r'"([^"]+)"')
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@lru_cache(maxsize=4096)
def _dates(text: str) -> list[_Find]:
    found = []
    for m in _DATE_RE.finditer(text):
        for k in "1234":
            if m[f"y{k}"]:
                month = m[f"m{k}"]
                number = _MONTH.get(month.lower()) if not month.isdigit() else int(month)
                try:
                    day = dt.date(int(m[f"y{k}"]), number or 0, int(m[f"d{k}"]))
                except ValueError:
                    break
                found.append(_Find(m.start(), m.end(), day.isoformat(), 4.0))
                break
    return found


@lru_cache(maxsize=4096)
def _times(text: str) -> list[_Find]:
    found = []
    for m in _TIME_RE.finditer(text):
        hour, minute, half = int(m[1]), m[2], (m[3] or "").lower()
        if half:
            hour = hour % 12 + (12 if half == "p" else 0)
        if hour < 24:
            found.append(_Find(m.start(), m.end(), f"{hour:02d}:{minute}", 4.0))
    return found


def _numbers(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _NUM_RE.finditer(text)]


def _pick_finder(gen: Pick) -> Finder:
    values: dict[str, Any] = {}
    for option in gen.options:
        forms = list(option.says) + [v for v in option.accepted if isinstance(v, str) and len(v) > 2]
        for form in forms:
            values.setdefault(form.lower(), option.accepted[0])
            values.setdefault(form.lower().replace("_", " "), option.accepted[0])
    regex = re.compile(rf"(?<![\w@/.-])(?:{_alt(values)})(?![\w@/-])", re.IGNORECASE)
    places = sum(bool(_PLACE.fullmatch(say)) for option in gen.options for say in option.says)
    open_space = _open_finder(_PLACE, 1.8) if places >= len(gen.options) // 2 and places else None

    def find(text: str) -> list[_Find]:
        found = [
            _Find(m.start(), m.end(), values[m.group().lower()], 2.0 + min(len(m.group()), 12) / 12)
            for m in regex.finditer(text)
        ]
        return found + (open_space(text) if open_space is not None else [])

    return find


def _flag_finder(gen: Flag) -> Finder:
    values = {say.lower(): False for say in gen.says_false} | {say.lower(): True for say in gen.says_true}
    regex = re.compile(rf"(?<!\w)(?:{_alt(values)})(?!\w)", re.IGNORECASE)
    return lambda text: [
        _Find(m.start(), m.end(), values[m.group().lower()], 3.0) for m in regex.finditer(text)
    ]


def _quoted_finder(gen: Quoted) -> Finder:
    bodies = tuple(gen.bodies)
    # The public bodies said without quotes (a phrasing quotes only text with spaces).
    bare = re.compile(rf"(?<![\w\"])((?:{_alt(bodies)})(?:{_alt(gen.tails)})?)(?![\w\"])", re.IGNORECASE)

    def find(text: str) -> list[_Find]:
        found = [
            _Find(m.start(), m.end(), m[1], 3.5 if m[1].startswith(bodies) else 1.5)
            for m in _QUOTED_RE.finditer(text)
        ]
        inside = [(f.start, f.end) for f in found]
        for m in bare.finditer(text):
            if not any(s <= m.start() < e for s, e in inside):
                found.append(_Find(m.start(), m.end(), m[1], 2.5))
        return found

    return find


def _composed_finder(gen: Composed) -> Finder:
    pattern = ""
    for position, (literal, name, _, _) in enumerate(string.Formatter().parse(gen.pattern)):
        pattern += re.escape(literal)
        if name is not None:
            part = gen.parts[int(name) if name else position]
            pattern += f"(?:{_alt(part)})" + ("?" if "" in part else "")
    regex = re.compile(rf'(?<![\w/.@-])"?({pattern})"?(?![\w/@]|\.\w|-\w)', re.IGNORECASE)
    shape = _open_shape(gen)
    open_space = _open_finder(shape, 2.5) if shape is not None else None

    def find(text: str) -> list[_Find]:
        found = [_Find(m.start(), m.end(), m[1], 3.5) for m in regex.finditer(text)]
        return found + (open_space(text) if open_space is not None else [])

    return find


# Open value spaces: the public pools' formats, for values drawn beyond the pools' lists.
_PLACE = re.compile(r"[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*, [A-Z][A-Za-z]+(?: [A-Z][a-z]+)*")
_EMAIL = re.compile(r"[a-z0-9][a-z0-9._-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)+", re.IGNORECASE)
_HANDLE = re.compile(r"@[a-z][a-z0-9._-]*[a-z0-9]", re.IGNORECASE)
_PHONE = re.compile(r"\+\d{1,3}(?: \d{2,4}){2,4}")
_PERSON = re.compile(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)? [A-Z][a-z]+(?:-[A-Z][a-z]+)?")
_ADDRESS = re.compile(
    r"\d+ [A-Z][a-z]+ (?:[A-Z][a-z]+ )?(?:Street|Road|Avenue|Lane|Way|Drive|Boulevard|Court|Place)"
)


def _open_shape(gen: Composed) -> re.Pattern[str] | None:
    """The open format of a composed pool, when it is one of the kinds people's names, emails,
    handles and phone numbers take."""
    pattern = gen.pattern
    if "@" in pattern and not pattern.startswith("@"):
        return _EMAIL
    if pattern.startswith("@"):
        return _HANDLE
    if pattern.startswith("+"):
        return _PHONE
    if pattern == "{0} {1}" and all(part and all(p[:1].isupper() for p in part) for part in gen.parts):
        return _PERSON
    return None


def _open_finder(shape: re.Pattern[str], strength: float) -> Finder:
    regex = re.compile(rf"(?<![\w@.+-])(?:{shape.pattern})(?![\w@-]|\.\w)", shape.flags)
    return lambda text: [
        _Find(m.start(), m.end(), m.group().rstrip("."), strength) for m in regex.finditer(text)
    ]


_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800, "fortnight": 1209600}
_UNIT_SECONDS |= {
    "meter": 10**9,
    "metre": 10**9,
    "m": 10**9,
    "kilometer": 10**12,
    "kilometre": 10**12,
    "km": 10**12,
}
_UNIT_NAMES = {"meters": "meter", "metres": "metre", "kilometers": "kilometer", "kilometres": "kilometre"}
_SMALL_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a": 1,
    "an": 1,
    "a couple of": 2,
    "couple of": 2,
}
_FRACTIONS = {"half": 0.5, "a half": 0.5, "quarter": 0.25, "a quarter": 0.25, "three quarters": 0.75}
_DURATION = re.compile(
    rf"\b(?:(?P<n>\d+|{_alt(_SMALL_NUMBERS)})\s+(?:and\s+(?P<frac1>a\s+half|a\s+quarter)\s+)?"
    r"|(?P<pre>three[\s-]quarters|a\s+quarter|quarter|half)\s+(?:of\s+)?(?:an?\s+)?)"
    r"(?:(?:whole|full)\s+)?(?P<unit>seconds?|minutes?|hours?|days?|weeks?|fortnight|(?:kilo)?met(?:er|re)s?)"
    r"(?:\s+and\s+(?P<frac2>a\s+half|a\s+quarter))?\b",
    re.IGNORECASE,
)


def _durations(text: str, unit: str) -> list[_Find]:
    """Lengths of time said in any unit ("an hour and a half", "a quarter of an hour", "two full
    days"), as whole numbers of ``unit`` (a key of ``_UNIT_SECONDS``) where they come out whole."""
    found = []
    for m in _DURATION.finditer(text):
        said_unit = _UNIT_NAMES.get(m["unit"].lower(), m["unit"].lower().rstrip("s"))
        if (_UNIT_SECONDS[said_unit] >= 10**9) != (_UNIT_SECONDS[unit] >= 10**9):
            continue  # a length for a time or a time for a length
        if m["pre"]:
            count = _FRACTIONS.get(re.sub(r"[\s-]+", " ", m["pre"].lower()), 0.0)
        else:
            number = m["n"].lower()
            count = float(number) if number.isdigit() else float(_SMALL_NUMBERS[number])
            count += _FRACTIONS.get(re.sub(r"\s+", " ", (m["frac1"] or m["frac2"] or "").lower()), 0.0)
        value = count * _UNIT_SECONDS[said_unit] / _UNIT_SECONDS[unit]
        if value == int(value) and value > 0:
            found.append(_Find(m.start(), m.end(), int(value), 2.5))
    return found


def _unit_of(say: str) -> str | None:
    words = [_UNIT_NAMES.get(w, w) for w in re.findall(r"[a-z]+", say.lower())]
    return next(
        (
            w if w in _UNIT_SECONDS else w.rstrip("s")
            for w in words
            if w in _UNIT_SECONDS or w.rstrip("s") in _UNIT_SECONDS
        ),
        None,
    )


def _integer_finder(gen: Integer) -> Finder:
    unit = _unit_of(gen.say)

    def find(text: str) -> list[_Find]:
        found = []
        for start, end, said in _numbers(text):
            if "." in said:
                continue
            value = int(said)
            if not gen.low <= value <= gen.high or (value - gen.low) % gen.step:
                continue
            found.append(_Find(start, end, value, 2.5 if _said_around(gen.say, text, start, end) else 1.0))
        if unit is not None:  # the length said in another unit ("an hour and a half" for minutes)
            found.extend(f for f in _durations(text, unit) if gen.low <= f.value <= gen.high)
        return found

    return find


def _said_around(say: str, text: str, start: int, end: int) -> bool:
    """Whether the number at ``start:end`` is said through ``say`` ("{} nights", "$ {}")."""
    before, after = say.split("{}") if "{}" in say else ("", "")
    before, after = before.strip().lower(), after.strip().lower()
    if after and text[end : end + len(after) + 1].strip().lower().startswith(after):
        return True
    return bool(before) and text[max(0, start - len(before) - 1) : start].strip().lower().endswith(before)


def _decimal_finder(gen: Decimal) -> Finder:
    def find(text: str) -> list[_Find]:
        found = []
        for start, end, said in _numbers(text):
            value = float(said)
            if gen.low - 1e-9 <= value <= gen.high + 1e-9:
                strength = 1.2 if "." in said else 0.8
                found.append(
                    _Find(start, end, value, 2.5 if _said_around(gen.say, text, start, end) else strength)
                )
        return found

    return find


_COORD_RE = re.compile(r"(?<![\w.])(-?\d+\.\d{3,})(?:,| and|, and)\s*(-?\d+\.\d{3,})(?!\w|\.\d)")


def _coordinates_finder(gen: Coordinates) -> Finder:
    return lambda text: [
        _Find(m.start(), m.end(), [float(m[1]), float(m[2])], 4.0) for m in _COORD_RE.finditer(text)
    ]


_CRON_KIND = re.compile(
    rf"\b(every day|daily|every weekday|weekdays|every hour|hourly|{_alt(_WEEKDAYS)})\b", re.IGNORECASE
)


def _cron_finder(gen: CronSchedule) -> Finder:
    def find(text: str) -> list[_Find]:
        kinds = list(_CRON_KIND.finditer(text))
        if not kinds:
            return []
        kind = kinds[0]
        word = kind[1].lower()
        if word in ("every hour", "hourly"):
            after = [(s, e, n) for s, e, n in _numbers(text) if "." not in n and 0 <= int(n) < 60]
            if not after:
                return []
            s, e, n = min(after, key=lambda item: abs(item[0] - kind.end()))
            return [_Find(kind.start(), e, f"{int(n)} * * * *", 4.0, ((kind.start(), kind.end()), (s, e)))]
        times = _times(text)
        if not times:
            return []
        at = min(times, key=lambda f: abs(f.start - kind.end()))
        hour, minute = (int(x) for x in at.value.split(":"))
        if word in ("every day", "daily"):
            day = "*"
        elif word in ("every weekday", "weekdays"):
            day = "1-5"
        else:
            day = str((_WEEKDAYS.index(kind[1].capitalize()) + 1) % 7)
        spans = ((kind.start(), kind.end()), (at.start, at.end))
        return [
            _Find(
                min(kind.start(), at.start), max(kind.end(), at.end), f"{minute} {hour} * * {day}", 4.0, spans
            )
        ]

    return find


def _list_finder(gen: ListOf) -> Finder:
    item_gen: Any = gen.item
    item = _finder(item_gen)

    def find(text: str) -> list[_Find]:
        said = [f for f in item(text) if not _taken_back(text, f.start, f.end)]
        items = _disjoint(sorted(said, key=lambda f: (-f.strength, f.start)))
        items.sort(key=lambda f: f.start)
        values: list[Any] = []
        spans = []
        for f in items:
            if f.value not in values:
                values.append(f.value)
                spans.append((f.start, f.end))
        if not values:
            return []
        strength = sum(f.strength for f in items) / len(items) + 0.3 * min(len(values), 3)
        return [_Find(spans[0][0], spans[-1][1], values, strength, tuple(spans))]

    return find


def _unused_items(f: _Find, used: list[tuple[int, int]]) -> _Find | None:
    """A list find without the items another parameter took (None when none is left)."""
    keep = [
        (span, value)
        for span, value in zip(f.spans, f.value, strict=True)
        if not any(span[0] < ue and us < span[1] for us, ue in used)
    ]
    if not keep:
        return None
    spans = tuple(span for span, _ in keep)
    return _Find(spans[0][0], spans[-1][1], [value for _, value in keep], f.strength, spans)


def _records_finder(record: Record, many: bool) -> Finder:
    fields = [(key, _finder(cast(Any, gen))) for key, gen in record.fields]

    def find(text: str) -> list[_Find]:
        finds = sorted(
            ((f.start, f.end, key, f) for key, finder in fields for f in finder(text)),
            key=lambda x: (x[0], -x[1]),
        )
        rows: list[dict[str, Any]] = []
        spans: list[tuple[int, int]] = []
        current: dict[str, Any] = {}
        taken_end = -1
        for start, end, key, f in finds:
            if start < taken_end:
                continue
            if key in current:
                if len(current) == len(fields):
                    rows.append(current)
                current = {} if len(current) == len(fields) else current
                if key in current:
                    continue
            current[key] = f.value
            spans.append((start, end))
            taken_end = end
            if len(current) == len(fields):
                rows.append(current)
                current = {}
                if not many:
                    break
        if not rows:
            return []
        value: Any = rows if many else rows[0]
        return [_Find(spans[0][0], spans[-1][1], value, 3.0, tuple(spans))]

    return find


@cache
def _finder(gen: Any) -> Finder:
    if isinstance(gen, Pick):
        return _pick_finder(gen)
    if isinstance(gen, Flag):
        return _flag_finder(gen)
    if isinstance(gen, Quoted):
        return _quoted_finder(gen)
    if isinstance(gen, Composed):
        return _composed_finder(gen)
    if isinstance(gen, Integer):
        return _integer_finder(gen)
    if isinstance(gen, Decimal):
        return _decimal_finder(gen)
    if isinstance(gen, Date):
        return _dates
    if isinstance(gen, ClockTime):
        return _times
    if isinstance(gen, Coordinates):
        return _coordinates_finder(gen)
    if isinstance(gen, CronSchedule):
        return _cron_finder(gen)
    if isinstance(gen, ListOf):
        return _list_finder(gen)
    if isinstance(gen, Record):
        return _records_finder(gen, many=False)
    if isinstance(gen, Records):
        return _records_finder(gen.record, many=True)
    if isinstance(gen, _Shaped):
        return _shaped_finder(gen)
    if isinstance(gen, _Pool):
        return _pool_finder(gen)
    if isinstance(gen, _AnyNumber):
        whole = gen.whole
        return lambda text: [
            _Find(s, e, int(n) if whole else float(n), 0.6)
            for s, e, n in _numbers(text)
            if not whole or "." not in n
        ]
    if isinstance(gen, _Union):
        finders = [_finder(g) for g in gen.gens]
        return lambda text: (
            [f for finder in finders for f in finder(text)]
            + [_Find(m.start(), m.end(), m[1], 1.0) for m in _QUOTED_RE.finditer(text)]
        )
    return _sampled_finder(gen)


def _pool_finder(gen: _Pool) -> Finder:
    """The values of a pool, and of the open format most of them share."""
    texts = gen.texts
    best = max(_SHAPES, key=lambda entry: _coverage(entry, texts))
    shaped: Finder | None = None
    if _coverage(best, texts) >= 0.4:
        shaped = best[0] if best[0] is not None else _open_finder(cast(re.Pattern[str], best[1]), 2.2)
    regex = re.compile(rf"(?<![\w@/.-])(?:{_alt(texts)})(?![\w@/-])", re.IGNORECASE)
    canonical = {t.lower(): t for t in texts}

    def find(text: str) -> list[_Find]:
        pooled = [
            _Find(m.start(), m.end(), canonical.get(m.group().lower(), m.group()), 2.0)
            for m in regex.finditer(text)
        ]
        return pooled + (shaped(text) if shaped is not None else [])

    return find


def _coverage(entry: tuple[Any, Any], texts: Sequence[str]) -> float:
    finder, shape = entry
    if not texts:
        return 0.0
    if shape is not None:
        return sum(bool(shape.fullmatch(t)) for t in texts) / len(texts)
    return sum(len(finder(t)) == 1 for t in texts) / len(texts)


_SHAPES = (
    (_dates, None),
    (_times, None),
    (None, _EMAIL),
    (None, _HANDLE),
    (None, _PHONE),
    (None, _ADDRESS),
    (None, _PLACE),
    (None, _PERSON),
)


def _sampled_finder(gen: Any) -> Finder:
    """A generator of a kind not known here: draw values from it (it is public code) and read
    values of the format they share, or, failing one, the values drawn."""
    draw = getattr(gen, "draw", None)
    if not callable(draw):
        return lambda text: []
    rng = Random(0)
    samples: dict[str, Any] = {}
    try:
        for _ in range(200):
            drawn = draw(rng)
            samples.setdefault(str(drawn.text).strip('"'), drawn.accepted[0])
    except Exception:  # someone else's generator: no reading is better than a crash
        return lambda text: []
    texts = list(samples)

    def coverage(entry: tuple[Any, Any]) -> float:
        finder, shape = entry
        if shape is not None:
            return sum(bool(shape.fullmatch(t)) for t in texts) / len(texts)
        return sum(len(finder(t)) == 1 for t in texts) / len(texts)

    best = max(_SHAPES, key=coverage)
    shaped: Finder | None = None
    if coverage(best) >= 0.4:
        shaped = best[0] if best[0] is not None else _open_finder(cast(re.Pattern[str], best[1]), 2.5)
    regex = re.compile(rf"(?<![\w@/.-])(?:{_alt(texts)})(?![\w@/-])", re.IGNORECASE)
    lowered = {t.lower(): v for t, v in samples.items()}

    def find(text: str) -> list[_Find]:
        pooled = [
            _Find(m.start(), m.end(), lowered.get(m.group().lower(), m.group()), 2.2)
            for m in regex.finditer(text)
        ]
        return pooled + (shaped(text) if shaped is not None else [])

    return find


def _generic_finder(slot: _Slot) -> Finder:
    """No generator known: values by JSON type alone."""
    if slot.json_type == "integer":
        return lambda text: [_Find(s, e, int(n), 0.5) for s, e, n in _numbers(text) if "." not in n]
    if slot.json_type == "number":
        return lambda text: [_Find(s, e, float(n), 0.5) for s, e, n in _numbers(text)]
    if slot.json_type == "string":

        def find(text: str) -> list[_Find]:
            return [_Find(m.start(), m.end(), m[1], 1.0) for m in _QUOTED_RE.finditer(text)] + _dates(text)

        return find
    return lambda text: []


def _disjoint(finds: list[_Find]) -> list[_Find]:
    """The finds in the given order that overlap no earlier one."""
    kept: list[_Find] = []
    used: list[tuple[int, int]] = []
    for f in finds:
        if any(s < ue and us < e for s, e in f.cover() for us, ue in used):
            continue
        kept.append(f)
        used.extend(f.cover())
    return kept


# --- Requests: clauses, groups, tools, values ----------------------------------------------------

_CUT = re.compile(
    "|".join(
        [re.escape(j) for j in _JOINERS]
        + [r"(?<=[.!?])\s+(?=[A-Z])", r";\s+(?:plus|and|also|then)\b", r",? and then\b", r"\bAlso,", r"\n+"]
    )
)


def _clauses(text: str) -> list[tuple[int, int]]:
    quoted = [(m.start(), m.end()) for m in _QUOTED_RE.finditer(text)]
    cuts = [0]
    for m in _CUT.finditer(text):
        if m.start() >= cuts[-1] and not any(s < m.start() < e for s, e in quoted):
            cuts.extend((m.start(), m.end()))
    cuts.append(len(text))
    spans = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    return [(s, e) for s, e in spans if text[s:e].strip()]


@lru_cache(maxsize=4096)
def _value_spans(text: str) -> list[tuple[int, int]]:
    """Where value-looking spans of ``text`` lie (numbers, dates, times, quotes)."""
    spans = [(s, e) for s, e, _ in _numbers(text)] + [(f.start, f.end) for f in _dates(text) + _times(text)]
    return sorted(spans + [(m.start(), m.end()) for m in _QUOTED_RE.finditer(text)])


def _context_words(
    text: str, start: int, end: int, spans: list[tuple[int, int]]
) -> tuple[list[str], list[str]]:
    """The words before a value (back to the previous value, at most five) and the two after it
    (up to the next value): the words that say what the value is for."""
    floor = max([e for _, e in spans if e <= start] + [max(0, start - 60)])
    ceiling = min([s for s, _ in spans if s >= end] + [end + 30])
    return _words(text[floor:start])[-6:], _words(text[end:ceiling])[:2]


@dataclass(slots=True)
class _Reading:
    """One group read as one tool: its arguments, what is missing, how well it fits."""

    tool: _Tool
    arguments: dict[str, Any] = field(default_factory=dict)
    missing: list[_Slot] = field(default_factory=list)
    score: float = 0.0


#: Words around a value that take it back: context the request states but does not ask with
#: ("not Lyon, that was the old plan", "I first thought 4 days, but scratch that").
_TAKEN_BACK_BEFORE = re.compile(
    r"(?:\bnot|\bforget|\bignore|first thought|\bsuggested|went with|busy on|away on|last time was on|"
    r"call at|old slot was|instead of|rather than|other than|\bexcept)\s*[\"(]?$",
    re.IGNORECASE,
)
_TAKEN_BACK_AFTER = re.compile(
    r"^[\")]?\s*[,;:-]?\s*(?:that was the old plan|i changed my mind|was last time|but scratch that|"
    r"from my earlier message|that'?s not what i want|came up yesterday|no\b|is already taken|won'?t work|"
    r"by the way|was the old|is off the table|doesn'?t work)",
    re.IGNORECASE,
)


def _taken_back(text: str, start: int, end: int) -> bool:
    return bool(
        _TAKEN_BACK_BEFORE.search(text[max(0, start - 24) : start])
        or _TAKEN_BACK_AFTER.search(text[end : end + 40])
    )


#: A value right after "e.g." is a description's example echoed, not a value of the request.
_EXAMPLE = re.compile(r"\be\.? ?g\.?,? ?$|\blike $", re.IGNORECASE)


def _fill(tool: _Tool, text: str) -> _Reading:
    reading = _Reading(tool)
    candidates: list[tuple[float, int, _Find]] = []
    # Slots that read values the same way: the templates state those in library order.
    peers: dict[int, list[int]] = {}
    for index, slot in enumerate(tool.slots):
        if slot.gen is not None:
            peers.setdefault(id(_finder(slot.gen)), []).append(index)
    reads: list[tuple[int, Finder, list[_Find]]] = []
    for index, slot in enumerate(tool.slots):
        finder = _finder(slot.gen) if slot.gen is not None else _generic_finder(slot)
        finds = [
            f
            for f in finder(text)
            if not _EXAMPLE.search(text[max(0, f.start - 8) : f.start])
            and not _taken_back(text, f.start, f.end)
        ]
        reads.append((index, finder, finds))
    # Context stops at the neighbouring values: numbers, dates, quotes, and any value a slot reads.
    spans = sorted({*_value_spans(text), *((f.start, f.end) for _, _, finds in reads for f in finds)})
    for index, finder, finds in reads:
        slot = tool.slots[index]
        group = peers.get(id(finder), [index])
        rank = sorted(group, key=lambda i: tool.slots[i].order).index(index) if len(group) > 1 else 0
        positions = sorted({f.start for f in finds})
        for f in finds:
            before, after = _context_words(text, f.start, f.end, spans)
            near = sum(
                _idf(w) * (1.0 if i >= len(before) - 3 else 0.6)
                for i, w in enumerate(before)
                if w in slot.context
            )
            near += 0.5 * sum(_idf(w) for w in after if w in slot.after)
            near += 0.3 * sum(_idf(w) for w in after if w in slot.context and w not in slot.after)
            if slot.role and before and before[-1] == slot.role:
                near += 3.0
            prior = -0.5 * abs(positions.index(f.start) - rank) if len(group) > 1 else 0.0
            candidates.append((f.strength + 0.6 * near + prior, index, f))
    # Lists last: they take the items of their type that no single-valued parameter took.
    is_list = [isinstance(slot.gen, ListOf) for slot in tool.slots]
    candidates.sort(key=lambda c: (is_list[c[1]], -c[0], c[2].start))
    used: list[tuple[int, int]] = []
    filled: set[int] = set()
    value_score = 0.0
    for score, index, found in candidates:
        taken: _Find | None = found
        if is_list[index] and found.spans:
            taken = _unused_items(found, used)
        if (
            taken is None
            or index in filled
            or any(s < ue and us < e for s, e in taken.cover() for us, ue in used)
        ):
            continue
        filled.add(index)
        used.extend(taken.cover())
        reading.arguments[tool.slots[index].name] = taken.value
        value_score += min(score, 6.0)
    reading.missing = [slot for i, slot in enumerate(tool.slots) if slot.required and i not in filled]
    reading.score = value_score
    return reading


def _vague_said(slot: _Slot, text: str) -> bool:
    vague = getattr(slot.gen, "vague", ()) or ()
    lowered = text.lower()
    return any(phrase.lower() in lowered for phrase in vague)


def _plain_words(text: str) -> list[str]:
    """The words of ``text`` outside its values and quotes: what it asks for, not with what."""
    kept, last = [], 0
    for start, end in _value_spans(text):
        if start >= last:
            kept.append(text[last:start])
            last = end
    kept.append(text[last:])
    return _words(" ".join(kept))


@cache
def _library_tool(index: int) -> _Tool:
    """Library tool ``index`` as if offered unchanged."""
    spec = _library()[0][index].spec
    return _resolve(json.dumps(_function(openai_tool(spec)), sort_keys=True))


_NUMBER_WORDS = {
    word: index
    for index, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
} | {"a": 1, "an": 1, "a couple of": 2, "couple of": 2}
# the generator's own ordinal words (public), and the days past the 28th it never says
_ORDINAL_WORDS = {word: index for index, word in enumerate(ORDINALS) if index} | {
    "twenty-ninth": 29,
    "thirtieth": 30,
    "thirty-first": 31,
}
_COUNT = rf"(\d+|{_alt(_NUMBER_WORDS)})"
_DAY_NAMES = _alt(_WEEKDAYS)
_RELATIVE = re.compile(
    rf"\b(?:(?P<after>the day after tomorrow|day after tomorrow)|(?P<tomorrow>tomorrow)|(?P<today>today)"
    rf"|(?:in\s+{_COUNT}\s+(?P<unit1>days?|weeks?))|(?:{_COUNT}\s+(?P<unit2>days?|weeks?)\s+from\s+(?:now|today))"
    rf"|(?:(?:the\s+)?(?P<after_next>{_DAY_NAMES})\s+after\s+next)"
    rf"|(?:this\s+coming\s+(?P<coming1>{_DAY_NAMES}))|(?:this\s+(?P<coming2>{_DAY_NAMES})(?:\s+coming)?)"
    rf"|(?:(?:on\s+)?next\s+(?P<next>{_DAY_NAMES}))|(?:coming\s+(?P<coming3>{_DAY_NAMES}))"
    rf"|(?:(?:the\s+)?(?P<ord1>{_alt(_ORDINAL_WORDS)})\s+(?:of\s+)?next\s+month)"
    rf"|(?:next\s+month\s+on\s+the\s+(?P<ord2>{_alt(_ORDINAL_WORDS)})))\b",
    re.IGNORECASE,
)
_TODAY = re.compile(r"\btoday is\b", re.IGNORECASE)


def _sub_unquoted(regex: re.Pattern[str], replace: Callable[[re.Match[str]], str], text: str) -> str:
    """``regex.sub`` outside quoted text (a quoted value is said verbatim and stays so)."""
    quoted = [(m.start(), m.end()) for m in _QUOTED_RE.finditer(text)]
    return regex.sub(
        lambda found: found.group() if any(a <= found.start() < b for a, b in quoted) else replace(found),
        text,
    )


def _today(messages: Sequence[dict[str, Any]]) -> dt.date | None:
    """The conversation's today, when a system line states it ("Today is Friday, March 13, 2026.")."""
    for message in messages:
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            text = str(message["content"])
            if _TODAY.search(text):
                found = _dates(text)
                if found:
                    return dt.date.fromisoformat(found[0].value)
    return None


def _count(said: str) -> int:
    return int(said) if said.isdigit() else _NUMBER_WORDS[said.lower()]


def _resolved_dates(text: str, today: dt.date) -> str:
    """The request with every date said relative to today written out (ISO), so that the date
    finders read it as any other date."""

    def day(found: re.Match[str]) -> str:
        group = {k: v for k, v in found.groupdict().items() if v}
        shift = 0
        if "after" in group:
            shift = 2
        elif "tomorrow" in group:
            shift = 1
        elif "unit1" in group or "unit2" in group:
            unit = group.get("unit1") or group.get("unit2") or ""
            said = next(v for v in found.groups() if v and (v.isdigit() or v.lower() in _NUMBER_WORDS))
            shift = _count(said) * (7 if unit.lower().startswith("week") else 1)
        elif any(k in group for k in ("after_next", "coming1", "coming2", "coming3", "next")):
            name = next(
                group[k] for k in ("after_next", "coming1", "coming2", "coming3", "next") if k in group
            )
            target = _WEEKDAYS.index(name.capitalize())
            shift = (target - today.weekday()) % 7 or 7
            if "after_next" in group:
                shift += 7
        elif "ord1" in group or "ord2" in group:
            number = _ORDINAL_WORDS[(group.get("ord1") or group.get("ord2") or "").lower()]
            year, month = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
            try:
                return dt.date(year, month, number).isoformat()
            except ValueError:
                return found.group()
        return (today + dt.timedelta(days=shift)).isoformat()

    return _sub_unquoted(_RELATIVE, day, text)


# References through relations stated in context ("my sister Ana lives in Porto ... near my sister").
_REL = r"((?:[a-z]+ )?[a-z]+)"
_VALUE = (
    r"(\+\d{1,3}(?: \d{2,4}){2,4}"
    r"|\d+ [A-Z][a-z]+ (?:[A-Z][a-z]+ )?(?:Street|Road|Avenue|Lane|Way|Drive|Boulevard|Court|Place)"
    r"|[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*, [A-Z][A-Za-z]+(?: [A-Z][a-z]+)*"
    r"|[A-Z][a-z]+(?:-[A-Z][a-z]+)? [A-Z][a-z]+"
    r"|[a-z0-9._-]+@[a-z0-9.-]+\.[a-z]{2,}|@[a-z][\w.-]*)"
)
_FACTS = (  # (regex, group of the relation, group of the name or 0, group of the value)
    (re.compile(rf"\bmy {_REL} ([A-Z][a-z]+) lives in {_VALUE}"), 1, 2, 3),
    (re.compile(rf"\b([A-Z][a-z]+), my {_REL}, is based in {_VALUE}"), 2, 1, 3),
    (re.compile(rf"\bmy {_REL}(?:'s (?:address|number|phone|email))? is {_VALUE}"), 1, 0, 2),
    (re.compile(rf"{_VALUE} is my {_REL}\b"), 2, 0, 1),
    (re.compile(rf"\byou can reach my {_REL} at {_VALUE}"), 1, 0, 2),
    (re.compile(rf"\bmy {_REL} picks up on {_VALUE}"), 1, 0, 2),
)


_LABEL_ID = r"([A-Z]{2,4}-[A-Z0-9]{3,})"
_OBJECT = r"((?:[a-z]+ )?[a-z]+)"
_LABELS = (
    (re.compile(rf"{_LABEL_ID} (?:goes with|is|belongs to) the {_OBJECT}\b"), 2, 1),
    (re.compile(rf"\bthe {_OBJECT} is {_LABEL_ID}"), 1, 2),
)


def _resolved_labels(text: str) -> str:
    """Things named by what they go with ("CAR-0052 goes with the navy suitcase ... the one with
    the navy suitcase", "the orange drone one") written out as their ids."""
    labels: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    for regex, thing, ident_group in _LABELS:
        for m in regex.finditer(text):
            labels.setdefault(m[thing], m[ident_group])
            spans.append(m.span())
    if not labels:
        return text
    chars = list(text)
    for start, end in sorted(spans, reverse=True):
        chars[start:end] = "(noted)"
    things = _alt(labels)
    reference = re.compile(rf"\bthe one with the (?P<a>{things})\b|\bthe (?P<b>{things}) one\b")
    return _sub_unquoted(reference, lambda m: labels[m["a"] or m["b"]], "".join(chars))


def _resolved_references(text: str) -> str:
    """The request with each value named through a relation ("the city my sister lives in",
    "Ana's city", "my accountant") written out, and the stated relations' values taken out of
    the context sentences (so that neither they nor a decoy relation's value reads as an argument)."""
    by_relation: dict[str, str] = {}
    by_name: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    for regex, rel, name, value in _FACTS:
        for m in regex.finditer(text):
            by_relation.setdefault(m[rel], m[value])
            if name:
                by_name.setdefault(m[name], m[value])
            spans.append(m.span())
    if not by_relation:
        return text
    chars = list(text)
    for start, end in sorted(spans, reverse=True):
        chars[start:end] = "(noted)"
    text = "".join(chars)
    relations = _alt(by_relation)
    names = _alt(by_name) if by_name else "(?!x)x"
    reference = re.compile(
        rf"\b(?:where my (?P<r1>{relations}) lives|the (?:city|town|place) my (?P<r2>{relations}) lives in"
        rf"|(?P<n1>{names})'s (?:city|town|place)"
        rf"|my (?P<r3>{relations})(?:'s (?:address|number|phone|email))?)\b"
    )

    def said(m: re.Match[str]) -> str:
        rel = m["r1"] or m["r2"] or m["r3"]
        return by_relation[rel] if rel else by_name[m["n1"]]

    return _sub_unquoted(reference, said, text)


# Amounts and counts worked out from stated figures ("a third of $609", "12.50 plus 3.25",
# "split four ways", "me and three friends").
_AMOUNT = r"(?<![\w^.])\$?(\d+(?:\.\d+)?)(?![\w^]|\.\d)"
_WORD_NUMBER = rf"\b({_alt(_NUMBER_WORDS)})\b"  # template text says its counts in digits
_PARTS = {
    "half": 2,
    "a half": 2,
    "a third": 3,
    "third": 3,
    "a quarter": 4,
    "quarter": 4,
    "a fifth": 5,
    "fifth": 5,
}
_ARITHMETIC = (
    (
        re.compile(rf"\b({_alt(_PARTS)}) of {_AMOUNT}", re.IGNORECASE),
        lambda m: float(m[2]) / _PARTS[m[1].lower()],
    ),
    (
        re.compile(rf"{_AMOUNT},? split {_WORD_NUMBER} ways", re.IGNORECASE),
        lambda m: float(m[1]) / _count(m[2]),
    ),
    (
        re.compile(rf"\b{_WORD_NUMBER} (?:times|lots of) {_AMOUNT}", re.IGNORECASE),
        lambda m: _count(m[1]) * float(m[2]),
    ),
    (
        re.compile(rf"{_AMOUNT} (?:plus|and another) {_AMOUNT}", re.IGNORECASE),
        lambda m: float(m[1]) + float(m[2]),
    ),
    (re.compile(rf"{_AMOUNT} (?:minus|less) {_AMOUNT}", re.IGNORECASE), lambda m: float(m[1]) - float(m[2])),
)
_HEADCOUNT = re.compile(
    rf"\b(?:(?P<one>me and|myself plus|me and my) {_WORD_NUMBER} (?:friends|colleagues|cousins)"
    rf"|(?P<two>me, my partner and our|my wife, me and|the two of us plus) {_WORD_NUMBER}"
    r" (?:kids|of our neighbours|guests of ours))\b",
    re.IGNORECASE,
)


def _worked_out(text: str) -> str:
    """The request with sums, shares, products and head counts written out as their numbers."""
    for regex, compute in _ARITHMETIC:

        def value(m: re.Match[str], compute: Callable[[re.Match[str]], float] = compute) -> str:
            result = round(compute(m), 2)
            return (
                f"{result:.2f}"
                if "." in m.group()
                else (str(int(result)) if result == int(result) else str(result))
            )

        text = _sub_unquoted(regex, value, text)

    def people(m: re.Match[str]) -> str:
        said = next(v for v in m.groups() if v and (v.isdigit() or v.lower() in _NUMBER_WORDS))
        return str(_count(said) + (1 if m["one"] else 2))

    return _sub_unquoted(_HEADCOUNT, people, text)


# Dates anchored on an event stated in context ("the car service got moved to 2026-04-09 ...
# the day following the car service"), and times of day in words ("half past seven in the evening").
_EVENT = r"((?:the|my) [a-z' ]{2,40}?)"
_EVENT_FACT = re.compile(rf"{_EVENT} (?:is on|falls on|got moved to|is) (\d{{4}}-\d{{2}}-\d{{2}})")
_ANCHORED = re.compile(
    r"\b(?:on\s+)?(?P<shift>the day after|the day following|the day before|the day ahead of"
    rf"|a week after|one week after|{_WORD_NUMBER} days (?:after|past))"
    r"\s+(?P<event>(?:the|my) [a-z' ]{2,40}?)"
    r"(?=[^a-z' ]|$)",
    re.IGNORECASE,
)
_CLOCK_WORDS = re.compile(
    rf"\b(?:(?P<lead>(?:a )?quarter past|half past|(?:a )?quarter to) )?(?P<hour>{_WORD_NUMBER}|\d{{1,2}})"
    r"(?: o'clock)? in the (?P<period>morning|afternoon|evening)|\b(?P<noon>noon|midday)\b",
    re.IGNORECASE,
)


def _resolved_anchors(text: str) -> str:
    """Event-anchored dates and worded times of day written out (ISO date, HH:MM)."""
    events: dict[str, dt.date] = {}
    spans: list[tuple[int, int]] = []
    for m in _EVENT_FACT.finditer(text):
        events.setdefault(m[1].lower().removeprefix("on ").strip(), dt.date.fromisoformat(m[2]))
        spans.append(m.span())

    def anchored(m: re.Match[str]) -> str:
        event = m["event"].lower().strip()
        day = next(
            (d for name, d in events.items() if event.startswith(name) or name.startswith(event)), None
        )
        if day is None:
            return m.group()
        shift = m["shift"].lower()
        if shift.startswith(("the day after", "the day following")):
            days = 1
        elif shift.startswith(("the day before", "the day ahead")):
            days = -1
        elif "week" in shift:
            days = 7
        else:
            days = _count(shift.split()[0])
        return (day + dt.timedelta(days=days)).isoformat() + m["event"][len(m["event"].rstrip()) :]

    if events:
        chars = list(text)
        for start, end in sorted(spans, reverse=True):
            chars[start:end] = "(noted)"
        text = _sub_unquoted(_ANCHORED, anchored, "".join(chars))

    def clock(m: re.Match[str]) -> str:
        if m["noon"]:
            return "12:00"
        hour = _count(m["hour"]) if not m["hour"].isdigit() else int(m["hour"])
        lead = (m["lead"] or "").lower().removeprefix("a ")
        minute = {"quarter past": 15, "half past": 30, "quarter to": 45}.get(lead, 0)
        if lead == "quarter to":
            hour -= 1
        if m["period"].lower() in ("afternoon", "evening") and hour < 12:
            hour += 12
        return f"{hour:02d}:{minute:02d}"

    return _sub_unquoted(_CLOCK_WORDS, clock, text)


class LexicalMiner:
    """Answers any request by keywords and value formats alone: no model, no templates matched."""

    #: Clause words (IDF sum) over which a clause is taken to name a tool.
    OPENS = 4.0
    #: Weight of the learned odds of what an offered tool's description says that the request does not.
    UNSAID = 0.3

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Answer:
        text = _request(messages)
        today = _today(messages)
        if today is not None:
            text = _resolved_dates(text, today)
        text = _resolved_anchors(_worked_out(_resolved_labels(_resolved_references(text))))
        offered = [_resolve(json.dumps(_function(t), sort_keys=True)) for t in tools]
        if not text or not offered:
            return []
        readings: list[tuple[int, _Reading | None]] = []
        for start, end in self._groups(text, offered):
            reading = self._read(text[start:end], offered)
            if readings and (reading is None or reading.missing):
                # Values said after the call they belong to ("... in Bangkok? Fahrenheit please").
                joined = self._read(text[readings[-1][0] : end], offered)
                if joined is not None and not joined.missing:
                    readings[-1] = (readings[-1][0], joined)
                    continue
            readings.append((start, reading))
        calls: Answer = []
        for _, found in readings:
            if found is None or found.missing:
                return []  # no tool fits, or a required value is not given: no call at all
            calls.append((found.tool.name, found.arguments))
        return calls

    def _groups(self, text: str, offered: list[_Tool]) -> list[tuple[int, int]]:
        """The request cut into one stretch per call: a clause that names a tool, or states
        values, opens a call once the open one has values; the rest joins the open one."""
        entries, _ = _library()
        vocab = [t.asked for t in offered] + [e.asked for e in entries]
        groups: list[list[int]] = []
        has_values: list[bool] = []
        for start, end in _clauses(text):
            piece = text[start:end]
            plain = _plain_words(piece)
            names = max((_overlap(plain, v) for v in vocab), default=0.0)
            valued = bool(_value_spans(piece)) or any(_fill(tool, piece).arguments for tool in offered)
            if (names >= self.OPENS or valued) and (not groups or has_values[-1]):
                groups.append([start, end])
                has_values.append(valued)
            elif groups:
                groups[-1][1] = end
                has_values[-1] = has_values[-1] or valued
            elif valued or names > 0:
                groups.append([start, end])
                has_values.append(valued)
        # A stretch that names a tool but states nothing belongs to the call before it.
        merged: list[list[int]] = []
        for (start, end), valued in zip(groups, has_values, strict=True):
            if merged and not valued:
                merged[-1][1] = end
            else:
                merged.append([start, end])
        return [(s, e) for s, e in merged]

    def _read(self, piece: str, offered: list[_Tool]) -> _Reading | None:
        """The offered tool that best reads ``piece``; None when a library tool that is not
        offered reads it clearly better (the request wants something else)."""
        words = _plain_words(piece)
        plain = set(words)
        best: _Reading | None = None
        best_names = 0.0
        for tool in offered:
            reading = _fill(tool, piece)
            names = _overlap(words, tool.asked)
            required = [s for s in tool.slots if s.required]
            fill = 1.0 - len(reading.missing) / len(required) if required else 0.7
            unsaid = _unsaid_score(tool, plain)
            reading.score = names + 0.5 * reading.score + 4.0 * fill + self.UNSAID * unsaid
            if best is None or reading.score > best.score:
                best, best_names = reading, names
        if best is None or _unsaid_score(best.tool, plain) < _calibration()[2]:
            return None  # even the best tool does what the request does not say (a lookalike)
        mapped = {id(t.lib) for t in offered if t.lib is not None}
        entries, _ = _library()
        index = max(range(len(entries)), key=lambda i: _overlap(words, entries[i].asked))
        top = entries[index]
        wanted = _overlap(words, top.asked)
        if (
            id(top) not in mapped
            and wanted > 1.3 * best_names + 1.5
            and (best.missing or wanted > 2.0 * best_names + 3.0)
            and not _fill(_library_tool(index), piece).missing
        ):
            return None
        return best


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    return dict(tool.get("function", tool))


def _request(messages: Sequence[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""
