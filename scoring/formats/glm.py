"""GLM-4.5 / 4.6 / 4.7: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>``,
newlines optional, values typed by the offered schema. scoring.decoding finds the blocks and
hands a GLM body (:func:`is_glm_block`) to :func:`glm_block_call`."""

from __future__ import annotations

import re
from typing import Any

from scoring.formats.reading import Finder, Schemas, skip_blank, typed_value
from scoring.formats.spec import CallMarkup, Format, family_prompting
from scoring.formats.writing import text_blocks
from scoring.model import Call, DecodeError, Limits

_GLM_NAME = re.compile(r"\s*([^\s<>{}\[\]()]{1,256})\s*(?=<arg_key>|</tool_call>|$)")
_ARG_KEY = "<arg_key>"
_ARG_VALUE = "<arg_value>"


def render(calls: list[Call]) -> str:
    return text_blocks(
        calls,
        "<tool_call>{name}\n{pairs}</tool_call>",
        "<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>\n",
    )


_ARG_VALUE_END = "</arg_value>"
_TOOL_CALL_END = "</tool_call>"


def glm_block_call(body: str, limits: Limits, schemas: Schemas) -> Call:
    """``NAME<arg_key>K</arg_key><arg_value>V</arg_value>...``, newlines optional, values typed
    by the schema."""
    return glm_call_at(body, 0, Finder(body), limits, schemas)[0]


def _closes_value(text: str, close: int) -> bool:
    """Whether the ``</arg_value>`` at ``close`` ends its value: the next key, the call's end or the
    text's end follows it. Any other one is the value's text."""
    after = close + len(_ARG_VALUE_END)
    if after < len(text) and text[after] != "<" and not text[after].isspace():
        return False  # the common case of a tag in a value, without the pattern
    after = skip_blank(text, after)
    return after == len(text) or text.startswith(_ARG_KEY, after) or text.startswith(_TOOL_CALL_END, after)


def glm_call_at(text: str, at: int, finder: Finder, limits: Limits, schemas: Schemas) -> tuple[Call, int]:
    """The GLM call whose body starts at ``at``, and where it ends (after its ``</tool_call>``, or
    the text's end). A value ends at the ``</arg_value>`` before the next key or the call's end, so
    it may hold ``</tool_call>`` or ``</arg_value>`` as text; one left without ``</arg_value>`` ends
    at the next ``<arg_key>`` or ``</tool_call>``, as the engines read it."""
    match = _GLM_NAME.match(text, at)
    if match is None:
        raise DecodeError("a GLM tool call without a function name")
    name = match.group(1)
    properties = schemas.get(name)
    arguments: dict[str, Any] = {}
    position = match.end()
    while True:
        position = skip_blank(text, position)
        if not text.startswith(_ARG_KEY, position):
            # Stray text between arguments is passed over, up to the next key in this call.
            following, call_end = finder.find(_ARG_KEY, position), finder.find(_TOOL_CALL_END, position)
            if following < 0 or 0 <= call_end < following:
                position = call_end if call_end >= 0 else len(text)
                break
            position = following
        key_start = position + len(_ARG_KEY)
        key_end = finder.find("</arg_key>", key_start)
        value_start = -1 if key_end < 0 else finder.find(_ARG_VALUE, key_end)
        if value_start < 0:
            raise DecodeError("a GLM argument without its closing tags")
        start = value_start + len(_ARG_VALUE)
        following = finder.find(_ARG_KEY, start)
        close = finder.find(_ARG_VALUE_END, start)
        while close >= 0 and (following < 0 or close < following) and not _closes_value(text, close):
            close = finder.find(_ARG_VALUE_END, close + len(_ARG_VALUE_END))
        if close >= 0 and (following < 0 or close < following):
            value_end, position = close, close + len(_ARG_VALUE_END)
        else:
            call_end = finder.find(_TOOL_CALL_END, start)
            candidates = [found for found in (following, call_end) if found >= 0]
            if not candidates:
                raise DecodeError("a GLM argument without its closing tags")
            value_end = position = min(candidates)
        key = text[key_start:key_end].strip()
        arguments[key] = typed_value(text[start:value_end], properties.get(key))
        if len(arguments) > limits.max_items:
            raise DecodeError(f"more than {limits.max_items} arguments")
    if text.startswith(_TOOL_CALL_END, position):
        position += len(_TOOL_CALL_END)
    return Call(name, arguments), position


def is_glm_block(body: str) -> bool:
    stripped = body.lstrip()
    return _ARG_KEY in body or (
        bool(stripped) and stripped[0] not in "{[<`(\"'" and _GLM_NAME.fullmatch(body) is not None
    )


FORMAT = Format(
    name="glm",
    render=render,
    writes="`<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>`, newlines optional",
    families="GLM-4.5, 4.6, 4.7",
    auto_when="`<arg_key>`",
    decode_needs_tools=True,
    fingerprints=((_ARG_KEY,),),
    fingerprint_rank=40,
    prompting=family_prompting(
        render,
        ("<tool_call>", "{name}\n"),
        markup=CallMarkup("<tool_call>{name}\n", _TOOL_CALL_END, arguments="glm_xml", separator="\n"),
    ),
)
