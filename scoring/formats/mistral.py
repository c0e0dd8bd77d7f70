"""Mistral, Devstral, Magistral: ``[TOOL_CALLS]NAME[ARGS]{...}`` per call (v11+), or
``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`` (v3). Magistral's ``[THINK]`` is reasoning."""

from __future__ import annotations

import re

from scoring.formats.reading import (
    Reading,
    Schemas,
    calls_of_objects,
    count,
    json_value_at,
    object_arguments,
    skip_blank,
)
from scoring.formats.spec import CallMarkup, Format, Marker, family_prompting
from scoring.formats.writing import json_text
from scoring.model import Call, Limits

TOOL_CALLS = "[TOOL_CALLS]"
_NAME = re.compile(r"\s*([^\s\[\]{}]{1,256})\s*(?:\[CALL_ID\]\s*[^\s\[]{0,64}\s*)?\[ARGS\]")


def render(calls: list[Call]) -> str:
    return "".join(f"{TOOL_CALLS}{call.name}[ARGS]{json_text(call.arguments)}" for call in calls)


def read(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    """``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`` (v3) or, per call,
    ``[TOOL_CALLS]NAME[ARGS]{json}`` (v11+, optionally ``[CALL_ID]id`` before ``[ARGS]``; the
    next call's name may follow the previous arguments without a new ``[TOOL_CALLS]``)."""
    calls: list[Call] = []
    position = at + len(TOOL_CALLS)
    end = position
    while True:
        named = _NAME.match(text, position)
        found = json_value_at(text, named.end() if named else position)
        if found is None:
            break  # cut off, or no call at all
        if named:
            calls.append(Call(named.group(1), object_arguments(found[0])))
        else:
            calls.extend(calls_of_objects([found[0]]))
        count(calls, limits)
        end = found[1]
        position = skip_blank(text, end)
        if text.startswith(TOOL_CALLS, position):
            position += len(TOOL_CALLS)
        elif _NAME.match(text, position) is None:
            break
    return Reading(calls, at, end)


def history_call_id(name: str, number: int) -> str:
    """Mistral's template refuses any call id that is not 9 letters or digits."""
    return f"call{number:05d}"


FORMAT = Format(
    name="mistral",
    render=render,
    writes=(
        "`[TOOL_CALLS]NAME[ARGS]{...}` per call (v11+, `[CALL_ID]` read too) or `[TOOL_CALLS][{...}]` "
        "(v3); `[THINK]` is reasoning"
    ),
    families="Mistral, Devstral, Magistral",
    auto_when="`[TOOL_CALLS]`",
    decode_needs_tools=True,
    markers=(Marker(TOOL_CALLS, read),),
    fingerprints=((TOOL_CALLS,),),
    fingerprint_rank=100,
    prompting=family_prompting(
        render,
        ("[TOOL_CALLS]", "{name}[ARGS]"),
        history_call_id=history_call_id,
        markup=CallMarkup(TOOL_CALLS + "{name}[ARGS]"),
    ),
)
