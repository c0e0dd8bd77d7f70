"""Guided calls in a family's own markup, through xgrammar's structural tags.

A family whose format carries a `CallMarkup` (scoring.formats: Qwen3-Coder's XML parameters,
GLM's argument tags, DeepSeek's DSML, Kimi's sections, Harmony's channels, Mistral's
``[TOOL_CALLS]``, Llama 3's ``<|python_tag|>``) is guided the way vLLM and SGLang constrain tool
calls: each offered function becomes a tag (its ``begin`` with the name filled in, the arguments
as a JSON schema in the family's argument style, its ``end``), the tags are joined by the
family's separator between its opening and closing, and xgrammar turns that structural tag into
a grammar. The grammar is handed on as EBNF text (`markup_ebnf`), so the processor compiles and
caches it like the grammars the miner writes itself.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from scoring.formats.spec import CallMarkup
from scoring.schema import SCHEMA_TYPE_ALIASES

INDEX = "{index}"  # a call number in a call's begin: digits
_INDEX_PATTERN = "[0-9]{1,4}"
NUMBER_BOUND = 1e15  # a number with no bounds of its own is kept within these
# Whitespace the arguments may hold in a row between their parts: the families write one space
# or one newline there; without a bound a weak model pads until its budget runs out.
WHITESPACE = 1
# How a value ends in each argument style: in the XML styles a value is free text that any
# character continues, so the guide closes it (near the budget) by writing its end tag.
VALUE_ENDS: dict[str, tuple[str, ...]] = {
    "json": (),
    "qwen_xml": ("\n</parameter>", "</parameter>"),
    "glm_xml": ("</arg_value>",),
    "deepseek_xml": ("</｜DSML｜parameter>",),
    "deepseek_v4_1_xml": ("</｜DSML｜ parameter>",),
    "kimi_k3_xml": ("<|close|>argument<|sep|>",),
}


def _normalised(schema: Any) -> Any:
    """A JSON schema as xgrammar reads it: BFCL's type names (``dict``, ``float``, ``tuple``)
    in JSON Schema's, ``any`` as no type, an object with properties closed to others (as the
    miner's own grammars are: an unknown argument fails the checker), a number bounded."""
    if isinstance(schema, list):
        return [_normalised(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _normalised(value) for key, value in schema.items() if key not in ("properties", "type")}
    kind = schema.get("type")
    if isinstance(kind, str):
        kind = SCHEMA_TYPE_ALIASES.get(kind, kind)
        if kind != "any":
            out["type"] = kind
    elif isinstance(kind, list):
        out["type"] = [SCHEMA_TYPE_ALIASES.get(item, item) for item in kind if item != "any"]
    if out.get("type") == "number" and "minimum" not in out and "maximum" not in out:
        # bounds make xgrammar write plain decimals: an unbounded number may take an exponent
        # (1E20205) that reads back as infinity, which no schema accepts
        out["minimum"], out["maximum"] = -NUMBER_BOUND, NUMBER_BOUND
    properties = schema.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {str(key): _normalised(value) for key, value in properties.items()}
        out.setdefault("additionalProperties", False)
    return out


def _parameters(function: dict[str, Any]) -> dict[str, Any]:
    parameters = function.get("parameters")
    schema = _normalised(parameters) if isinstance(parameters, dict) else {}
    schema["type"] = "object"
    schema.setdefault("properties", {})
    schema.setdefault("additionalProperties", False)
    return schema


def structural_tag(markup: CallMarkup, functions: list[dict[str, Any]]) -> Any:
    """xgrammar's structural tag of an answer of one or more calls of `functions` in `markup`."""
    from xgrammar.structural_tag import (
        ConstStringFormat,
        JSONSchemaFormat,
        RegexFormat,
        SequenceFormat,
        StructuralTag,
        TagFormat,
        TagsWithSeparatorFormat,
    )

    tags = []
    for function in functions:
        begin = markup.begin.replace("{name}", str(function["name"]))
        arguments = JSONSchemaFormat.model_validate(
            {
                "json_schema": _parameters(function),
                "style": markup.arguments,
                "max_whitespace_cnt": WHITESPACE,
            }
        )
        head, indexed, tail = begin.partition(INDEX)
        content: Any = arguments
        if indexed:  # the call number sits inside the begin: digits, then the rest of it
            content = SequenceFormat(
                elements=[RegexFormat(pattern=_INDEX_PATTERN), ConstStringFormat(value=tail), arguments]
            )
        tags.append(TagFormat(begin=head, content=content, end=markup.end))
    calls = TagsWithSeparatorFormat(tags=tags, separator=markup.separator, at_least_one=True)
    elements: list[Any] = []
    if markup.opening:
        elements.append(ConstStringFormat(value=markup.opening))
    elements.append(calls)
    if markup.closing:
        elements.append(ConstStringFormat(value=markup.closing))
    return StructuralTag(format=elements[0] if len(elements) == 1 else SequenceFormat(elements=elements))


def exits(markup: CallMarkup) -> tuple[str, ...]:
    """The texts that end a value, a call or the answer in `markup`, longest first within each."""
    return tuple(text for text in (*VALUE_ENDS.get(markup.arguments, ()), markup.end, markup.closing) if text)


def markup_ebnf(markup: CallMarkup, functions: list[dict[str, Any]]) -> str:
    """The grammar of `structural_tag` as EBNF text (cached per markup and functions)."""
    return _ebnf(markup, json.dumps(functions, ensure_ascii=False))  # key order is argument order


@lru_cache(maxsize=256)
def _ebnf(markup: CallMarkup, functions: str) -> str:
    import xgrammar

    return str(xgrammar.Grammar.from_structural_tag(structural_tag(markup, json.loads(functions))))
