"""tool_shuffle: surface perturbations applied consistently to tools and expected answers.

Functions are renamed (word synonyms, naming style, prefixes and suffixes), parameters are
renamed, tools and properties reordered, enums reordered and descriptions rewritten. Every
function gets a name that differs from all names it had before, so an answer written for one
surface never passes on another. Nothing is dropped: the gold tools always stay.

Works on any OpenAI tool list (builtin, BFCL or xLAM tasks) and needs only a seeded
``random.Random``.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from functools import lru_cache
from random import Random
from typing import Any

from tasks.lexicon import PREFIXES, SUFFIXES, synonym_index, verb_phrase_index
from tasks.rand import shuffle

__all__ = ["Surface", "shuffle_surface", "split_words"]

_WORD = re.compile(r"[A-Z]+(?![a-z])\d*|[A-Z]?[a-z]+\d*|\d+")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_PREFIX_SET = frozenset(PREFIXES)
_SUFFIX_SET = frozenset(SUFFIXES)
_STYLES = ("snake", "camel", "pascal")
_DESCRIPTION_NOTES = (
    "",
    "",
    " Returns the result as structured data.",
    " Only call it when the request needs it.",
    " Fill every required argument.",
    " Arguments are case-insensitive where possible.",
)


@lru_cache(maxsize=16384)
def split_words(name: str) -> tuple[str, ...]:
    """Lower-case words of an identifier in any naming style (snake, camel, dotted, kebab)."""
    return tuple(word.lower() for word in _WORD.findall(name))


@lru_cache(maxsize=16384)
def _capitalised(word: str) -> str:
    return word[:1].upper() + word[1:]


def _join(words: list[str], style: str) -> str:
    if style == "snake":
        return "_".join(words)
    if style == "camel":
        return words[0] + "".join([_capitalised(word) for word in words[1:]])
    return "".join([_capitalised(word) for word in words])


@lru_cache(maxsize=16384)
def _word_choices(word: str, keep_tenths: int) -> tuple[str, ...]:
    """The words ``word`` may become, weighted so that one uniform draw keeps it with
    probability keep/10 plus its fair share of the swap (the group includes the word)."""
    group = synonym_index().get(word)
    if not group:
        return (word,)
    swap_tenths = 10 - keep_tenths
    return tuple(member for member in group for _ in range(swap_tenths)) + (word,) * (
        keep_tenths * len(group)
    )


def _swapped(words: tuple[str, ...] | list[str], keep_tenths: int, rng: Random) -> list[str]:
    """Each word replaced by a random member of its synonym group (or kept)."""
    random = rng.random
    out: list[str] = []
    for word in words:
        choices = _word_choices(word, keep_tenths)
        out.append(choices[int(random() * len(choices))] if len(choices) > 1 else word)
    return out


@lru_cache(maxsize=65536)
def _valid(name: str) -> bool:
    return bool(_IDENTIFIER.match(name)) and not keyword.iskeyword(name)


@lru_cache(maxsize=16384)
def _core_words(name: str) -> tuple[str, ...]:
    """The words of a function name without a prefix or suffix that an earlier shuffle added."""
    words = split_words(name) or ("fn",)
    if len(words) > 1 and words[0] in _PREFIX_SET:
        words = words[1:]
    if len(words) > 1 and words[-1] in _SUFFIX_SET:
        words = words[:-1]
    return words


def _rename_function(name: str, rng: Random, style: str, taken: set[str]) -> str:
    words = _core_words(name)
    random = rng.random
    for attempt in range(12):
        new = _swapped(words, 3, rng)
        roll = random()
        if roll < 0.3 or attempt > 5:
            new.insert(0, PREFIXES[int(random() * len(PREFIXES))])
        elif roll < 0.45:
            new.append(SUFFIXES[int(random() * len(SUFFIXES))])
        candidate = _join(new, style if attempt < 8 else _STYLES[int(random() * 3)])
        if candidate not in taken and _valid(candidate):
            return candidate
    serial = 2
    base = _identifier(_join(list(words), "snake"))
    while f"{base}_{serial}" in taken:
        serial += 1
    return f"{base}_{serial}"


def _rename_param(name: str, rng: Random, style: str, taken: set[str]) -> str:
    words = split_words(name)
    if not words:
        return name
    for _ in range(6):
        candidate = _join(_swapped(words, 4, rng), style)
        if candidate not in taken and _valid(candidate):
            return candidate
    base = name if _valid(name) else _identifier(name)
    serial = 2
    candidate = base
    while candidate in taken:
        candidate = f"{base}_{serial}"
        serial += 1
    return candidate


def _identifier(name: str) -> str:
    """A python identifier (not a keyword) made from any name: ``from`` -> ``from_``, ``2d`` -> ``p_2d``."""
    cleaned = re.sub(r"\W", "_", name) or "param"
    if cleaned[0].isdigit():
        cleaned = "p_" + cleaned
    return cleaned + "_" if keyword.iskeyword(cleaned) else cleaned


@lru_cache(maxsize=16384)
def _description_parts(text: str) -> tuple[tuple[str, ...], str]:
    """(synonym group of the leading verb phrase or (), the text after it)."""
    phrases = verb_phrase_index()
    head = text.split(" ", 2)
    for phrase in (" ".join(head[:2]), head[0]):
        group = phrases.get(phrase)
        if group is not None and len(text) > len(phrase):
            return group, text[len(phrase) :]
    return (), text


def _rewrite_description(text: str, rng: Random) -> str:
    if not text:
        return text
    random = rng.random
    group, rest = _description_parts(text)
    if group:
        text = group[int(random() * len(group))] + rest
    if random() < 0.25 and text[:1].isupper():
        lowered = text[:1].lower() + text[1:]
        text = f"This tool {lowered}" if text.split(" ", 1)[0].endswith("s") else f"Use this to {lowered}"
    return text + _DESCRIPTION_NOTES[int(random() * len(_DESCRIPTION_NOTES))]


def _shuffled_property(prop: Any, rng: Random) -> Any:
    """The property with its enum (and its items' enum) reordered; shared unchanged when it has none."""
    if not isinstance(prop, dict):
        return prop
    enum = prop.get("enum")
    items = prop.get("items")
    items_enum = isinstance(items, dict) and isinstance(items.get("enum"), list)
    if not (isinstance(enum, list) and len(enum) > 1) and not items_enum:
        return prop
    out = dict(prop)
    if isinstance(enum, list) and len(enum) > 1:
        enum = list(enum)
        shuffle(rng, enum)
        out["enum"] = enum
    if items_enum:
        out["items"] = _shuffled_property(items, rng)
    return out


@dataclass(frozen=True, slots=True)
class Surface:
    """A shuffled surface: tools and expected answers, plus the renames that produced them."""

    tools: list[dict[str, Any]]
    expected: list[dict[str, Any]]
    function_names: dict[str, str]
    parameter_names: dict[str, dict[str, str]]


def shuffle_surface(tools: list[dict[str, Any]], expected: list[dict[str, Any]], rng: Random) -> Surface:
    """Rename, reorder and rewrite ``tools`` and carry the renames into ``expected``.

    Every new function name differs from every old one, and all new names are distinct.
    """
    random = rng.random
    old_names = [tool.get("function", {}).get("name", "") for tool in tools]
    taken: set[str] = set(old_names)
    style = _STYLES[int(random() * 3)]
    function_names: dict[str, str] = {}
    parameter_names: dict[str, dict[str, str]] = {}
    new_tools: list[dict[str, Any]] = []
    for tool, old_name in zip(tools, old_names, strict=True):
        function = tool.get("function", {})
        new_name = _rename_function(old_name, rng, style, taken)
        taken.add(new_name)
        function_names[old_name] = new_name
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        param_style = style if random() < 0.5 else "snake"
        param_taken: set[str] = set()
        renames: dict[str, str] = {}
        for param in properties:
            new_param = (
                _rename_param(param, rng, param_style, param_taken)
                if random() < 0.75 or not _valid(param)
                else param
            )
            if new_param in param_taken:
                new_param = _rename_param(param, rng, param_style, param_taken)
            param_taken.add(new_param)
            renames[param] = new_param
        parameter_names[new_name] = renames
        ordered = list(properties.items())
        shuffle(rng, ordered)
        new_parameters = dict(parameters)
        new_parameters["properties"] = {
            renames[key]: _shuffled_property(value, rng)
            if isinstance(value, dict) and ("enum" in value or "items" in value)
            else value
            for key, value in ordered
        }
        if "required" in parameters:
            new_parameters["required"] = [renames.get(name, name) for name in parameters["required"]]
        new_function = dict(function)
        new_function["name"] = new_name
        new_function["description"] = _rewrite_description(function.get("description", ""), rng)
        new_function["parameters"] = new_parameters
        new_tool = dict(tool)
        new_tool["function"] = new_function
        new_tools.append(new_tool)
    shuffle(rng, new_tools)
    by_old = {old: parameter_names[new] for old, new in function_names.items()}
    new_expected: list[dict[str, Any]] = []
    for call in expected:
        renamed: dict[str, Any] = {}
        for name, args in call.items():
            params = by_old.get(name, {})
            renamed[function_names.get(name, name)] = {
                params.get(key, key): value for key, value in args.items()
            }
        new_expected.append(renamed)
    return Surface(new_tools, new_expected, function_names, parameter_names)
