"""Qwen3-Coder / Qwen3.5: XML inside ``<tool_call>`` blocks, values written as text and typed by
the offered schema. scoring.decoding finds the blocks and hands an XML body to
:func:`xml_block_calls`."""

from __future__ import annotations

import re
from typing import Any

from scoring.formats.reading import Finder, Schemas, count, skip_blank, typed_value
from scoring.formats.spec import CallMarkup, Format, family_prompting
from scoring.formats.writing import text_blocks
from scoring.model import Call, DecodeError, Limits

_XML_FUNCTION = re.compile(r"<function=([^>\n]{1,256})>")
_XML_PARAMETER = re.compile(r"<parameter=([^>\n]{1,256})>")


def render(calls: list[Call]) -> str:
    return text_blocks(
        calls,
        "<tool_call>\n<function={name}>\n{pairs}</function>\n</tool_call>",
        "<parameter={key}>\n{value}\n</parameter>\n",
    )


def _strip_one_newline(value: str) -> str:
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


def xml_block_calls(body: str, limits: Limits, schemas: Schemas) -> list[Call]:
    """``<function=NAME><parameter=P>value</parameter>...</function>``, one or more.
    A function without its closing tag (cut off) is dropped."""
    start = body.find("<function=")
    return [] if start < 0 else xml_calls_at(body, start, Finder(body), limits, schemas)[0]


_PARAMETER = "<parameter="
_PARAMETER_END = "</parameter>"
_FUNCTION_END = "</function>"
_TOOL_CALL_END = "</tool_call>"


def _closes_value(text: str, close: int) -> bool:
    """Whether the ``</parameter>`` at ``close`` ends its value: the next thing after it is the
    next parameter or the function's end (or the text's). Any other one is the value's text."""
    after = close + len(_PARAMETER_END)
    if after < len(text) and text[after] != "<" and not text[after].isspace():
        return False  # the common case of a tag in a value, without the pattern
    after = skip_blank(text, after)
    return after == len(text) or text.startswith(_PARAMETER, after) or text.startswith(_FUNCTION_END, after)


def _value_end(text: str, start: int, finder: Finder) -> tuple[int, int]:
    """Where the value starting at ``start`` ends and where reading goes on; (-1, -1) when cut off.
    As the engines recover it: a missing ``</parameter>`` before the next ``<parameter=`` or before
    ``</function>``; a closing tag followed by anything else is part of the value, so a value may
    hold ``</parameter>``, ``</function>`` or ``</tool_call>`` as text."""
    following = finder.find(_PARAMETER, start)
    close = finder.find(_PARAMETER_END, start)
    while close >= 0 and (following < 0 or close < following) and not _closes_value(text, close):
        close = finder.find(_PARAMETER_END, close + len(_PARAMETER_END))
    if close >= 0 and (following < 0 or close < following):
        return close, close + len(_PARAMETER_END)
    # Without its close, a value runs to the next parameter, the function's end or the block's end,
    # whichever comes first (never into the next block).
    ends = [
        found
        for found in (following, finder.find(_FUNCTION_END, start), finder.find(_TOOL_CALL_END, start))
        if found >= 0
    ]
    if not ends:
        return -1, -1
    return min(ends), min(ends)


def xml_calls_at(
    text: str, at: int, finder: Finder, limits: Limits, schemas: Schemas
) -> tuple[list[Call], int]:
    """The functions from the ``<function=`` at ``at`` on (one after another, each maybe closed by
    ``</tool_call>``), and where the last one read ends. Values are typed by the offered schema."""
    calls: list[Call] = []
    position = end = at
    while (match := _XML_FUNCTION.match(text, position)) is not None:
        name = match.group(1).strip()
        properties = schemas.get(name)
        arguments: dict[str, Any] = {}
        raw: list[tuple[str, int, int]] = []
        position = match.end()
        while True:
            position = skip_blank(text, position)
            if text.startswith(_FUNCTION_END, position):
                position += len(_FUNCTION_END)
                break
            if text.startswith(_TOOL_CALL_END, position):  # </function> left out: the block ends it
                break
            parameter = (
                _XML_PARAMETER.match(text, position) if text.startswith(_PARAMETER, position) else None
            )
            if parameter is None:  # stray text between parameters: on to the next tag
                following = finder.find(_PARAMETER, position + 1)
                function_end = finder.find(_FUNCTION_END, position)
                if following < 0 and function_end < 0:
                    return calls, end  # cut off: this function is dropped
                position = (
                    following
                    if following >= 0 and (function_end < 0 or following < function_end)
                    else function_end
                )
                continue
            value_end, position = _value_end(text, parameter.end(), finder)
            if value_end < 0:
                return calls, end  # cut off inside a value
            # Typed once the function is complete: a function cut off costs no typing.
            raw.append((parameter.group(1).strip(), parameter.end(), value_end))
            if len(raw) > limits.max_items:
                raise DecodeError(f"more than {limits.max_items} arguments")
        for key, value_start, value_end in raw:
            arguments[key] = typed_value(_strip_one_newline(text[value_start:value_end]), properties.get(key))
        calls.append(Call(name, arguments))
        count(calls, limits)
        position = skip_blank(text, position)
        if text.startswith(_TOOL_CALL_END, position):
            position = skip_blank(text, position + len(_TOOL_CALL_END))
        end = position
    return calls, end


FORMAT = Format(
    name="qwen3_coder",
    render=render,
    writes="`<tool_call><function=NAME><parameter=P>value</parameter>...</function></tool_call>`",
    families="Qwen3-Coder, Qwen3.5",
    auto_when="`<function=` and `<parameter=`",
    decode_needs_tools=True,
    fingerprints=(("<function=", "<parameter="),),
    fingerprint_rank=50,
    prompting=family_prompting(
        render,
        ("<tool_call>\n<function=", "{name}>\n"),
        markup=CallMarkup(
            "<tool_call>\n<function={name}>\n",
            "</function>\n" + _TOOL_CALL_END,
            arguments="qwen_xml",
            separator="\n",
        ),
    ),
)
