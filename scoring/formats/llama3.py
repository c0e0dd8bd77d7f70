"""Llama 3.1-3.3: ``<|python_tag|>{"name": ..., "parameters": {...}}`` (``; `` between several
calls), or the same objects bare."""

from __future__ import annotations

from scoring.formats.reading import Reading, Schemas, calls_of_objects, json_objects
from scoring.formats.spec import CallMarkup, Format, Marker, family_prompting
from scoring.formats.writing import json_text
from scoring.model import Call, DecodeError, Limits

PYTHON_TAG = "<|python_tag|>"


def render(calls: list[Call]) -> str:
    return PYTHON_TAG + "; ".join(json_text({"name": c.name, "parameters": c.arguments}) for c in calls)


def json_call_sequence(text: str, limits: Limits) -> list[Call] | None:
    """The bare form for several calls, ``{"name": ...}; {"name": ...}``: the calls when the
    whole text is such a sequence, else None."""
    values, end = json_objects(text, 0, limits)
    if len(values) < 2 or text[end:].strip(" \t\n;"):
        return None
    try:
        return calls_of_objects(values)
    except DecodeError:
        return None


def read(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    """``<|python_tag|>{"name": ..., "parameters": {...}}`` (``; `` between several calls)."""
    start = at + len(PYTHON_TAG)
    values, end = json_objects(text, start, limits)
    if not values:
        raise DecodeError("no JSON call after <|python_tag|>")
    return Reading(calls_of_objects(values), at, end)


FORMAT = Format(
    name="llama3",
    render=render,
    writes=r'`<\|python_tag\|>{"name": ..., "parameters": {...}}`, or bare, `; ` between calls',
    families="Llama 3.1-3.3",
    auto_when=r'`<\|python_tag\|>`, or "dictionary of argument name"',
    decode_needs_tools=True,
    markers=(Marker(PYTHON_TAG, read),),
    fingerprints=((PYTHON_TAG,), ('"parameters": dictionary of argument name',)),
    fingerprint_rank=90,
    prompting=family_prompting(
        render,
        ('<|python_tag|>{"name": "', '{name}", "parameters": '),
        markup=CallMarkup('{"name": "{name}", "parameters": ', "}", opening=PYTHON_TAG, separator="; "),
    ),
)
