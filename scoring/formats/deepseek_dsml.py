"""DeepSeek V3.2+ DSML: ``<｜DSML｜invoke name="NAME">`` holding ``<｜DSML｜parameter name="P"
string="true|false">value</｜DSML｜parameter>``; ``string="false"`` values are JSON, the others text,
both typed by the offered schema where it names a type (:func:`declared_value`).

The reader also reads DeepSeek V4.1's spelling of the same markup (:mod:`deepseek_dsml_v41`): a
space after the marker (``<｜DSML｜ invoke``), ``calls`` for ``function_calls``, and self-closing
invokes of functions without arguments (``<｜DSML｜invoke name="submit"/>``). Parameters are read
one after another, each value running to its own closing tag, so DSML markers inside a value are
part of the value.
"""

from __future__ import annotations

import re
from typing import Any

from scoring.formats.reading import Reading, Schemas, count, declared_value
from scoring.formats.spec import CallMarkup, Format, Marker, family_prompting
from scoring.formats.writing import text_value
from scoring.model import Call, DecodeError, Limits

DSML = "<｜DSML｜"
FUNCTION_CALLS = "<｜DSML｜function_calls>"
INVOKE = "<｜DSML｜invoke"
# Either spelling: an optional space after the marker (V4.1), and a self-closing invoke.
_INVOKE = re.compile(r"<｜DSML｜\s?invoke\s+name=\"([^\"]{1,256})\"\s*(/?)>")
_PARAMETER_OR_END = re.compile(
    r"<｜DSML｜\s?parameter\s+name=\"([^\"]{1,256})\"(?:\s+string=\"(true|false)\")?\s*>|</｜DSML｜\s?invoke\s*>"
)
_PARAMETER_END = re.compile(r"</｜DSML｜\s?parameter\s*>")
_INVOKE_END = re.compile(r"</｜DSML｜\s?invoke\s*>")
_CALLS_END = re.compile(r"\s*</｜DSML｜\s?(?:function_calls|calls)\s*>")
_DECLARED = {"true": "string", "false": "json"}


def render_dsml(calls: list[Call], space: str, section: str) -> str:
    """DSML with ``space`` after each marker (V4.1: one) and ``section`` naming the calls' block."""
    invokes = []
    for call in calls:
        parameters = "".join(
            f'<｜DSML｜{space}parameter name="{key}" string="{str(isinstance(value, str)).lower()}">'
            f"{text_value(value)}</｜DSML｜{space}parameter>\n"
            for key, value in call.arguments.items()
        )
        invokes.append(f'<｜DSML｜{space}invoke name="{call.name}">\n{parameters}</｜DSML｜{space}invoke>\n')
    return f"<｜DSML｜{space}{section}>\n" + "".join(invokes) + f"</｜DSML｜{space}{section}>"


def render(calls: list[Call]) -> str:
    return render_dsml(calls, "", "function_calls")


def _arguments(text: str, position: int, properties: Any) -> tuple[dict[str, Any], int] | None:
    """An invoke's parameters from ``position`` to its closing tag: the arguments and where the
    closing tag ends; None when the invoke is cut off."""
    arguments: dict[str, Any] = {}
    while (found := _PARAMETER_OR_END.search(text, position)) is not None:
        if found.group(1) is None:  # </｜DSML｜invoke>
            return arguments, found.end()
        value_end = _PARAMETER_END.search(text, found.end())
        if value_end is None:
            if _INVOKE_END.search(text, found.end()) is not None:
                raise DecodeError("a DSML parameter without its closing tag")
            return None  # cut off
        key, raw = found.group(1), text[found.end() : value_end.start()]
        declared = _DECLARED.get(found.group(2) or "")
        arguments[key] = declared_value(raw, properties.get(key), declared)
        position = value_end.end()
    return None


def read(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    calls: list[Call] = []
    end = at
    while (invoke := _INVOKE.search(text, end)) is not None:
        name = invoke.group(1)
        if invoke.group(2):  # <｜DSML｜invoke name="submit"/>: no arguments
            arguments: dict[str, Any] = {}
            close = invoke.end()
        else:
            read_arguments = _arguments(text, invoke.end(), schemas.get(name))
            if read_arguments is None:
                break  # cut off
            arguments, close = read_arguments
        calls.append(Call(name, arguments))
        count(calls, limits)
        end = close
    closing = _CALLS_END.match(text, end)
    if calls and closing is not None:
        end = closing.end()
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
    prompting=family_prompting(
        render,
        ('<｜DSML｜function_calls>\n<｜DSML｜invoke name="', '{name}">\n'),
        markup=CallMarkup(
            '<｜DSML｜invoke name="{name}">\n',
            "</｜DSML｜invoke>",
            arguments="deepseek_xml",
            opening=FUNCTION_CALLS + "\n",
            separator="\n",
            closing="\n</｜DSML｜function_calls>",
        ),
    ),
)
