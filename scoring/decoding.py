"""Model output -> list of :class:`Call`, for every output format the subnet accepts.

Accepted (see SCORING.md): OpenAI ``tool_calls`` (a list of tool-call dicts or a whole assistant
message, arguments as a JSON string or an object); the BFCL / BitAgent python-call list
``[f(a=1), g(b="x")]`` (also bare, in a markdown fence or inline backticks); JSON objects or lists
of them with ``name``+``arguments``, ``name``+``parameters``, ``function``+``parameters`` or
``tool``+``args`` (BusyBeaver, whose ``confidence`` and ``state_update`` are ignored); Hermes
``<tool_call>{...}</tool_call>`` blocks; CodeAct code (a ```` ```python ```` fence or
``<execute>`` block whose top-level statements are calls, ``x = f(...)`` and ``print(f(...))``
included; ``print(...)`` of anything but a call is not a call).

The format is sniffed from the first character so that the common case costs one parser run.
Work is bounded before any parser runs: the size cap, then a count of structural characters
outside string literals (which bounds the syntax tree) and the bracket nesting depth; the call
count is capped after parsing. Every failure is a :class:`DecodeError` with a reason.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping
from itertools import accumulate
from typing import Any

from scoring.literals import LiteralReader
from scoring.model import DEFAULT_LIMITS, Call, DecodeError, Limits, make_call
from scoring.native import (
    NATIVE_MARKERS,
    NATIVE_MAY_HOLD_NO_CALL,
    NO_SCHEMAS,
    NativeReader,
    Schemas,
    drop_reasoning,
    glm_block_call,
    is_glm_block,
    json_call_sequence,
    schemas_of,
    xml_block_calls,
)
from scoring.simple_calls import read_simple_calls

# String literals (single or double quoted), written so that a match starting at a quote always
# succeeds (it may stop at the end of the line or text): the scan stays linear on any input.
_STRING_LITERAL = re.compile(
    r"""'[^'\\\n]*+(?:\\[\s\S]?+[^'\\\n]*+)*+(?:'|$)|"[^"\\\n]*+(?:\\[\s\S]?+[^"\\\n]*+)*+(?:"|$)""",
    re.MULTILINE,
)
_DROP_STRUCTURAL = str.maketrans("", "", ",([{=:+-*/%.@<>&|^~;\n")
_NOT_BRACKET = re.compile(r"[^\[\](){}]+")
_BRACKET_DELTA = {"[": 1, "(": 1, "{": 1, "]": -1, ")": -1, "}": -1}

# Text that is probably JSON: an object, or a list that opens with an object, string or number or
# is empty. `[f(x=1)]` is python; JSON such as `[true]` is still tried when python fails.
_JSON_START = re.compile(r"\{|\[\s*[{\]\"\d-]")
# What _JSON_START accepts right after "[" without blanks (a decimal digit too: \d is any Unicode
# decimal digit, as str.isdecimal is). _payload_calls tests these characters itself and leaves only
# a blank after "[" to the pattern: a regular-expression call costs as much as reading a short call.
_JSON_AFTER_BRACKET = frozenset('{]"-')
# What may follow a fence's opening backticks before the code: blanks, then a language tag and its
# line end, or just a line end. It always matches (maybe empty).
_FENCE_HEADER = re.compile(r"[ \t]*(?:[A-Za-z][\w+.-]*[ \t]*\n|\n?)")

# JSON call shapes: (key holding the name, keys that may hold the arguments), tried in order.
_CALL_SHAPES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("name", ("arguments", "parameters", "args")),
    ("function", ("parameters", "arguments", "args")),
    ("tool", ("args", "arguments", "parameters")),
)
_MESSAGE_KEYS = frozenset({"tool_calls", "function_call", "content", "role"})


def guard_syntax(text: str, limits: Limits) -> None:
    """Refuse text whose syntax tree would be too large or too deep, in time linear in its length
    and without running a parser. Brackets inside string literals are not counted."""
    if (
        len(text) <= limits.max_items
        and text.count("[") + text.count("(") + text.count("{") <= limits.max_depth
    ):
        return  # the common case: too short for too many items, too few brackets to nest too deep
    quotes = text.count("'") + text.count('"')
    if quotes > 4 * limits.max_items:  # bounds the string scan below; no real call needs as many
        raise DecodeError(f"more than {4 * limits.max_items} quote characters")
    structure, string_count = _STRING_LITERAL.subn("", text) if quotes else (text, 0)
    items = string_count + len(structure) - len(structure.translate(_DROP_STRUCTURAL))
    if items > limits.max_items:
        raise DecodeError(f"more than {limits.max_items} syntax items (structural characters and strings)")
    openers = structure.count("[") + structure.count("(") + structure.count("{")
    if openers > limits.max_depth:
        brackets = _NOT_BRACKET.sub("", structure)
        if max(accumulate(map(_BRACKET_DELTA.__getitem__, brackets)), default=0) > limits.max_depth:
            raise DecodeError(f"brackets nested deeper than {limits.max_depth}")


# json.loads is this scanner behind two layers of Python (BOM check, whitespace skipping, extra
# data check); calling it directly saves them on every JSON output and argument string.
_JSON_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _parse_json(text: str, limits: Limits) -> Any:
    guard_syntax(text, limits)
    return _scan_json(text)


def _scan_json(text: str) -> Any:
    """The JSON value of ``text`` (which has passed :func:`guard_syntax`), or a DecodeError."""
    try:
        try:
            value, end = _JSON_SCAN(text, 0)
        except StopIteration:
            end = -1
        if end == len(text):
            return value
        # Not one JSON value from the first character to the last (leading or trailing blanks,
        # a BOM, extra data, or no JSON at all): json.loads gives the answer or the error.
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise DecodeError(f"invalid JSON: {error}") from None


def _plain(value: Any, depth: int, limits: Limits) -> Any:
    """Check that an argument value handed over as Python objects is JSON-like and bounded;
    tuples become lists."""
    if depth > limits.max_depth:
        raise DecodeError(f"arguments nested deeper than {limits.max_depth}")
    if isinstance(value, str | bool | int | float) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_plain(item, depth + 1, limits) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item, depth + 1, limits) for key, item in value.items()}
    raise DecodeError(f"argument values of type {type(value).__name__} are not supported")


def _arguments(raw: Any, limits: Limits, from_json: bool) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        raw = _parse_json(raw, limits)
        from_json = True
    if not isinstance(raw, dict):
        raise DecodeError(f"arguments must be an object, got {type(raw).__name__}")
    if from_json:  # json.loads made it: string keys, plain values
        return raw
    if not all(isinstance(key, str) for key in raw):
        raise DecodeError("argument names must be strings")
    return _plain(raw, 1, limits)


def _call_from_mapping(item: Mapping[str, Any], limits: Limits, from_json: bool) -> Call:
    function = item.get("function")
    if isinstance(function, dict):  # an OpenAI tool call: {"type": "function", "function": {...}}
        item = function
    for name_key, argument_keys in _CALL_SHAPES:
        if name_key in item:
            name = item[name_key]
            if not isinstance(name, str):
                raise DecodeError(f"the {name_key!r} of a call must be a string")
            raw = None
            for key in argument_keys:
                if key in item:
                    raw = item[key]
                    break
            if from_json and type(raw) is dict:  # what _arguments would give, without the call
                return make_call(name, raw)
            return make_call(name, _arguments(raw, limits, from_json))
    raise DecodeError("object is not a call: no 'name', 'function' or 'tool' key")


def _json_call(item: dict[str, Any]) -> Call | None:
    """A parsed JSON call object in one of the two common shapes, ``name`` + ``arguments`` and
    ``tool`` + ``args`` with an object as arguments: the call that :func:`_call_from_mapping`
    makes of it, without its search through the shapes. None for anything else."""
    if "function" in item:
        return None
    if "name" in item:
        name, arguments = item["name"], item.get("arguments")
    elif "tool" in item:
        name, arguments = item["tool"], item.get("args")
    else:
        return None
    if type(name) is str and type(arguments) is dict:
        return make_call(name, arguments)
    return None


def _json_payload_calls(payload: str, limits: Limits, guarded: bool = False) -> list[Call]:
    """``calls_from_objects(_parse_json(payload, limits), limits, from_json=True)``, the same calls
    and the same errors, with the common case inline: a short text (the syntax guard's quick test),
    one JSON value, a call object or a list of them in the shapes :func:`_json_call` reads. Every
    JSON output and Hermes block comes through here: the layers saved cost as much as the scan.
    ``guarded``: the payload is part of a text within the syntax guard's quick test, so it is too."""
    if not guarded and (
        len(payload) > limits.max_items
        or payload.count("[") + payload.count("(") + payload.count("{") > limits.max_depth
    ):
        guard_syntax(payload, limits)
    try:
        value, end = _JSON_SCAN(payload, 0)
    except StopIteration:
        end = -1
    except (ValueError, RecursionError) as error:
        raise DecodeError(f"invalid JSON: {error}") from None
    if end != len(payload):
        value = _scan_json(payload)
    if type(value) is list:
        if len(value) <= limits.max_calls:
            calls: list[Call] = []
            for item in value:  # _calls_from_list and _json_call, inline
                if type(item) is not dict or "function" in item:
                    break
                if "name" in item:
                    name, arguments = item["name"], item.get("arguments")
                elif "tool" in item:
                    name, arguments = item["tool"], item.get("args")
                else:
                    break
                if type(name) is not str or type(arguments) is not dict:
                    break
                calls.append(make_call(name, arguments))
            else:
                return calls
    elif type(value) is dict and limits.max_calls >= 1:
        call = _json_call(value)
        if call is not None:
            return [call]
    return calls_from_objects(value, limits, from_json=True)


def _openai_tool_calls(output: list[Any], limits: Limits) -> list[Call] | None:
    """OpenAI ``tool_calls`` in their usual form, ``{"function": {"name": str, "arguments": str}}``
    with a short JSON object as arguments: the calls that :func:`calls_from_objects` makes of
    them. None (nothing decided, no error) for anything else, which takes the general path."""
    if len(output) > limits.max_calls:
        return None
    max_items, max_depth = limits.max_items, limits.max_depth
    calls: list[Call] = []
    size = 0
    for item in output:
        if type(item) is not dict:
            return None
        function = item.get("function")
        if type(function) is not dict:
            return None
        name = function.get("name")
        raw = function.get("arguments")
        if type(name) is not str or type(raw) is not str or not raw or raw[0] != "{":
            return None
        # Within the syntax guard's quick test, so no argument string is over the size cap.
        if len(raw) > max_items or raw.count("[") + raw.count("(") + raw.count("{") > max_depth:
            return None
        try:
            arguments, end = _JSON_SCAN(raw, 0)
        except (StopIteration, ValueError, RecursionError):
            return None
        if end != len(raw) or type(arguments) is not dict:
            return None
        calls.append(make_call(name, arguments))
        size += len(raw)
    if size > limits.max_bytes:  # the general path says so
        return None
    return calls


def _calls_from_list(value: list[Any], limits: Limits, from_json: bool) -> list[Call] | None:
    """A list of non-empty call dicts, the common case of :func:`calls_from_objects`, without its
    copies and type tests; None (nothing decided) at the first item that is no such dict."""
    calls: list[Call] = []
    for item in value:
        if type(item) is not dict or not item:
            return None
        call = _json_call(item) if from_json else None
        calls.append(call if call is not None else _call_from_mapping(item, limits, from_json))
    return calls


def calls_from_objects(
    value: Any, limits: Limits, from_json: bool, schemas: Schemas = NO_SCHEMAS
) -> list[Call]:
    """JSON-shaped data (parsed text, or structured OpenAI objects) -> calls. ``schemas`` type the
    values of native formats that write them as text, in a message's text content."""
    if type(value) is list and len(value) <= limits.max_calls:
        listed = _calls_from_list(value, limits, from_json)
        if listed is not None:
            return listed
    elif from_json and type(value) is dict and limits.max_calls >= 1:
        call = _json_call(value)  # not a message: it has a "name" or a "tool"
        if call is not None:
            return [call]
    if isinstance(value, dict):
        if not _MESSAGE_KEYS.isdisjoint(value) and "name" not in value and "tool" not in value:
            return _calls_from_message(value, limits, from_json, schemas)
        items: list[Any] = [value]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise DecodeError(f"a {type(value).__name__} is not a tool call")
    if len(items) > limits.max_calls:
        raise DecodeError(f"more than {limits.max_calls} calls")
    calls: list[Call] = []
    for item in items:
        if isinstance(item, Call):
            calls.append(item)
        elif isinstance(item, dict):
            if item:  # BFCL counts an empty object as no call at all
                calls.append(_call_from_mapping(item, limits, from_json))
        else:
            raise DecodeError(f"a {type(item).__name__} in a list of calls is not a call")
    return calls


def _calls_from_message(
    message: Mapping[str, Any], limits: Limits, from_json: bool, schemas: Schemas
) -> list[Call]:
    tool_calls = message.get("tool_calls")
    if tool_calls:
        return calls_from_objects(tool_calls, limits, from_json)
    function_call = message.get("function_call")
    if isinstance(function_call, dict):
        return [_call_from_mapping(function_call, limits, from_json)]
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    if content is None:
        return []
    if not isinstance(content, str):
        raise DecodeError("message content must be a string or a list of parts")
    return decode_text(content, limits, schemas)


# Python statements that are calls: `f(a=1)`, `[f(a=1), g()]`, `f(), g()`, `x = f()`, `print(f())`.
def _expression_calls(node: ast.expr, reader: LiteralReader) -> list[Call]:
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "print" and node.args and not node.keywords:
            # CodeAct prints results: print(f(x=1)) is the call f; print(result) is no call at all.
            return [reader.call(arg) for arg in node.args if isinstance(arg, ast.Call)]
        return [reader.call(node)]
    if isinstance(node, ast.List | ast.Tuple):
        if all(isinstance(element, ast.Call) for element in node.elts):
            return [reader.call(element) for element in node.elts if isinstance(element, ast.Call)]
        return calls_from_objects(reader.value(node, 0), reader.limits, from_json=False)
    if isinstance(node, ast.Dict):  # a python-literal rendering of a JSON call object
        return calls_from_objects(reader.value(node, 0), reader.limits, from_json=False)
    raise DecodeError(f"{type(node).__name__} is not a call")


def _statement_calls(statement: ast.stmt, reader: LiteralReader) -> list[Call]:
    if isinstance(statement, ast.Expr):
        return _expression_calls(statement.value, reader)
    if isinstance(statement, ast.Assign | ast.AnnAssign) and isinstance(statement.value, ast.Call):
        return [reader.call(statement.value)]
    raise DecodeError(f"a {type(statement).__name__} statement is not a call")


def _python_calls(text: str, limits: Limits, guarded: bool = False) -> list[Call]:
    if not guarded:
        guard_syntax(text, limits)
    calls = read_simple_calls(text, limits.max_depth)  # the common shapes, without a syntax tree
    if calls is None:
        calls = python_calls_from_tree(text, limits)
    return calls


def python_calls_from_tree(text: str, limits: Limits) -> list[Call]:
    """The reference reading of python-call text (``text`` has passed :func:`guard_syntax`):
    :func:`ast.parse`, then :class:`LiteralReader` on the tree."""
    try:
        tree = ast.parse(text, mode="exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as error:
        raise DecodeError(f"not python call syntax: {type(error).__name__}: {error}") from None
    reader = LiteralReader(limits)
    calls: list[Call] = []
    for statement in tree.body:
        calls.extend(_statement_calls(statement, reader))
    return calls


def _payload_calls(payload: str, limits: Limits, guarded: bool = False) -> list[Call]:
    """One block's text: JSON when it looks like JSON (_JSON_START), else python call syntax.
    ``guarded``: the text is part of a text within the syntax guard's quick test, so it is too."""
    payload = payload.strip()
    if not payload:
        return []
    first, second = payload[0], payload[1:2]
    if first == "{" or (
        first == "["
        and (
            second in _JSON_AFTER_BRACKET
            or second.isdecimal()
            or (second.isspace() and _JSON_START.match(payload) is not None)
        )
    ):
        try:
            return _json_payload_calls(payload, limits, guarded)
        except DecodeError:
            pass
    try:
        return _python_calls(payload, limits, guarded)
    except DecodeError as python_error:
        if payload[0] != "[" or _JSON_START.match(payload):
            raise
        try:  # JSON that does not open like JSON, e.g. [true]: not a call either, but say why
            return calls_from_objects(_parse_json(payload, limits), limits, from_json=True)
        except DecodeError:
            raise python_error from None


def _blocks(
    opener: str, closer: str, header: re.Pattern[str] | None = None
) -> Callable[[str, Limits], list[Call]]:
    def decode_blocks(text: str, limits: Limits) -> list[Call]:
        r"""The calls in the texts between each ``opener`` (and the ``header`` match after it) and
        the next ``closer`` or the end of the text: what the lazy pattern ``opener header (.*?)
        (?:closer|\Z)`` (DOTALL) finds, found with str.find (a lazy pattern tries the closer at
        every character)."""
        # All blocks guarded together: many small blocks cost as much as one big one. A text within
        # the guard's quick test (short, few brackets) needs no guard, and nor do its blocks.
        guarded = (
            len(text) <= limits.max_items
            and text.count("[") + text.count("(") + text.count("{") <= limits.max_depth
        )
        if not guarded:
            guard_syntax(text, limits)
        calls: list[Call] = []
        count = 0
        start = text.find(opener)
        while start >= 0:
            if count == limits.max_calls:
                raise DecodeError(f"more than {limits.max_calls} blocks")
            count += 1
            body = start + len(opener)
            if header is not None:
                if text.startswith("python\n", body):  # the common fence header, without the pattern
                    body += 7
                else:
                    match = header.match(text, body)
                    assert match is not None  # the header pattern matches the empty string
                    body = match.end()
            end = text.find(closer, body)
            if end < 0:
                calls.extend(_payload_calls(text[body:], limits, guarded))
                break
            calls.extend(_payload_calls(text[body:end], limits, guarded))
            start = text.find(opener, end + len(closer))
        return calls

    return decode_blocks


_FENCED_BLOCKS = _blocks("```", "```", _FENCE_HEADER)
_EXECUTE_BLOCKS = _blocks("<execute>", "</execute>")

_TOOL_CALL = "<tool_call>"
_TOOL_CALL_END = "</tool_call>"


def _tool_call_blocks(text: str, limits: Limits, schemas: Schemas) -> list[Call]:
    """``<tool_call>...</tool_call>`` blocks: Hermes / Qwen3 JSON (or python) calls, Qwen3-Coder's
    ``<function=NAME>`` XML, GLM's ``NAME<arg_key>..`` pairs. A JSON payload is read whole from
    its first character, so a ``</tool_call>`` inside one of its strings is part of a value. A
    last block without its closing tag that does not read (cut off) is dropped."""
    calls: list[Call] = []
    count = 0
    cut_off: DecodeError | None = None
    start = text.find(_TOOL_CALL)
    while start >= 0:
        if count == limits.max_calls:
            raise DecodeError(f"more than {limits.max_calls} blocks")
        count += 1
        body = start + len(_TOOL_CALL)
        first = len(text) - len(text[body:].lstrip())
        close = -1
        if text[first : first + 1] in ("{", "["):
            try:
                value, value_end = _JSON_SCAN(text, first)
            except (StopIteration, ValueError, RecursionError):
                value_end = -1
            if value_end >= 0:
                close = text.find(_TOOL_CALL_END, value_end)
                trailing = text[value_end : close if close >= 0 else len(text)]
                if not trailing or trailing.isspace():
                    payload = text[first:value_end]
                    if (
                        len(payload) > limits.max_items
                        or payload.count("[") + payload.count("{") > limits.max_depth
                    ):
                        guard_syntax(payload, limits)
                    call = _json_call(value) if type(value) is dict else None
                    if call is not None:
                        calls.append(call)
                    else:
                        calls.extend(calls_from_objects(value, limits, from_json=True))
                    if close < 0:
                        break
                    start = text.find(_TOOL_CALL, close + len(_TOOL_CALL_END))
                    continue
        close = text.find(_TOOL_CALL_END, body)
        block = text[body:] if close < 0 else text[body:close]
        try:
            calls.extend(_block_calls(block, limits, schemas, closed=close >= 0))
        except DecodeError as error:
            if close >= 0:
                raise
            cut_off = error  # the last block, cut off before its end: the complete calls before it stand
        if close < 0:
            break
        start = text.find(_TOOL_CALL, close + len(_TOOL_CALL_END))
    if cut_off is not None and not calls:
        raise cut_off  # nothing complete at all: not a call, as before
    return calls


def _block_calls(block: str, limits: Limits, schemas: Schemas, *, closed: bool) -> list[Call]:
    stripped = block.lstrip()
    if stripped.startswith("<function="):
        return xml_block_calls(block, limits, schemas)
    # A bare name is a GLM call without arguments only in a closed block: "<tool_call> world" in
    # prose is no call.
    if "<arg_key>" in block or (closed and is_glm_block(block)):
        return [glm_block_call(block, limits, schemas)]
    return _payload_calls(block, limits)


def _native(marker: str, reader: NativeReader) -> Callable[[str, int, Limits, Schemas], list[Call]]:
    def read(text: str, at: int, limits: Limits, schemas: Schemas) -> list[Call]:
        calls = reader(text, at, limits, schemas).calls
        if not calls and marker not in NATIVE_MAY_HOLD_NO_CALL:
            raise DecodeError(f"no complete tool call after {marker}")
        return calls

    return read


EmbeddedReader = Callable[[str, int, Limits, Schemas], list[Call]]

# Markers of formats that may sit inside prose, with their readers (from the marker's position).
_EMBEDDED: tuple[tuple[str, EmbeddedReader], ...] = (
    (_TOOL_CALL, lambda text, at, limits, schemas: _tool_call_blocks(text, limits, schemas)),
    ("```", lambda text, at, limits, schemas: _FENCED_BLOCKS(text, limits)),
    ("<execute>", lambda text, at, limits, schemas: _EXECUTE_BLOCKS(text, limits)),
)
_NATIVE: tuple[tuple[str, EmbeddedReader], ...] = tuple(
    (marker, _native(marker, reader)) for marker, reader in NATIVE_MARKERS
)


def _has_native_marker(text: str) -> bool:
    """Whether the text may hold a native family's markers: every one opens with one of these."""
    return "<|" in text or "<\uff5c" in text or "[TOOL_CALLS]" in text


def _first_marker(text: str) -> tuple[int, str, EmbeddedReader] | None:
    """The call marker that comes first in the text: its position, itself and its reader."""
    found: tuple[int, str, EmbeddedReader] | None = None
    markers = _EMBEDDED + _NATIVE if _has_native_marker(text) else _EMBEDDED
    for marker, reader in markers:
        position = text.find(marker, 0, len(text) if found is None else found[0])
        if position >= 0 and (found is None or position < found[0]):
            found = (position, marker, reader)
    return found


_CLOSERS = {_TOOL_CALL: _TOOL_CALL_END, "```": "```", "<execute>": "</execute>"}


def markup_span(text: str, limits: Limits = DEFAULT_LIMITS) -> tuple[int, int] | None:
    """Where the call markup of a text starts and ends (the text around it is the answer's
    words), or None when it holds no marker. For the miner's answers, not for scoring."""
    found = _first_marker(text)
    if found is None:
        return None
    start, marker, _ = found
    closer = _CLOSERS.get(marker)
    if closer is not None:
        last = text.rfind(closer)
        return start, (len(text) if last <= start else last + len(closer))
    try:
        end = dict(NATIVE_MARKERS)[marker](text, start, limits, NO_SCHEMAS).end
    except DecodeError:
        end = len(text)
    return start, max(end, start)


def _embedded_calls(
    text: str, limits: Limits, first_error: DecodeError | None, schemas: Schemas = NO_SCHEMAS
) -> list[Call]:
    """The marker that comes first in the text decides the format (a later one may sit in a string)."""
    found = _first_marker(text)
    if found is None:
        raise first_error or DecodeError("no tool call found")
    position, _, reader = found
    return reader(text, position, limits, schemas)


_NO_CALL_SYNTAX = "no tool call found: no bracket in the text, so no call syntax"


def _whole_then_embedded(text: str, limits: Limits, schemas: Schemas = NO_SCHEMAS) -> list[Call]:
    if "(" not in text and "[" not in text and "{" not in text and "#" not in text:
        # Prose: with no bracket, JSON is out and python syntax can hold no call, no list of call
        # objects and no empty statement list (that takes a comment), so the parsers would only
        # fail (costly: ast.parse and an exception); only an embedded block may still hold calls.
        # The syntax guard still runs first, so a text over its caps reports them as before.
        try:
            guard_syntax(text, limits)
        except DecodeError as error:
            return _embedded_calls(text, limits, error, schemas)
        return _embedded_calls(text, limits, DecodeError(_NO_CALL_SYNTAX), schemas)
    try:
        return _payload_calls(text, limits)
    except DecodeError as error:
        return _embedded_calls(text, limits, error, schemas)


def _bracketed(text: str, limits: Limits, schemas: Schemas = NO_SCHEMAS) -> list[Call]:
    """Text that opens with a bracket: what :func:`_whole_then_embedded` does with it, without
    looking for brackets in it first."""
    if text.startswith("[TOOL_CALLS]"):
        return _embedded_calls(text, limits, None, schemas)
    try:
        return _payload_calls(text, limits)
    except DecodeError as error:
        if text[0] == "{" and ";" in text:  # Llama 3: {"name": ...}; {"name": ...}
            sequence = json_call_sequence(text, limits)
            if sequence is not None:
                return sequence
        return _embedded_calls(text, limits, error, schemas)


def _embedded_only(text: str, limits: Limits, schemas: Schemas = NO_SCHEMAS) -> list[Call]:
    # A marker at the start comes first: no need to look for the others.
    if text.startswith(_TOOL_CALL):
        return _tool_call_blocks(text, limits, schemas)
    if text.startswith("<execute>"):
        return _EXECUTE_BLOCKS(text, limits)
    return _embedded_calls(text, limits, None, schemas)


def _fenced(text: str, limits: Limits, schemas: Schemas = NO_SCHEMAS) -> list[Call]:
    if text.startswith("```"):
        return _FENCED_BLOCKS(text, limits)
    try:  # `inline code`
        return _payload_calls(text.strip("`"), limits)
    except DecodeError as error:
        return _embedded_calls(text, limits, error, schemas)


# The first non-blank character picks the strategy; anything else is tried as python call syntax.
_BY_FIRST_CHAR: dict[str, Callable[[str, Limits, Schemas], list[Call]]] = {
    "<": _embedded_only,
    "`": _fenced,
    "[": _bracketed,
    "{": _bracketed,
}


_NO_REASONING_FIRST = frozenset("{[`")


def _utf8_size_over(text: str, cap: int) -> bool:
    if len(text) > cap:
        return True
    return len(text) * 4 > cap and len(text.encode("utf-8", "surrogatepass")) > cap


def decode_text(text: str, limits: Limits = DEFAULT_LIMITS, schemas: Schemas = NO_SCHEMAS) -> list[Call]:
    """Decode a model's text output; an empty output is an empty list of calls. Reasoning
    (``<think>``, ``[THINK]``) is dropped first; ``schemas`` type the values that native formats
    write as text (see :mod:`scoring.native`)."""
    if len(text) * 4 > limits.max_bytes and _utf8_size_over(text, limits.max_bytes):
        raise DecodeError(f"output larger than {limits.max_bytes} bytes")
    body = text.strip()
    if not body:
        return []
    # Reasoning comes first (or its closing tag does, the opening one prefilled): an answer that
    # opens with JSON, a list or a fence has none, bar Magistral's [THINK].
    if (body[0] not in _NO_REASONING_FIRST or body.startswith("[THINK]")) and (
        "think>" in body or "THINK]" in body
    ):
        body = drop_reasoning(body).strip()
        if not body:
            return []
    calls = _BY_FIRST_CHAR.get(body[0], _whole_then_embedded)(body, limits, schemas)
    if len(calls) > limits.max_calls:
        raise DecodeError(f"more than {limits.max_calls} calls")
    return calls


def _size_of_structured(output: Any) -> int:
    """Bytes of the JSON argument strings inside structured tool calls (their only unbounded part)."""
    items = output.get("tool_calls") or [] if isinstance(output, dict) else output
    total = 0
    for item in items if isinstance(items, list | tuple) else []:
        function = item.get("function", item) if isinstance(item, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            total += len(function["arguments"])
    return total


def decode(output: Any, limits: Limits = DEFAULT_LIMITS, tools: Any = None) -> list[Call]:
    """Decode model output into calls.

    ``output`` is the model's text, a list of OpenAI tool-call dicts, an OpenAI assistant message
    dict, or an already decoded list of :class:`Call` (returned as is). Raises :class:`DecodeError`
    (and nothing else) when the output is not a call in any supported format or over a limit.
    ``tools`` (OpenAI tools or BFCL functions), when given, type the argument values that some
    model families write as text (Qwen3-Coder's XML, GLM, DeepSeek's DSML): ``"3"`` for an integer
    parameter is 3. Without them such values are read as JSON when they are JSON.
    """
    schemas = schemas_of(tools) if tools else NO_SCHEMAS
    if isinstance(output, str):
        return decode_text(output, limits, schemas)
    if (
        isinstance(output, list)
        and (not output or isinstance(output[0], Call))  # skips the generator for tool-call dicts
        and all(isinstance(item, Call) for item in output)
    ):
        return list(output)
    if not isinstance(output, dict | list | tuple):
        raise DecodeError(f"cannot decode output of type {type(output).__name__}")
    if type(output) is list:
        calls = _openai_tool_calls(output, limits)
        if calls is not None:
            return calls
    try:
        if _size_of_structured(output) > limits.max_bytes:
            raise DecodeError(f"tool-call arguments larger than {limits.max_bytes} bytes")
        return calls_from_objects(output, limits, from_json=False, schemas=schemas)
    except RecursionError:
        raise DecodeError("structure nested too deeply") from None
