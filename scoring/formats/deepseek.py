"""DeepSeek V3, V3.1, V3.2, V4: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}
<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>`` (V3: ``function<｜tool▁sep｜>NAME`` and a fenced JSON block)."""

from __future__ import annotations

import re

from scoring.formats.reading import Finder, Reading, Schemas, count, json_value_at, object_arguments
from scoring.formats.spec import CallMarkup, Format, Marker, family_prompting
from scoring.formats.writing import json_text
from scoring.model import Call, Limits

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
SEP = "<｜tool▁sep｜>"
CALL_END = "<｜tool▁call▁end｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
_FENCED_JSON = re.compile(r"\s*```(?:json)?\s*")


def render(calls: list[Call]) -> str:
    inner = "".join(f"{CALL_BEGIN}{call.name}{SEP}{json_text(call.arguments)}{CALL_END}" for call in calls)
    return f"{CALLS_BEGIN}{inner}{CALLS_END}"


def read(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    """V3: ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{...}\\n```<｜tool▁call▁end｜>``;
    V3.1+: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>``."""
    calls: list[Call] = []
    finder = Finder(text)
    end = at
    position = finder.find(CALL_BEGIN, at)
    while position >= 0:
        head_start = position + len(CALL_BEGIN)
        sep = finder.find(SEP, head_start)
        if sep < 0:
            break  # cut off
        head = text[head_start:sep].strip()
        body = sep + len(SEP)
        if head == "function":  # V3: the name on the line after the separator, then fenced JSON
            line_end = finder.find("\n", body)
            if line_end < 0:
                break
            name = text[body:line_end].strip()
            fence = _FENCED_JSON.match(text, line_end)
            found = json_value_at(text, fence.end() if fence else line_end)
        else:
            name = head
            fence = _FENCED_JSON.match(text, body)
            found = json_value_at(text, fence.end() if fence and "```" in fence.group(0) else body)
        if found is None:
            break  # cut off (or broken: the complete calls before it stand)
        calls.append(Call(name, object_arguments(found[0])))
        count(calls, limits)
        close = finder.find(CALL_END, found[1])
        end = found[1] if close < 0 else close + len(CALL_END)
        position = finder.find(CALL_BEGIN, end)
    if calls:
        calls_end = finder.find(CALLS_END, end)
        end = end if calls_end < 0 else calls_end + len(CALLS_END)
    return Reading(calls, at, end)


FORMAT = Format(
    name="deepseek",
    render=render,
    writes=(
        "`<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>...` "
        "(V3: `function<｜tool▁sep｜>NAME` and a fenced JSON block)"
    ),
    families="DeepSeek V3, V3.1, V3.2, V4",
    auto_when="`tool▁call▁begin`",
    decode_needs_tools=True,
    markers=(Marker(CALLS_BEGIN, read), Marker(CALL_BEGIN, read)),
    fingerprints=(("tool▁call▁begin",), ("tool▁calls▁begin",)),
    fingerprint_rank=20,
    prompting=family_prompting(
        render,
        (CALLS_BEGIN + CALL_BEGIN, "{name}" + SEP),
        markup=CallMarkup(CALL_BEGIN + "{name}" + SEP, CALL_END, opening=CALLS_BEGIN, closing=CALLS_END),
    ),
)
