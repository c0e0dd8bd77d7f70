"""Per-round rewriting of offered tools' descriptions, so no offered tool maps back to a
library tool by its text.

tool_shuffle renames functions and parameters but keeps every parameter description and the
tail of the tool description: exactly what a model-free miner matches to recognise a library
tool (and so knows every parameter's value generator). ``rewrite_tool`` rewrites the tool's
description and every parameter description (nested object fields included) with a seeded
``random.Random``: phrases swapped for others of the same meaning, then the whole set in a
sentence frame. Meaning is kept, so a model still tells the tools apart; the same draws give
the same text on any machine. A rewritten parameter description never equals the text it was
made from.

The rules are a registry: ``RULE_SETS`` lists one module per rule set under
``tasks.rewrite.rules`` (wording, formats, verbs, frames); adding one is adding a module and
its entry here, the generator is not touched.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from random import Random
from typing import Any

from tasks.rewrite.model import RuleSet
from tasks.rewrite.rules import formats, frames, verbs, wording

__all__ = ["RULE_SETS", "RuleSet", "rewrite_property", "rewrite_text", "rewrite_tool"]

#: The rule sets, in order: a phrase listed by two sets belongs to the first.
RULE_SETS: tuple[RuleSet, ...] = (formats.RULES, wording.RULES, verbs.RULES, frames.RULES)

#: A text to fill: constant text and phrase choices alternating, ``(text, choices, text, ...)``.
_Template = tuple[Any, ...]


#: (the pattern, case-insensitive; the same pattern for lower-case ASCII text; phrase -> group).
_Table = tuple[re.Pattern[str] | None, re.Pattern[str] | None, dict[str, tuple[str, ...]]]


def _compiled(groups: dict[str, tuple[str, ...]], anchor: str) -> _Table:
    if not groups:
        return None, None, groups
    alternation = "|".join(re.escape(phrase) for phrase in sorted(groups, key=lambda p: (-len(p), p)))
    source = rf"{anchor}(?<![\w-])(?:{alternation})(?![\w-])"
    # The phrases are lower case: on ASCII text lowered first (same length, same word characters)
    # the case-sensitive pattern finds the same matches about 3x as fast as IGNORECASE, which
    # matters as every new description (synthesised tools, lookalikes) is matched once.
    return re.compile(source, re.IGNORECASE), re.compile(source), groups


@cache
def _phrase_tables() -> tuple[_Table, _Table]:
    """(phrases swapped anywhere, phrases swapped only at the start): one regex each, longest
    phrase first, and lower-cased phrase -> its group."""
    anywhere: dict[str, tuple[str, ...]] = {}
    leading: dict[str, tuple[str, ...]] = {}
    for rules in RULE_SETS:
        table = leading if rules.leading else anywhere
        for group in rules.phrases:
            for phrase in group:
                table.setdefault(phrase.lower(), group)
    return _compiled(anywhere, ""), _compiled(leading, "^")


@cache
def _frames(role: str) -> tuple[str, ...]:
    found: list[str] = []
    for rules in RULE_SETS:
        found.extend(rules.tool_frames if role == "tool" else rules.param_frames)
    return tuple(found) or ("{C}.",)


def _matches(table: _Table, text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    pattern, lower_pattern, groups = table
    if pattern is None or lower_pattern is None:
        return []
    if text.isascii():
        return [
            (found.start(), found.end(), groups[found.group(0)])
            for found in lower_pattern.finditer(text.lower())
        ]
    return [(found.start(), found.end(), groups[found.group(0).lower()]) for found in pattern.finditer(text)]


@lru_cache(maxsize=16384)
def _template(core: str) -> _Template:
    """The core text with each known phrase turned into its group's choices."""
    anywhere, leading = _phrase_tables()
    found = _matches(leading, core)
    start = found[0][1] if found else 0
    found += [(begin + start, end + start, group) for begin, end, group in _matches(anywhere, core[start:])]
    parts: list[Any] = []
    last = 0
    for begin, end, group in found:
        if begin == 0 and core[:1].isupper():
            group = tuple(member[:1].upper() + member[1:] for member in group)
        parts += [core[last:begin], group]
        last = end
    parts.append(core[last:])
    return tuple(parts)


def _lowered(text: str) -> str:
    """The text with a small first letter, unless it opens with an acronym ("ISO", "SQL")."""
    return text if text[1:2].isupper() else text[:1].lower() + text[1:]


