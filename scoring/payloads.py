"""One payload's calls: JSON-shaped data and python call syntax, the layer under the decoder.

:func:`scoring.decoding.decode` finds where the calls are (a whole text, blocks between
markers, a model family's markup) and hands each payload here: JSON objects or lists of calls
(``name``+``arguments``/``parameters``, ``function``+``parameters``, ``tool``+``args``, OpenAI
tool calls and whole assistant messages), and python call syntax read by :mod:`ast` and
:class:`~scoring.literals.LiteralReader` (never evaluated). :func:`guard_syntax` bounds the work
before any parser runs.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping
from itertools import accumulate
from typing import Any

from scoring.literals import LiteralReader
from scoring.model import Call, DecodeError, Limits


class MessageText(Exception):  # not a decode error: the payload is a message of text
    """The payload is an assistant message whose content is answer text: the decoder, above this
    layer, reads it as it reads any answer (markers, fences, reasoning), so it is handed back."""

    def __init__(self, content: str) -> None:
        super().__init__("an assistant message's text content")
        self.content = content


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


# One JSON value from a position in a text, (value, end): json's public reader, for the decoder's
# blocks (a value may end before the block's closing marker). A JSONDecodeError where none starts.
_JSON_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().raw_decode


def _parse_json(text: str, limits: Limits) -> Any:
    guard_syntax(text, limits)
    return _scan_json(text)


def _scan_json(text: str) -> Any:
    """The JSON value of ``text`` (which has passed :func:`guard_syntax`), or a DecodeError."""
    try:
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
                return Call(name, raw)
            return Call(name, _arguments(raw, limits, from_json))
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
        return Call(name, arguments)
    return None


def _json_payload_calls(payload: str, limits: Limits, guarded: bool = False) -> list[Call]:
    """The calls of a JSON text (every JSON output and Hermes block comes through here).
    ``guarded``: the payload is part of a text within the syntax guard's quick test, so it is too."""
    if not guarded:
        guard_syntax(payload, limits)
    return calls_from_objects(_scan_json(payload), limits, from_json=True)


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


def calls_from_objects(value: Any, limits: Limits, from_json: bool) -> list[Call]:
    """JSON-shaped data (parsed text, or structured OpenAI objects) -> calls. An assistant message
    whose content is text raises :class:`MessageText`."""
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
            return _calls_from_message(value, limits, from_json)
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


def _calls_from_message(message: Mapping[str, Any], limits: Limits, from_json: bool) -> list[Call]:
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
    raise MessageText(content)


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
    return python_calls_from_tree(text, limits)


_NO_CALL_SYNTAX = "no tool call found: no bracket in the text, so no call syntax"


def python_calls_from_tree(text: str, limits: Limits) -> list[Call]:
    """The reference reading of python-call text (``text`` has passed :func:`guard_syntax`):
    :func:`ast.parse`, then :class:`LiteralReader` on the tree."""
    if "(" not in text and "[" not in text and "{" not in text and "#" not in text and text.strip():
        # What this reader takes needs a bracket (a call, a list of calls, a call object) or is
        # no statement at all (blank, or comments): without one the parse can only fail or give
        # no call. Prose is such text, and ast.parse failing on it costs 20-30 us; refused first,
        # as guard_syntax refuses text over the caps.
        raise DecodeError(_NO_CALL_SYNTAX)
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
