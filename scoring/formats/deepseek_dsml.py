"""DeepSeek V3.2+ DSML: ``<｜DSML｜invoke name="NAME">`` holding ``<｜DSML｜parameter name="P"
string="true|false">value</｜DSML｜parameter>``; ``string="false"`` values are JSON, the others text
typed by the offered schema."""

from __future__ import annotations

import re
from typing import Any

from scoring.formats.reading import Reading, Schemas, count, json_value_at, typed_value
from scoring.formats.spec import Format, Marker, family_prompting
from scoring.formats.writing import text_value
from scoring.model import Call, DecodeError, Limits, make_call

DSML = "<｜DSML｜"
FUNCTION_CALLS = "<｜DSML｜function_calls>"
INVOKE = "<｜DSML｜invoke"
_INVOKE = re.compile(r"<｜DSML｜invoke\s+name=\"([^\"]{1,256})\"\s*>")
_PARAMETER = re.compile(r"<｜DSML｜parameter\s+name=\"([^\"]{1,256})\"(?:\s+string=\"(true|false)\")?\s*>")


def render(calls: list[Call]) -> str:
    invokes = []
    for call in calls:
        parameters = "".join(
            f'<｜DSML｜parameter name="{key}" string="{"true" if isinstance(value, str) else "false"}">'
            f"{text_value(value)}</｜DSML｜parameter>\n"
            for key, value in call.arguments.items()
        )
        invokes.append(f'<｜DSML｜invoke name="{call.name}">\n{parameters}</｜DSML｜invoke>\n')
    return "<｜DSML｜function_calls>\n" + "".join(invokes) + "</｜DSML｜function_calls>"


def read(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    calls: list[Call] = []
    end = at
    while (invoke := _INVOKE.search(text, end)) is not None:
        close = text.find("</｜DSML｜invoke>", invoke.end())
        if close < 0:
            break  # cut off
        name = invoke.group(1)
        properties = schemas.get(name)
        inner = text[invoke.end() : close]
        arguments: dict[str, Any] = {}
        for parameter in _PARAMETER.finditer(inner):
            value_end = inner.find("</｜DSML｜parameter>", parameter.end())
            if value_end < 0:
                raise DecodeError("a DSML parameter without its closing tag")
            key, raw = parameter.group(1), inner[parameter.end() : value_end]
            if parameter.group(2) == "true":
                arguments[key] = raw
            elif parameter.group(2) == "false":
                found = json_value_at(raw, 0)
                arguments[key] = found[0] if found is not None else typed_value(raw, properties.get(key))
            else:
                arguments[key] = typed_value(raw, properties.get(key))
        calls.append(make_call(name, arguments))
        count(calls, limits)
        end = close + len("</｜DSML｜invoke>")
    closing = text.find("</｜DSML｜function_calls>", end)
    if calls and closing >= 0 and not text[end:closing].strip():
        end = closing + len("</｜DSML｜function_calls>")
    return Reading(calls, at, end)


FORMAT = Format(
    name="deepseek_dsml",
    render=render,
    writes=(
        '`<｜DSML｜invoke name="NAME"><｜DSML｜parameter name="P" string="true\\|false">value'
        "</｜DSML｜parameter></｜DSML｜invoke>`"
    ),
    families="DeepSeek V3.2+ (DSML)",
    auto_when="`｜DSML｜`",
    decode_needs_tools=True,
    markers=(Marker(FUNCTION_CALLS, read), Marker(INVOKE, read)),
    fingerprints=(("｜DSML｜",),),
    fingerprint_rank=10,  # before deepseek: a DSML template may also write the older markers
    prompting=family_prompting(render, ('<｜DSML｜function_calls>\n<｜DSML｜invoke name="', '{name}">\n')),
)