#: A frame split for filling without ``str.format``: (text before, whether the core goes in with a
#: small first letter, text after).
_Shape = tuple[str, bool, str]


@cache
def _shapes(role: str) -> tuple[_Shape, ...]:
    shapes: list[_Shape] = []
    for frame in _frames(role):
        lower = "{l}" in frame
        before, _, after = frame.partition("{l}" if lower else "{C}")
        shapes.append((before, lower, after))
    return tuple(shapes)


#: What rewording one text needs, built once per (text, role): its phrase template and, per
#: frame, (text before, whether the core goes in with a small first letter, text after).
_TextPlan = tuple[_Template, tuple[_Shape, ...]]
#: Per role, per text (a dict per role: no key tuple to build and hash per look-up).
_TEXT_PLANS: dict[str, dict[str, _TextPlan | None]] = {}
_TEXT_PLAN_BOUND = 32768


def _text_plan(text: str, role: str) -> _TextPlan | None:
    """The plan of a description (None for blank text), cached; the cache is emptied once full
    (synthesised tools and lookalikes bring many texts, each seen in many tasks)."""
    if not text.strip():
        plan = None
    else:
        plan = (_template(text.strip().rstrip(".").strip() or text.strip()), _shapes(role))
    if sum(map(len, _TEXT_PLANS.values())) >= _TEXT_PLAN_BOUND:
        _TEXT_PLANS.clear()
    _TEXT_PLANS.setdefault(role, {})[text] = plan
    return plan


def rewrite_text(text: str, role: str, rng: Random) -> str:
    """``text`` (a tool's description when ``role`` is "tool", else a parameter's) reworded.

    Empty text stays empty; any other text comes back different from ``text``.
    """
    plans = _TEXT_PLANS.get(role)
    plan = plans[text] if plans is not None and text in plans else _text_plan(text, role)
    if plan is None:
        return text
    template, shapes = plan
    random = rng.random
    if len(template) == 1:
        out = template[0]
    elif len(template) == 3:  # one phrase to swap, the most common case
        choices = template[1]
        out = template[0] + choices[int(random() * len(choices))] + template[2]
    else:
        out = template[0]
        for index in range(1, len(template), 2):
            choices = template[index]
            out += choices[int(random() * len(choices))] + template[index + 1]
    pick = int(random() * len(shapes))
    before, lower, after = shapes[pick]
    result = before + (_lowered(out) if lower else out[:1].upper() + out[1:]) + after
    if result != text:
        return result
    for step in range(1, len(shapes)):
        before, lower, after = shapes[(pick + step) % len(shapes)]
        result = before + (_lowered(out) if lower else out[:1].upper() + out[1:]) + after
        if result != text:
            return result
    return text + " (see the request)"  # pragma: no cover - only when every frame gives the text back


def rewrite_property(prop: Any, rng: Random) -> Any:
    """A parameter schema with its description, and its fields' and items' descriptions, reworded."""
    if type(prop) is not dict:
        return prop
    out = prop.copy()
    description = prop.get("description")
    if type(description) is str:
        out["description"] = rewrite_text(description, "param", rng)
    if "properties" in prop and type(prop["properties"]) is dict:
        out["properties"] = {key: rewrite_property(value, rng) for key, value in prop["properties"].items()}
    items = prop.get("items")
    if type(items) is dict and ("properties" in items or "description" in items):
        out["items"] = rewrite_property(items, rng)
    return out


def rewrite_tool(tool: dict[str, Any], rng: Random) -> dict[str, Any]:
    """An OpenAI tool dict with every description reworded (names, types and enums untouched).

    ``tool`` is not mutated; unchanged parts are shared with it.
    """
    function = tool.get("function")
    if not isinstance(function, dict):
        return tool
    new_function = dict(function)
    description = function.get("description")
    if isinstance(description, str):
        new_function["description"] = rewrite_text(description, "tool", rng)
    parameters = function.get("parameters")
    if isinstance(parameters, dict) and isinstance(parameters.get("properties"), dict):
        new_parameters = dict(parameters)
        new_parameters["properties"] = {
            key: rewrite_property(value, rng) for key, value in parameters["properties"].items()
        }
        new_function["parameters"] = new_parameters
    new_tool = dict(tool)
    new_tool["function"] = new_function
    return new_tool
