"""The native tool-call formats of open model families, read into :class:`Call` lists.

Each family writes its calls between special markers of its own (see docs/miner.md for the
table). A reader here finds its family's markers in the text, reads every complete call, and
drops a call cut off at the end of the text (a parallel answer that ran out of tokens keeps its
complete calls). Values that a family writes as text (Qwen3-Coder's XML parameters, GLM's
``<arg_value>``, DeepSeek's DSML ``string="false"`` parameters) are typed by the offered
function's schema when one is given (:func:`typed_value`), else read as JSON when they are
JSON and kept as text otherwise.

JSON inside markers is read with the JSON scanner from its first character, so a marker that
appears inside a string value (``"Use <tool_call> tags"``) is part of the value, never the end
of the call. Nothing is evaluated; every reader is linear in the text and bounded by the
decoder's :class:`Limits`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scoring.model import Call, DecodeError, Limits, make_call

_JSON = json.JSONDecoder()
_BLANK = re.compile(r"\s*")


def _skip_blank(text: str, position: int) -> int:
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
        function = tool.get("function", tool) if isinstance(tool, dict) else None
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

    string: the text as written; integer / number: the number it writes (else the text);
    boolean: true/false in any case (else the text); anything else (object, array, no schema):
    the JSON value when the text is JSON, else the text.
    """
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):  # ["integer", "null"]: the first non-null type
        kind = next((item for item in kind if item != "null"), None)
    stripped = text.strip()
    if kind in _TEXT_TYPES:
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
    start = _skip_blank(text, start)
    try:
        return _JSON.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None


class _Finder:
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


