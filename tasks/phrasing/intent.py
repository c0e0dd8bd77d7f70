"""What a task's request means, as the phrasing stage reads it.

An intent is a JSON dict ``{"asks": [...], "example": text}``. Each ask is one thing the request
asks for: the tool (``tool``, ``purpose``), the template text that asked it (``example``), the
values it states (``values``: ``slot``, ``about``, ``said`` and ``mentions``, each mention a
``[kind, [forms...]]`` pair listing the spoken forms that keep the value) and the values it only
alludes to (``withheld``: ``slot``, ``about``, ``said`` and the ``forbidden`` forms that would
state one). A value worked out by a device (``tasks.devices``) also lists the ``derived`` forms of
its result, which a rewording must not write; an ask's ``context`` lists sentences around the
request (``role`` "fact": needed to work a value out; "decoy": a value of the same type that is no
argument), each with ``about``, ``said`` and ``mentions`` that a rewording must keep like values.
Builtin intents carry ``today`` (ISO), the date the task's system line states.
The builtin generator writes it (``Instance.ask``); for external tasks (BFCL, xLAM)
``external_intent`` reads it off the question and its reference answer.
"""

from __future__ import annotations

import re
from typing import Any

from scoring.schema import function_of
from tasks.answers import reference_calls
from tasks.model import Task

__all__ = ["derived_of", "external_intent", "intent_of", "mentions_of", "withheld_of"]


def intent_of(task: Task) -> dict[str, Any]:
    """The task's intent: the generator's own, or one read off an external task."""
    return task.intent if task.intent is not None else external_intent(task)


def _scalars(value: Any) -> list[Any]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, str | int | float):
        return [value]
    if isinstance(value, list):
        return [item for element in value for item in _scalars(element)]
    if isinstance(value, dict):
        return [item for element in value.values() for item in _scalars(element)]
    return []


def _stated_in(text: str, value: Any) -> bool:
    shown = str(value)
    if len(shown) < 2 and not isinstance(value, int):
        return False
    pattern = r"(?<![0-9A-Za-z])" + re.escape(shown) + r"(?![0-9A-Za-z])"
    return re.search(pattern, text, flags=0 if isinstance(value, int | float) else re.IGNORECASE) is not None


def external_intent(task: Task) -> dict[str, Any]:
    """An intent for a task the builtin generator did not write (BFCL, xLAM).

    Each value of the reference answer that the question states word for word is a value the
    rewording must keep ("quoted" for text, "number" for numbers); nothing else is known, so
    a rewording of an external question is checked for those values, names and length only.
    """
    question = task.request
    purposes = {
        str(function_of(tool).get("name", "")): str(function_of(tool).get("description", ""))
        for tool in task.tools
    }
    asks: list[dict[str, Any]] = []
    for name, arguments in reference_calls(task.expected):
        values: list[dict[str, Any]] = []
        for slot, value in arguments.items():
            for scalar in _scalars(value):
                if not _stated_in(question, scalar):
                    continue
                kind = "number" if isinstance(scalar, int | float) else "quoted"
                values.append(
                    {"slot": slot, "about": slot, "said": str(scalar), "mentions": [[kind, [str(scalar)]]]}
                )
        asks.append(
            {
                "tool": name,
                "purpose": purposes.get(name, ""),
                "example": question,
                "values": values,
                "withheld": [],
            }
        )
    if not asks:
        asks.append({"tool": "", "purpose": "", "example": question, "values": [], "withheld": []})
    return {"asks": asks, "example": question}


def mentions_of(intent: dict[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """Every stated value of the intent as (kind, forms), ask after ask: the values of its asks
    and of their context (facts and decoys, which a rewording must keep as well), and what a
    withheld value's allusion must keep (the event it refers to, which the context leaves undated)."""
    return [
        (str(kind), tuple(str(form) for form in forms))
        for ask in intent.get("asks", ())
        for value in (*ask.get("values", ()), *ask.get("context", ()), *ask.get("withheld", ()))
        for kind, forms in value.get("mentions", ())
    ]


def derived_of(intent: dict[str, Any]) -> list[str]:
    """Every written form of a value the request makes the reader work out (a relative date's
    calendar date, a sum): none may appear in a rewording."""
    return [
        str(form)
        for ask in intent.get("asks", ())
        for value in ask.get("values", ())
        for form in value.get("derived", ())
    ]


def withheld_of(intent: dict[str, Any]) -> list[dict[str, Any]]:
    """Every withheld value of the intent."""
    return [entry for ask in intent.get("asks", ()) for entry in ask.get("withheld", ())]
