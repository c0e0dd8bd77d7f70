"""Offered tools mapped back: each offered parameter gets the value generator of its closest library
parameter.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, cast

from tasks import Task, generate, variant
from tasks.answers import reference_calls
from tasks.value_generators import (
    Composed,
    ListOf,
    Pick,
)

from .words import Finder, _Find, _function, _LibParam, _library, _LibTool, _Pool, _similarity, _words


@cache
def _calibration_round() -> tuple[Task, ...]:
    """A round the public generator draws, as miners are shown it (the learner's material)."""
    return tuple(variant(task, "lexical-calibration") for task in generate("lexical-calibration", 1500))


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