def _object_arguments(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DecodeError(f"arguments must be an object, got {type(value).__name__}")
    return value


def _count(calls: list[Call], limits: Limits) -> None:
    if len(calls) > limits.max_calls:
        raise DecodeError(f"more than {limits.max_calls} calls")


@dataclass(frozen=True)
class Reading:
    """The calls read from a text, and where the call markup starts and ends in it."""

    calls: list[Call]
    start: int
    end: int


NativeReader = Callable[[str, int, Limits, Schemas], Reading]


# --- Qwen3-Coder / Qwen3.5 XML and GLM-4.5+ inside <tool_call> blocks ------------------------------

_XML_FUNCTION = re.compile(r"<function=([^>\n]{1,256})>")
_XML_PARAMETER = re.compile(r"<parameter=([^>\n]{1,256})>")
_GLM_NAME = re.compile(r"\s*([^\s<>{}\[\]()]{1,256})\s*(?=<arg_key>|</tool_call>|$)")


def _strip_one_newline(value: str) -> str:
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


def xml_block_calls(body: str, limits: Limits, schemas: Schemas) -> list[Call]:
    """Qwen3-Coder: ``<function=NAME><parameter=P>value</parameter>...</function>``, one or more.
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
        _count(calls, limits)
    return calls


_ARG_KEY = "<arg_key>"
_ARG_VALUE = "<arg_value>"


def glm_block_call(body: str, limits: Limits, schemas: Schemas) -> Call:
    """GLM-4.5 / 4.6 / 4.7: ``NAME<arg_key>K</arg_key><arg_value>V</arg_value>...``, newlines
    optional, values typed by the schema."""
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


# --- Llama 3.1-3.3 and Llama 4 ---------------------------------------------------------------------

_LLAMA_END = ("<|eom_id|>", "<|eot_id|>")


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
        position = _skip_blank(text, end)
        if position < len(text) and text[position] in separators:
            position += 1
    return values, end


def _calls_of_objects(values: list[Any]) -> list[Call]:
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
            calls.append(make_call(name, _object_arguments(raw)))
    return calls


def json_call_sequence(text: str, limits: Limits) -> list[Call] | None:
    """Llama 3's bare form for several calls, ``{"name": ...}; {"name": ...}``: the calls when
    the whole text is such a sequence, else None."""
    values, end = json_objects(text, 0, limits)
    if len(values) < 2 or text[end:].strip(" \t\n;"):
        return None
    try:
        return _calls_of_objects(values)
    except DecodeError:
        return None


def read_llama3(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    """``<|python_tag|>{"name": ..., "parameters": {...}}`` (``; `` between several calls)."""
    start = at + len("<|python_tag|>")
    values, end = json_objects(text, start, limits)
    if not values:
        raise DecodeError("no JSON call after <|python_tag|>")
    return Reading(_calls_of_objects(values), at, end)


def read_llama4(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    """``<|python_start|>[f(a=1), g(b="x")]<|python_end|>``: a python call list. The end marker
    may also sit inside a string value: the first end after which the list reads is the end."""
    from scoring.decoding import decode_text

    start = at + len("<|python_start|>")
    close = text.find("<|python_end|>", start)
    error = DecodeError("no complete call list after <|python_start|>")
    for _ in range(limits.max_calls):
        if close < 0:
            break
        try:
            return Reading(decode_text(text[start:close], limits), at, close + len("<|python_end|>"))
        except DecodeError as failed:
            error = failed
        close = text.find("<|python_end|>", close + 1)
    try:  # no end marker (the stop token was cut): the rest, if it reads
        return Reading(decode_text(text[start:], limits), at, len(text))
    except DecodeError:
        pass
    complete = _complete_python_calls(text[start:], limits)
    if complete:
        return Reading(complete, at, len(text))
    raise error


def _complete_python_calls(body: str, limits: Limits, tries: int = 8) -> list[Call]:
    """The complete calls of a python call list cut off mid-call: the list closed after each of
    its last few ``)`` in turn, from the end, until one reads (bounded: ``tries`` parses)."""
    from scoring.decoding import decode_text

    stripped = body.lstrip()
    if not stripped.startswith("["):
        return []
    position = len(body)
    for _ in range(tries):
        position = body.rfind(")", 0, position)
        if position < 0:
            break
        try:
            return decode_text(body[: position + 1] + "]", limits)
        except DecodeError:
            continue
    return []


# --- Mistral ---------------------------------------------------------------------------------------

_MISTRAL_NAME = re.compile(r"\s*([^\s\[\]{}]{1,256})\s*(?:\[CALL_ID\]\s*[^\s\[]{0,64}\s*)?\[ARGS\]")
_MISTRAL_CALLS = "[TOOL_CALLS]"


def read_mistral(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    """``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`` (v3) or, per call,
    ``[TOOL_CALLS]NAME[ARGS]{json}`` (v11+, optionally ``[CALL_ID]id`` before ``[ARGS]``; the
    next call's name may follow the previous arguments without a new ``[TOOL_CALLS]``)."""
    calls: list[Call] = []
    position = at + len(_MISTRAL_CALLS)
    end = position
    while True:
        named = _MISTRAL_NAME.match(text, position)
        found = json_value_at(text, named.end() if named else position)
        if found is None:
            break  # cut off, or no call at all
        if named:
            calls.append(make_call(named.group(1), _object_arguments(found[0])))
        else:
            calls.extend(_calls_of_objects([found[0]]))
        _count(calls, limits)
        end = found[1]
        position = _skip_blank(text, end)
        if text.startswith(_MISTRAL_CALLS, position):
            position += len(_MISTRAL_CALLS)
        elif _MISTRAL_NAME.match(text, position) is None:
            break
    return Reading(calls, at, end)


# --- DeepSeek V3 / V3.1 / V3.2+ (incl. DSML) --------------------------------------------------------

DS_CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
DS_CALL_BEGIN = "<｜tool▁call▁begin｜>"
DS_SEP = "<｜tool▁sep｜>"
DS_CALL_END = "<｜tool▁call▁end｜>"
DS_CALLS_END = "<｜tool▁calls▁end｜>"
_FENCED_JSON = re.compile(r"\s*```(?:json)?\s*")


def read_deepseek(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    """V3: ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{...}\\n```<｜tool▁call▁end｜>``;
    V3.1+: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>``."""
    calls: list[Call] = []
    finder = _Finder(text)
    end = at
    position = finder.find(DS_CALL_BEGIN, at)
    while position >= 0:
        head_start = position + len(DS_CALL_BEGIN)
        sep = finder.find(DS_SEP, head_start)
        if sep < 0:
            break  # cut off
        head = text[head_start:sep].strip()
        body = sep + len(DS_SEP)
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
        calls.append(make_call(name, _object_arguments(found[0])))
        _count(calls, limits)
        close = finder.find(DS_CALL_END, found[1])
        end = found[1] if close < 0 else close + len(DS_CALL_END)
        position = finder.find(DS_CALL_BEGIN, end)
    if calls:
        calls_end = finder.find(DS_CALLS_END, end)
        end = end if calls_end < 0 else calls_end + len(DS_CALLS_END)
    return Reading(calls, at, end)


DSML = "<｜DSML｜"
_DSML_INVOKE = re.compile(r"<｜DSML｜invoke\s+name=\"([^\"]{1,256})\"\s*>")
_DSML_PARAMETER = re.compile(
    r"<｜DSML｜parameter\s+name=\"([^\"]{1,256})\"(?:\s+string=\"(true|false)\")?\s*>"
)


def read_dsml(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    """V3.2+: ``<｜DSML｜invoke name="NAME">`` with ``<｜DSML｜parameter name="P" string="true|false">
    value</｜DSML｜parameter>``; ``string="false"`` values are JSON."""
    calls: list[Call] = []
    end = at
    while (invoke := _DSML_INVOKE.search(text, end)) is not None:
        close = text.find("</｜DSML｜invoke>", invoke.end())
        if close < 0:
            break  # cut off
        name = invoke.group(1)
        properties = schemas.get(name)
        inner = text[invoke.end() : close]
        arguments: dict[str, Any] = {}
        for parameter in _DSML_PARAMETER.finditer(inner):
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
        _count(calls, limits)
        end = close + len("</｜DSML｜invoke>")
    closing = text.find("</｜DSML｜function_calls>", end)
    if calls and closing >= 0 and not text[end:closing].strip():
        end = closing + len("</｜DSML｜function_calls>")
    return Reading(calls, at, end)


# --- Kimi K2 / K2.5 --------------------------------------------------------------------------------

KIMI_SECTION = "<|tool_calls_section_begin|>"
KIMI_CALL = "<|tool_call_begin|>"
KIMI_ARGUMENTS = "<|tool_call_argument_begin|>"
KIMI_CALL_END = "<|tool_call_end|>"
_KIMI_ID = re.compile(r"^(?:functions\.)?(.+?)(?::\d+)?$")


def read_kimi(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    """``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>``."""
    calls: list[Call] = []
    finder = _Finder(text)
    end = at
    position = finder.find(KIMI_CALL, at)
    while position >= 0:
        head_start = position + len(KIMI_CALL)
        arguments_at = finder.find(KIMI_ARGUMENTS, head_start)
        if arguments_at < 0:
            break
        match = _KIMI_ID.match(text[head_start:arguments_at].strip())
        found = json_value_at(text, arguments_at + len(KIMI_ARGUMENTS))
        if match is None or found is None:
            break  # cut off
        calls.append(make_call(match.group(1), _object_arguments(found[0])))
        _count(calls, limits)
        close = finder.find(KIMI_CALL_END, found[1])
        end = found[1] if close < 0 else close + len(KIMI_CALL_END)
        position = finder.find(KIMI_CALL, end)
    section_end = finder.find("<|tool_calls_section_end|>", end)
    if calls and section_end >= 0:
        end = section_end + len("<|tool_calls_section_end|>")
    return Reading(calls, at, end)


# --- gpt-oss (Harmony) -----------------------------------------------------------------------------

_HARMONY_MESSAGE = "<|message|>"
_HARMONY_ENDS = ("<|call|>", "<|end|>", "<|return|>")
_HARMONY_RECIPIENT = re.compile(r"\bto=(?:functions\.)?([^\s<]{1,256})")


def _harmony_end(finder: _Finder, start: int) -> int:
    """Where the Harmony message whose body starts at ``start`` ends (after its end marker), or -1."""
    ends = [(found, len(marker)) for marker in _HARMONY_ENDS if (found := finder.find(marker, start)) >= 0]
    if not ends:
        return -1
    found, length = min(ends)
    return found + length


def read_harmony(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    """Messages ``[<|start|>assistant][ to=functions.NAME]<|channel|>commentary[ to=functions.NAME]
    [<|constrain|>json]<|message|>{json}<|call|>``: a message addressed to a function is a call;
    analysis (reasoning) and final (the answer) messages are not."""
    calls: list[Call] = []
    position = at
    end = at
    finder = _Finder(text)
    while True:
        message = finder.find(_HARMONY_MESSAGE, position)
        if message < 0:
            break
        body_start = message + len(_HARMONY_MESSAGE)
        recipient = _HARMONY_RECIPIENT.search(text, position, message)
        if recipient is not None:
            found = json_value_at(text, body_start)
            if found is None:
                break  # cut off
            calls.append(make_call(recipient.group(1), _object_arguments(found[0])))
            _count(calls, limits)
            closed = _harmony_end(finder, found[1])
            end = found[1] if closed < 0 else closed
        else:
            closed = _harmony_end(finder, body_start)
            if closed < 0:
                break
            end = closed
        position = end
    return Reading(calls, at, end)


def harmony_final_text(text: str) -> str | None:
    """The text of a Harmony answer's final channel, or None when it has none."""
    final = text.rfind("<|channel|>final")
    if final < 0:
        return None
    message = text.find(_HARMONY_MESSAGE, final)
    if message < 0:
        return None
    body = message + len(_HARMONY_MESSAGE)
    ends = [found for marker in _HARMONY_ENDS if (found := text.find(marker, body)) >= 0]
    return text[body : min(ends)] if ends else text[body:]


# --- Gemma 4 ---------------------------------------------------------------------------------------

GEMMA_CALL = "<|tool_call>"
GEMMA_CALL_END = "<tool_call|>"
GEMMA_QUOTE = '<|"|>'
_GEMMA_HEAD = re.compile(r"\s*call:([^\s{]{1,256})\s*\{")
_GEMMA_KEY = re.compile(r"([{,]\s*)([A-Za-z_][\w.\-]{0,255})\s*:")
_GEMMA_LITERAL = re.compile(r"\s*(true|false|null|[+-]?\d[\d.eE+-]*)\s*")


def _quoted_key(match: re.Match[str]) -> str:
    return f'{match.group(1)}"{match.group(2)}":'


def gemma_arguments(body: str) -> dict[str, Any]:
    """``{key:value,...}`` with strings between ``<|"|>`` tokens, keys bare: made JSON, then read."""
    pieces = body.split(GEMMA_QUOTE)
    if len(pieces) % 2 == 0:
        raise DecodeError('an unclosed <|"|> string')
    # Outside the quotes: quote the bare keys. Inside: the string, escaped as JSON.
    converted = [
        json.dumps(piece) if index % 2 else _GEMMA_KEY.sub(_quoted_key, piece)
        for index, piece in enumerate(pieces)
    ]
    try:
        value = json.loads("".join(converted))
    except (ValueError, RecursionError) as error:
        raise DecodeError(f"Gemma call arguments are not readable: {error}") from None
    return _object_arguments(value)


def _gemma_call_end(finder: _Finder, start: int) -> int:
    """Where the ``<tool_call|>`` that closes a call starting at ``start`` is, skipping any that
    sit inside a ``<|"|>`` string; -1 when the call is cut off."""
    inside = False
    position = start
    while True:
        quote = finder.find(GEMMA_QUOTE, position)
        if inside:
            if quote < 0:
                return -1
            inside, position = False, quote + len(GEMMA_QUOTE)
            continue
        close = finder.find(GEMMA_CALL_END, position)
        if close < 0:
            return -1
        if 0 <= quote < close:
            inside, position = True, quote + len(GEMMA_QUOTE)
            continue
        return close


def read_gemma(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    """``<|tool_call>call:NAME{key:<|"|>text<|"|>,n:3}<tool_call|>``, one block per call."""
    calls: list[Call] = []
    end = at
    position = at
    finder = _Finder(text)
    while position >= 0:
        head = _GEMMA_HEAD.match(text, position + len(GEMMA_CALL))
        if head is None:
            if calls:
                break
            raise DecodeError("a Gemma tool call without call:NAME{...}")
        close = _gemma_call_end(finder, head.end())
        if close < 0:
            break  # cut off
        calls.append(make_call(head.group(1), gemma_arguments(text[head.end() - 1 : close].strip())))
        _count(calls, limits)
        end = close + len(GEMMA_CALL_END)
        position = finder.find(GEMMA_CALL, end)
    return Reading(calls, at, end)


# --- reasoning -------------------------------------------------------------------------------------

_REASONING_PAIRS = (("<think>", "</think>"), ("[THINK]", "[/THINK]"))


def drop_reasoning(text: str) -> str:
    """The text without its reasoning: ``<think>...</think>`` (also when the template prefilled
    the opening tag, so only the closing one is in the answer), Magistral's
    ``[THINK]...[/THINK]``; an unclosed reasoning block runs to the end of the text. Harmony's
    analysis channel is skipped by its reader."""
    for opener, closer in _REASONING_PAIRS:
        if closer not in text and opener not in text:
            continue
        close = text.rfind(closer)
        if close >= 0:
            opening = text.find(opener)
            before = text[:opening] if 0 <= opening < close else ""
            text = before + text[close + len(closer) :]
        else:
            text = text[: text.find(opener)]
    return text


# Markers that start a family's call markup, and their readers. The one found first in a text
# decides (a later one may sit inside a value).
NATIVE_MARKERS: tuple[tuple[str, NativeReader], ...] = (
    ("<|python_tag|>", read_llama3),
    ("<|python_start|>", read_llama4),
    ("[TOOL_CALLS]", read_mistral),
    (DS_CALLS_BEGIN, read_deepseek),
    (DS_CALL_BEGIN, read_deepseek),
    ("<｜DSML｜function_calls>", read_dsml),
    ("<｜DSML｜invoke", read_dsml),
    (KIMI_SECTION, read_kimi),
    (KIMI_CALL, read_kimi),
    ("<|channel|>", read_harmony),
    ("<|start|>assistant", read_harmony),
    (GEMMA_CALL, read_gemma),
)
# Markup that may hold no call at all: a Harmony answer whose messages are reasoning and a final
# answer. For every other family, markers without a complete call are a decode error.
NATIVE_MAY_HOLD_NO_CALL = frozenset({"<|channel|>", "<|start|>assistant"})
