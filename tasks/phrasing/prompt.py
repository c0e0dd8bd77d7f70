"""The instructions a phrasing model gets: the task's intent and a style, as chat messages.

The model sees what the person wants (the tool's purpose, never its name), every value with the
forms it may be written in, the values it must only allude to, the template text as one example,
and the style. It is asked for the message alone.
"""

from __future__ import annotations

import json
from typing import Any

from tasks.devices._choice import CHOICE
from tasks.phrasing.style import Style

__all__ = ["SYSTEM", "phrasing_messages"]

SYSTEM = (
    "You rewrite requests that a person sends to an assistant. Write the request the way a real "
    "person would, in your own words and in the style you are given, so that it means exactly the "
    "same thing. Rules: state every value listed under 'state', written exactly in one of its "
    "forms (digits stay digits, quoted text stays verbatim inside double quotes); state each value "
    "once, and never write a value's 'not' phrases (some values are meant to be worked out by the "
    "reader: keep them in the words given, never write the result); say every fact under "
    "'also_say' too, in your own words but keeping its forms, so that what is asked and what is not "
    "stays as clear as in the example; for each entry under 'allude_to', only allude "
    "to it the way its hint does and never give "
    "a concrete value for it; add no other numbers, dates, times or names; do not mention "
    "functions, tools, APIs or parameters, and do not tell the assistant how to do its job. Answer "
    "with the message only: no preamble, no quotes around it, no explanation."
)


def _role(entry: dict[str, Any]) -> str:
    """What a context sentence is for. The sentences of a choice among written candidates are all
    kept as plain statements: the one that states the value and those that state the others alike
    (a decoy said as "not what is asked" would tell a keyword program which candidate to drop)."""
    if entry.get("about") == CHOICE:
        return "tells which one is meant: keep it a plain statement, as it is"
    return "needed to work a value out" if entry.get("role") == "fact" else "not what is asked"


def _ask_for_model(ask: dict[str, Any]) -> dict[str, Any]:
    shown: dict[str, Any] = {}
    if ask.get("purpose"):
        shown["wants"] = ask["purpose"]
    shown["state"] = []
    for value in ask.get("values", ()):
        entry: dict[str, Any] = {
            "what": value.get("about", ""),
            "forms": [forms for kind, forms in value.get("mentions", ()) if kind != "absent"],
        }
        opposite = [form for kind, forms in value.get("mentions", ()) if kind == "absent" for form in forms]
        # A worked-out value (a relative date, a sum) stays for the reader to work out: the
        # words that state it go along, since its forms alone ("120.00", "a quarter of") lose it.
        if value.get("derived") is not None:
            entry["words"] = value.get("said", "")
            opposite.extend(value.get("derived", ()))
        if opposite:
            entry["not"] = opposite
        shown["state"].append(entry)
    context = ask.get("context", ())
    if context:
        shown["also_say"] = [
            {
                "fact": entry.get("said", ""),
                "role": _role(entry),
                "forms": [forms for kind, forms in entry.get("mentions", ()) if kind != "absent"],
            }
            for entry in context
        ]
    withheld = ask.get("withheld", ())
    if withheld:
        shown["allude_to"] = [
            {"what": entry.get("about", ""), "hint": entry.get("said", "")} for entry in withheld
        ]
    return shown


def phrasing_messages(intent: dict[str, Any], style: Style) -> list[dict[str, str]]:
    """The chat messages asking for one rewording of the intent's request."""
    asks = [_ask_for_model(ask) for ask in intent.get("asks", ())]
    body = {
        "requests": asks,
        "example": intent.get("example", ""),
        "style": style.describe(),
    }
    user = (
        "Rewrite this request as one message. Everything in 'requests' goes into that one message, "
        "in any order that reads naturally.\n" + json.dumps(body, ensure_ascii=False, indent=1)
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
