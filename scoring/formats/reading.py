"""What the readers of the formats share: schemas of the offered tools, typing values written as
text, reading JSON from a position, and the :class:`Reading` a family's reader returns.

Every reader is linear in the text and bounded by the decoder's :class:`Limits`; nothing is
evaluated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scoring.model import Call, DecodeError, Limits
from scoring.schema import function_of

_JSON = json.JSONDecoder()
_BLANK = re.compile(r"\s*")


def skip_blank(text: str, position: int) -> int:
    match = _BLANK.match(text, position)
    return position if match is None else match.end()


class Schemas:
    """Parameter schemas by function name (``{parameter: schema}``), from the offered tools:
    OpenAI tools, BFCL functions or plain function schemas. Built on first use: most outputs
    never need them, and the decoder runs for every answer scored."""

    __slots__ = ("_by_name", "_tools")

    def __init__(self, tools: Any = ()) -> None:
        self._tools = tools
        self._by_name: dict[str, Mapping[str, Any]] | None = None

    def get(self, name: str) -> Mapping[str, Any]:
        """The properties of function ``name``'s parameters; empty when it is not offered."""
        if self._by_name is None:
            self._by_name = _index_schemas(self._tools)
        return self._by_name.get(name, {})


def _index_schemas(tools: Any) -> dict[str, Mapping[str, Any]]:
    schemas: dict[str, Mapping[str, Any]] = {}
    for tool in tools if isinstance(tools, list | tuple) else ():
        function = function_of(tool) if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        parameters = function.get("parameters")
        properties = parameters.get("properties") if isinstance(parameters, dict) else None
        schemas[function["name"]] = properties if isinstance(properties, dict) else {}
    return schemas


NO_SCHEMAS = Schemas()


def schemas_of(tools: Any) -> Schemas:
    return Schemas(tools)


_TEXT_TYPES = frozenset({"string", "str"})
_INTEGER_TYPES = frozenset({"integer", "int"})
_NUMBER_TYPES = frozenset({"number", "float"})


def typed_value(text: str, schema: Any) -> Any:
    """A value the model wrote as text, in the type its parameter's schema names.

    string: the text as written (an enum's value as written, or, padded with whitespace, the
    value it pads: XML markup allows blanks around a value); integer / number: the number it
    writes (else the text);
    boolean: true/false in any case (else the text); anything else (object, array, no schema):
    the JSON value when the text is JSON, else the text.
    """
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):  # ["integer", "null"]: the first non-null type
        kind = next((item for item in kind if item != "null"), None)
    stripped = text.strip()
    if kind in _TEXT_TYPES:
        options = schema.get("enum") if isinstance(schema, dict) else None
        if isinstance(options, list) and text not in options and stripped in options:
            return stripped
        return text
    if kind in _INTEGER_TYPES:
        if re.fullmatch(r"[+-]?\d{1,300}", stripped):
            return int(stripped)
        if re.fullmatch(r"[+-]?\d{1,300}\.0*", stripped):
            return int(stripped.split(".", 1)[0])
        return text
    if kind in _NUMBER_TYPES:
        try:
            number = float(stripped)
        except ValueError:
            return text
        if number != number or number in (float("inf"), float("-inf")):
            return text
        return int(stripped) if re.fullmatch(r"[+-]?\d{1,300}", stripped) else number
    if kind in ("boolean", "bool"):
        lowered = stripped.lower()
        return {"true": True, "false": False}.get(lowered, text)
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return text


def json_value_at(text: str, start: int) -> tuple[Any, int] | None:
    """The JSON value that starts at ``start`` (blanks skipped) and where it ends; None when
    there is none (cut off, or not JSON)."""
    start = skip_blank(text, start)
    try:
        return _JSON.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None


