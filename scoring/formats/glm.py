"""GLM-4.5 / 4.6 / 4.7: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>``,
newlines optional, values typed by the offered schema. scoring.decoding finds the blocks and
hands a GLM body (:func:`is_glm_block`) to :func:`glm_block_call`."""

from __future__ import annotations

import re
from typing import Any

from scoring.formats.reading import Schemas, typed_value
from scoring.formats.spec import Format, family_prompting
from scoring.formats.writing import text_blocks
from scoring.model import Call, DecodeError, Limits, make_call

_GLM_NAME = re.compile(r"\s*([^\s<>{}\[\]()]{1,256})\s*(?=<arg_key>|</tool_call>|$)")
_ARG_KEY = "<arg_key>"
_ARG_VALUE = "<arg_value>"


def render(calls: list[Call]) -> str:
    return text_blocks(
        calls,
        "<tool_call>{name}\n{pairs}</tool_call>",
        "<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>\n",
    )


def glm_block_call(body: str, limits: Limits, schemas: Schemas) -> Call:
    """``NAME<arg_key>K</arg_key><arg_value>V</arg_value>...``, newlines optional, values typed
    by the schema."""
    match = _GLM_NAME.match(body)
    if match is None:
        raise DecodeError("a GLM tool call without a function name")
    name = match.group(1)
    properties = schemas.get(name)
    arguments: dict[str, Any] = {}
    position = match.end()
    while True:
        key_start = body.find(_ARG_KEY, position)
        if key_start < 0:
            break
        key_end = body.find("</arg_key>", key_start)
        value_start = body.find(_ARG_VALUE, key_end)
        value_end = body.find("</arg_value>", value_start)
        if min(key_end, value_start, value_end) < 0:
            raise DecodeError("a GLM argument without its closing tags")
        key = body[key_start + len(_ARG_KEY) : key_end].strip()
        arguments[key] = typed_value(body[value_start + len(_ARG_VALUE) : value_end], properties.get(key))
        position = value_end + len("</arg_value>")
        if len(arguments) > limits.max_items:
            raise DecodeError(f"more than {limits.max_items} arguments")
    return make_call(name, arguments)


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
    prompting=family_prompting(render, ("<tool_call>", "{name}\n")),
)
