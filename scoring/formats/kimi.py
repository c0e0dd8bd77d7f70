"""Kimi K2 / K2.5: ``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}
<|tool_call_end|>`` inside a ``<|tool_calls_section_begin|>`` section."""

from __future__ import annotations

import re

from scoring.formats.reading import Finder, Reading, Schemas, count, json_value_at, object_arguments
from scoring.formats.spec import CallMarkup, Format, Marker, family_prompting
from scoring.formats.writing import json_text
from scoring.model import Call, Limits

SECTION = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL = "<|tool_call_begin|>"
ARGUMENTS = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"
_ID = re.compile(r"^(?:functions\.)?(.+?)(?::\d+)?$")


def render(calls: list[Call]) -> str:
    inner = "".join(
        f"{CALL}functions.{call.name}:{index}{ARGUMENTS}{json_text(call.arguments)}{CALL_END}"
        for index, call in enumerate(calls)
    )
    return f"{SECTION}{inner}{SECTION_END}"


def read(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    calls: list[Call] = []
    finder = Finder(text)
    end = at
    position = finder.find(CALL, at)
    while position >= 0:
        head_start = position + len(CALL)
        arguments_at = finder.find(ARGUMENTS, head_start)
        if arguments_at < 0:
            break
        match = _ID.match(text[head_start:arguments_at].strip())
        found = json_value_at(text, arguments_at + len(ARGUMENTS))
        if match is None or found is None:
            break  # cut off
        calls.append(Call(match.group(1), object_arguments(found[0])))
        count(calls, limits)
        close = finder.find(CALL_END, found[1])
        end = found[1] if close < 0 else close + len(CALL_END)
        position = finder.find(CALL, end)
    section_end = finder.find(SECTION_END, end)
    if calls and section_end >= 0:
        end = section_end + len(SECTION_END)
    return Reading(calls, at, end)


def history_call_id(name: str, number: int) -> str:
    """Kimi's template writes a call's id where others write its name: the model was trained on
    ``functions.NAME:N``."""
    return f"functions.{name}:{number}"


FORMAT = Format(
    name="kimi",
    render=render,
    writes=(
        r"`<\|tool_call_begin\|>functions.NAME:IDX<\|tool_call_argument_begin\|>{...}<\|tool_call_end\|>` "
        "in a tool-calls section"
    ),
    families="Kimi K2, K2.5",
    auto_when=r"`<\|tool_call_argument_begin\|>`",
    decode_needs_tools=True,
    markers=(Marker(SECTION, read), Marker(CALL, read)),
    fingerprints=((ARGUMENTS,), (SECTION,)),
    fingerprint_rank=30,
    prompting=family_prompting(
        render,
        (SECTION + CALL + "functions.", "{name}:0" + ARGUMENTS),
        history_call_id=history_call_id,
        markup=CallMarkup(
            CALL + "functions.{name}:{index}" + ARGUMENTS, CALL_END, opening=SECTION, closing=SECTION_END
        ),
    ),
)