class Finder:
    """``text.find(marker, position)`` for positions that only grow, each marker's answer kept:
    a reader that looks for an end marker the text may not hold at all would otherwise scan the
    rest of the text once per call (quadratic over a text of many calls)."""

    __slots__ = ("_found", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._found: dict[str, int] = {}

    def find(self, marker: str, position: int) -> int:
        found = self._found.get(marker)
        if found is None or (0 <= found < position):
            found = self._text.find(marker, position)
            self._found[marker] = found
        return found


def declared_value(text: str, schema: Any, declared: str | None) -> Any:
    """A value written as text whose markup may declare its type (DSML's ``string="true|false"``,
    Kimi K3's ``type="number"``): ``declared`` is ``"string"``, ``"json"`` (not a string, no
    type named) or a JSON-schema type name; None when the markup declares nothing.

    The offered schema's type wins where it names one (a model's ``string="false"`` on a
    parameter the schema calls a string does not turn "42" into 42; a JSON string literal there
    reads as the string it writes); the declaration types the value where the schema names none.
    """
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind is not None:
        if declared not in (None, "string") and kind in _TEXT_TYPES:
            found = json_value_at(text, 0)
            if found is not None and isinstance(found[0], str) and not text[found[1] :].strip():
                return found[0]
        return typed_value(text, schema)
    if declared == "string" or declared in _TEXT_TYPES:
        return text
    if declared is None or declared == "json":
        return typed_value(text, None)
    return typed_value(text, {"type": declared})


def object_arguments(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DecodeError(f"arguments must be an object, got {type(value).__name__}")
    return value


def count(calls: list[Call], limits: Limits) -> None:
    if len(calls) > limits.max_calls:
        raise DecodeError(f"more than {limits.max_calls} calls")


@dataclass(frozen=True)
class Reading:
    """The calls read from a text, and where the call markup starts and ends in it."""

    calls: list[Call]
    start: int
    end: int


NativeReader = Callable[[str, int, Limits, Schemas], Reading]
# The decoder of a whole answer's text (scoring.decoding.decode_text), handed to the readers of
# markup that holds an answer of its own (Llama 4's call list reads as any answer does): it sits
# above the formats, which never import it.
TextDecoder = Callable[[str, Limits], list[Call]]
AnswerReader = Callable[[str, int, Limits, Schemas, TextDecoder], Reading]


def json_objects(text: str, start: int, limits: Limits, separators: str = ";,") -> tuple[list[Any], int]:
    """Consecutive JSON values from ``start``, separated by blanks or one of ``separators``
    (Llama's ``{...}; {...}``); stops at the first text that is no JSON value. Returns the values
    and where the last one ended."""
    values: list[Any] = []
    position = start
    end = start
    while True:
        found = json_value_at(text, position)
        if found is None:
            break
        value, end = found
        values.append(value)
        if len(values) > limits.max_calls:
            raise DecodeError(f"more than {limits.max_calls} calls")
        position = skip_blank(text, end)
        if position < len(text) and text[position] in separators:
            position += 1
    return values, end


def calls_of_objects(values: list[Any]) -> list[Call]:
    """Calls from JSON call objects (``name`` with ``arguments`` or ``parameters``, an object or
    a JSON string; OpenAI's ``{"function": {...}}`` too), a list of them counting as its items."""
    calls: list[Call] = []
    for value in values:
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict):
                raise DecodeError(f"a {type(item).__name__} is not a call")
            if isinstance(item.get("function"), dict):
                item = item["function"]
            name = item.get("name")
            if not isinstance(name, str):
                raise DecodeError("a call object without a string 'name'")
            raw = item.get("arguments", item.get("parameters"))
            if isinstance(raw, str):
                found = json_value_at(raw, 0)
                raw = found[0] if found else raw
            calls.append(Call(name, object_arguments(raw)))
    return calls


_REASONING_PAIRS = (("<think>", "</think>"), ("[THINK]", "[/THINK]"))


def drop_reasoning(text: str) -> str:
    """The text without its reasoning: ``<think>...</think>`` (also when the template prefilled
    the opening tag, so only the closing one is in the answer), Magistral's
    ``[THINK]...[/THINK]``; an unclosed reasoning block runs to the end of the text. Harmony's
    analysis channel is skipped by its reader.

    A block ends at the first closing tag after its opening one: a closing tag written later, in
    an argument value of the call after the reasoning (``{"text": "use </think>"}``), is that
    value's text, not the end of the reasoning."""
    for opener, closer in _REASONING_PAIRS:
        if closer not in text and opener not in text:
            continue
        close = text.find(closer)
        if close >= 0 and not 0 <= text.find(opener) < close:  # the opening tag was prefilled
            text = text[close + len(closer) :]
        kept: list[str] = []
        position = 0
        while True:
            opening = text.find(opener, position)
            if opening < 0:
                kept.append(text[position:])
                break
            kept.append(text[position:opening])
            close = text.find(closer, opening)
            if close < 0:
                break
            position = close + len(closer)
        text = "".join(kept)
    return text
