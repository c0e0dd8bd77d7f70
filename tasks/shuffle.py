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
from functools import lru_cache
from random import Random
from typing import Any, NamedTuple

from scoring.schema import function_of
from tasks.lexicon import PREFIXES, SUFFIXES, synonym_index, verb_phrase_index
from tasks.rand import permute

__all__ = [
    "Surface",
    "ToolPlan",
    "plan_tool",
    "replan_reworded",
    "shuffle_planned",
    "shuffle_surface",
    "split_words",
]

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


@lru_cache(maxsize=16384)
def _word_slot(word: str, keep_tenths: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``_word_choices(word, keep_tenths)`` and the same choices capitalised, built once per word:
    name plans are built for every new name a variant meets, and capitalising each weighted
    choice again was most of their cost."""
    raw = _word_choices(word, keep_tenths)
    return raw, tuple(_capitalised(choice) for choice in raw)


def _bounded(cache: dict[Any, Any]) -> dict[Any, Any]:
    """The cache, emptied first once it has reached its bound (variants mint endless new names)."""
    if len(cache) >= _CACHE_BOUND:
        cache.clear()
    return cache


_CACHE_BOUND = 16384
_NameSlots = tuple[tuple[str, ...], ...]
#: A name to draw: constant text and word choices alternating, ``(text, choices, text, ...)``;
#: the name is the texts with one drawn member of each choices between them, drawn left to right.
_NameTemplate = tuple[Any, ...]
#: Parameter name -> {style: template} or None when the name has no words. The template holds
#: each word's choices (``_word_choices(word, 4)``) written as the style writes a word at that
#: position, separators and single-choice words folded into the constant text, so filling it
#: takes exactly the draws of ``_join(swapped words, style)`` and gives the same name.
_PARAM_PLANS: dict[str, dict[str, _NameTemplate] | None] = {}
#: Parameter name -> ``_key_plan(name)``.
_KEY_PLANS: dict[str, tuple[str, dict[str, _NameTemplate] | None, bool]] = {}
#: Core words of a function name -> (one slot per word: ``_word_choices(word, 3)``, lower case;
#: {style: template of the words alone, as for parameters}).
_FunctionPlan = tuple[_NameSlots, dict[str, _NameTemplate]]
_FUNCTION_PLANS: dict[tuple[str, ...], _FunctionPlan] = {}


def _template(slots: _NameSlots, separator: str) -> _NameTemplate:
    parts: list[Any] = []
    text = ""
    for position, choices in enumerate(slots):
        if position:
            text += separator
        if len(choices) == 1:
            text += choices[0]
        else:
            parts += [text, choices]
            text = ""
    parts.append(text)
    return tuple(parts)


def _fill(template: _NameTemplate, random: Any) -> str:
    """A name from a template (see ``_NameTemplate``)."""
    if len(template) == 5:  # two words to draw, left one first
        left = template[1]
        right = template[3]
        return (
            template[0]
            + left[int(random() * len(left))]
            + template[2]
            + right[int(random() * len(right))]
            + template[4]
        )
    out: str = template[0]
    for index in range(1, len(template), 2):
        choices = template[index]
        out += choices[int(random() * len(choices))] + template[index + 1]
    return out


def _key_plan(name: str) -> tuple[str, dict[str, _NameTemplate] | None, bool]:
    """(name, its rename plan, whether it is a valid identifier as it stands), cached."""
    plan = (name, _param_plan(name), _valid(name))
    _bounded(_KEY_PLANS)[name] = plan
    return plan


def _param_plan(name: str) -> dict[str, _NameTemplate] | None:
    """How a parameter name is redrawn in each naming style (see ``_PARAM_PLANS``)."""
    if name in _PARAM_PLANS:
        return _PARAM_PLANS[name]
    words = split_words(name)
    plan: dict[str, _NameTemplate] | None = None
    if words:
        slots = [_word_slot(word, 4) for word in words]
        raw = tuple(slot[0] for slot in slots)
        capitalised = tuple(slot[1] for slot in slots)
        plan = {
            "snake": _template(raw, "_"),
            "camel": _template(raw[:1] + capitalised[1:], ""),
            "pascal": _template(capitalised, ""),
        }
    _bounded(_PARAM_PLANS)[name] = plan
    return plan


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


def _function_plan(core: tuple[str, ...]) -> _FunctionPlan:
    plan = _FUNCTION_PLANS.get(core)
    if plan is None:
        slots = [_word_slot(word, 3) for word in core]
        raw = tuple(slot[0] for slot in slots)
        capitalised = tuple(slot[1] for slot in slots)
        templates = {
            "snake": _template(raw, "_"),
            "camel": _template(raw[:1] + capitalised[1:], ""),
            "pascal": _template(capitalised, ""),
        }
        plan = _bounded(_FUNCTION_PLANS)[core] = (raw, templates)
    return plan


def _rename_function(
    core: tuple[str, ...], plan: _FunctionPlan, rng: Random, style: str, taken: set[str]
) -> str:
    """A new name from a function's core words: synonyms, maybe an affix, in ``style``.

    The words are drawn in ``style`` straight from a template, then the affix is added as
    ``_join`` would place it (a camel-case name after a prefix starts with a capital).
    """
    slots, templates = plan
    template = templates[style]
    random = rng.random
    for attempt in range(8):
        if len(template) == 3:
            choices = template[1]
            body = template[0] + choices[int(random() * len(choices))] + template[2]
        else:
            body = _fill(template, random)
        roll = random()
        if roll < 0.3 or attempt > 5:
            prefix = PREFIXES[int(random() * len(PREFIXES))]
            if style == "snake":
                candidate = prefix + "_" + body
            elif style == "camel":
                candidate = prefix + body[:1].upper() + body[1:]
            else:
                candidate = _capitalised(prefix) + body
        elif roll < 0.45:
            suffix = SUFFIXES[int(random() * len(SUFFIXES))]
            candidate = body + "_" + suffix if style == "snake" else body + _capitalised(suffix)
        else:
            candidate = body
        if candidate not in taken and _valid(candidate):
            return candidate
    for _ in range(8, 12):  # last tries: a prefix and a random style each
        new = [choices[int(random() * len(choices))] if len(choices) > 1 else choices[0] for choices in slots]
        random()  # the affix roll: from here on a prefix is always added
        new.insert(0, PREFIXES[int(random() * len(PREFIXES))])
        candidate = _join(new, _STYLES[int(random() * 3)])
        if candidate not in taken and _valid(candidate):
            return candidate
    serial = 2
    base = _identifier(_join(list(core), "snake"))
    while f"{base}_{serial}" in taken:
        serial += 1
    return f"{base}_{serial}"


def _rename_param(name: str, rng: Random, style: str, taken: set[str], attempts: int = 6) -> str:
    """A new parameter name not in ``taken``: ``attempts`` synonym draws, then a numbered fallback."""
    plan = _param_plan(name)
    if plan is None:
        return name
    template = plan[style]
    random = rng.random
    for _ in range(attempts):
        candidate = _fill(template, random)
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


def _split_description(text: str) -> tuple[tuple[str, ...], str]:
    """(synonym group of the leading verb phrase or (), the text after it)."""
    phrases = verb_phrase_index()
    head = text.split(" ", 2)
    for phrase in (" ".join(head[:2]), head[0]):
        group = phrases.get(phrase)
        if group is not None and len(text) > len(phrase):
            return group, text[len(phrase) :]
    return (), text


#: ``_split_description`` cached, for descriptions met again (a task's variants, one per miner,
#: all start from the same offered text). A freshly reworded description is mostly new: the
#: generator splits it uncached (a cache of drawn text would mostly miss and hold the text).
_description_parts = lru_cache(maxsize=16384)(_split_description)


def _lead(option: str) -> str | None:
    """The "This tool ..." / "Use this to ..." form of a description that opens with a known verb
    phrase (``option``), or None where it does not start with a capital (the rewrite keeps it).
    Only such a description reads right after "This tool": one already framed ("Purpose: ...",
    "Tool that ...") would not."""
    if not option[:1].isupper():
        return None
    lowered = option[:1].lower() + option[1:]
    if option.split(" ", 1)[0].endswith("s"):
        return f"This tool {lowered}"
    return f"Use this to {lowered}"


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
        permute(rng, enum)
        out["enum"] = enum
    if items_enum:
        out["items"] = _shuffled_property(items, rng)
    return out


class Surface(NamedTuple):
    """A shuffled surface: tools and expected answers, plus the renames that produced them.

    A tuple: one is built per task and per variant, and a frozen dataclass costs several
    microseconds to build."""

    tools: list[dict[str, Any]]
    expected: list[dict[str, Any]]
    function_names: dict[str, str]
    parameter_names: dict[str, dict[str, str]]


class ToolPlan(NamedTuple):
    """What shuffling one tool needs that no draw changes: names' synonym slots, the property
    list, the description's rewrites. ``plan_tool`` makes one; a caller that shuffles the same
    (never mutated) tool dict many times, like the builtin library, may keep it. A tuple, as
    variants build one per tool per call."""

    tool: dict[str, Any]
    function: dict[str, Any]
    name: str
    core_words: tuple[str, ...]
    name_plan: _FunctionPlan
    parameters: dict[str, Any]
    #: (name, its rename plan, whether it is a valid identifier as it stands), in schema order.
    renamable: list[tuple[str, dict[str, _NameTemplate] | None, bool]]
    #: (name, schema, whether the schema may have an enum to reorder), in schema order.
    properties: list[tuple[str, Any, bool]]
    description: Any
    #: The synonym group of the description's leading verb phrase (() when it has none: the text is
    #: kept) and the text after the phrase; a member is drawn, then maybe its ``_lead`` form.
    description_group: tuple[str, ...]
    description_rest: str


def plan_tool(tool: dict[str, Any]) -> ToolPlan:
    """The draw-independent part of shuffling ``tool`` (an OpenAI tool dict; it is not copied)."""
    function = function_of(tool)
    name = function.get("name", "")
    core = _core_words(name)
    parameters = function.get("parameters") or {}
    renamable = []
    properties = []
    key_plans = _KEY_PLANS
    for key, value in (parameters.get("properties") or {}).items():
        renamable.append(key_plans.get(key) or _key_plan(key))
        properties.append((key, value, isinstance(value, dict) and ("enum" in value or "items" in value)))
    description = function.get("description", "")
    group, rest = _description_parts(description) if description else ((), "")
    return ToolPlan(
        tool,
        function,
        name,
        core,
        _function_plan(core),
        parameters,
        renamable,
        properties,
        description,
        group,
        rest,
    )


def replan_reworded(plan: ToolPlan, description: Any, schemas: list[Any]) -> ToolPlan:
    """The plan of ``plan.tool`` with its description and its property schemas (``schemas``, in
    ``plan.properties`` order) replaced, names, keys and their order kept, as
    ``tasks.rewrite.rewrite_tool`` rewords a tool: shuffled, it gives what ``plan_tool`` of the
    reworded tool dict gives. No reworded dict is built: ``shuffle_planned`` copies ``tool``,
    ``function`` and ``parameters`` anyway and puts the new description and properties in."""
    group, rest = _split_description(description) if description else ((), "")
    return ToolPlan(
        plan.tool,
        plan.function,
        plan.name,
        plan.core_words,
        plan.name_plan,
        plan.parameters,
        plan.renamable,
        [(key, schema, reorder) for (key, _, reorder), schema in zip(plan.properties, schemas, strict=True)],
        description,
        group,
        rest,
    )


def shuffle_surface(tools: list[dict[str, Any]], expected: list[dict[str, Any]], rng: Random) -> Surface:
    """Rename, reorder and rewrite ``tools`` and carry the renames into ``expected``.

    Every new function name differs from every old one, and all new names are distinct.
    """
    return shuffle_planned([plan_tool(tool) for tool in tools], expected, rng)


def shuffle_planned(plans: list[ToolPlan], expected: list[dict[str, Any]], rng: Random) -> Surface:
    """``shuffle_surface`` of the tools the plans were made from (same draws, same result)."""
    random = rng.random
    taken: set[str] = {plan.name for plan in plans}
    style = _STYLES[int(random() * 3)]
    function_names: dict[str, str] = {}
    parameter_names: dict[str, dict[str, str]] = {}
    new_tools: list[dict[str, Any]] = []
    for plan in plans:
        (
            tool,
            function,
            name,
            core_words,
            name_plan,
            parameters,
            renamable,
            properties,
            description,
            description_group,
            description_rest,
        ) = plan
        new_name = _rename_function(core_words, name_plan, rng, style, taken)
        taken.add(new_name)
        function_names[name] = new_name
        param_style = style if random() < 0.5 else "snake"
        param_taken: set[str] = set()
        renames: dict[str, str] = {}
        for param, param_plan, valid in renamable:
            if random() < 0.75 or not valid:
                # The first draw of _rename_param, inline: it nearly always succeeds.
                if param_plan is None:
                    new_param = param
                else:
                    template = param_plan[param_style]
                    if len(template) == 3:  # one word to draw, the most common case
                        choices = template[1]
                        new_param = template[0] + choices[int(random() * len(choices))] + template[2]
                    else:
                        new_param = _fill(template, random)
                    if new_param in param_taken or not _valid(new_param):
                        new_param = _rename_param(param, rng, param_style, param_taken, attempts=5)
            else:
                new_param = param
            if new_param in param_taken:
                new_param = _rename_param(param, rng, param_style, param_taken)
            param_taken.add(new_param)
            renames[param] = new_param
        parameter_names[new_name] = renames
        ordered = list(properties)
        permute(rng, ordered)
        new_parameters = dict(parameters)
        new_parameters["properties"] = {
            renames[key]: _shuffled_property(value, rng) if reorder else value
            for key, value, reorder in ordered
        }
        if "required" in parameters:
            required = parameters["required"]
            new_parameters["required"] = list(map(renames.get, required, required))
        new_function = dict(function)
        new_function["name"] = new_name
        if description:
            # One member of the leading verb phrase's group is drawn and only it is written out
            # (and its "This tool ..." form only when that is drawn): a reworded description is
            # new in nearly every task, so every member's texts would be built to use one.
            if description_group:
                text = description_group[int(random() * len(description_group))] + description_rest
                if random() < 0.25:
                    text = _lead(text) or text
            else:
                text = description
                random()  # the draw of the "This tool ..." form, which a kept text has not
            description = text + _DESCRIPTION_NOTES[int(random() * len(_DESCRIPTION_NOTES))]
        new_function["description"] = description
        new_function["parameters"] = new_parameters
        new_tool = dict(tool)
        new_tool["function"] = new_function
        new_tools.append(new_tool)
    permute(rng, new_tools)
    by_old = {old: parameter_names[new] for old, new in function_names.items()}
    new_expected: list[dict[str, Any]] = []
    for call in expected:
        renamed: dict[str, Any] = {}
        for name, args in call.items():
            params = by_old.get(name, {})
            # {params.get(key, key): value for key, value in args.items()}, without a Python loop
            renamed[function_names.get(name, name)] = dict(
                zip(map(params.get, args, args), args.values(), strict=True)
            )
        new_expected.append(renamed)
    return Surface(new_tools, new_expected, function_names, parameter_names)
