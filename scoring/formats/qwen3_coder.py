"""Qwen3-Coder / Qwen3.5: XML inside ``<tool_call>`` blocks, values written as text and typed by
the offered schema. scoring.decoding finds the blocks and hands an XML body to
:func:`xml_block_calls`."""

from __future__ import annotations

import re
from typing import Any

from scoring.formats.reading import Schemas, count, typed_value
from scoring.formats.spec import Format, family_prompting
from scoring.formats.writing import text_blocks
from scoring.model import Call, DecodeError, Limits, make_call

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
    calls: list[Call] = []
    for match in _XML_FUNCTION.finditer(body):
        name = match.group(1).strip()
        end = body.find("</function>", match.end())
        if end < 0:
            break  # cut off
        inner = body[match.end() : end]
        properties = schemas.get(name)
        arguments: dict[str, Any] = {}
        for parameter in _XML_PARAMETER.finditer(inner):
            close = inner.find("</parameter>", parameter.end())
            if close < 0:
                raise DecodeError("a <parameter=...> without its </parameter>")
            key = parameter.group(1).strip()
            arguments[key] = typed_value(
                _strip_one_newline(inner[parameter.end() : close]), properties.get(key)
            )
        calls.append(make_call(name, arguments))
        count(calls, limits)
    return calls


FORMAT = Format(
    name="qwen3_coder",
    render=render,
    writes="`<tool_call><function=NAME><parameter=P>value</parameter>...</function></tool_call>`",
    families="Qwen3-Coder, Qwen3.5",
    auto_when="`<function=` and `<parameter=`",
    decode_needs_tools=True,
    fingerprints=(("<function=", "<parameter="),),
    fingerprint_rank=50,
    prompting=family_prompting(render, ("<tool_call>\n<function=", "{name}>\n")),
)
