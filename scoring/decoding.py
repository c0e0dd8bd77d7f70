"""Model output -> list of :class:`Call`, for every output format the subnet accepts.

Accepted (see docs/scoring.md): OpenAI ``tool_calls`` (a list of tool-call dicts or a whole assistant
message, arguments as a JSON string or an object); the BFCL / BitAgent python-call list
``[f(a=1), g(b="x")]`` (also bare, in a markdown fence or inline backticks); JSON objects or lists
of them with ``name``+``arguments``, ``name``+``parameters``, ``function``+``parameters`` or
``tool``+``args`` (BusyBeaver, whose ``confidence`` and ``state_update`` are ignored); Hermes
``<tool_call>{...}</tool_call>`` blocks; CodeAct code (a ```` ```python ```` fence or
``<execute>`` block whose top-level statements are calls, ``x = f(...)`` and ``print(f(...))``
included; ``print(...)`` of anything but a call is not a call).

This module finds where the calls are (the whole text, blocks between markers, a model family's
markup: :mod:`scoring.native`); :mod:`scoring.payloads` reads each payload (JSON-shaped data,
python call syntax). The format is sniffed from the first character so that the common case
costs one parser run.
Work is bounded before any parser runs: the size cap, then a count of structural characters
outside string literals (which bounds the syntax tree) and the bracket nesting depth; the call
count is capped after parsing. Every failure is a :class:`DecodeError` with a reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from scoring.formats import markers
from scoring.formats.glm import glm_call_at
from scoring.formats.qwen3_coder import xml_calls_at
from scoring.formats.reading import Finder
from scoring.model import DEFAULT_LIMITS, Call, DecodeError, Limits
from scoring.native import (
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
from scoring.payloads import (
    _JSON_SCAN,
    MessageText,
    _json_call,
    guard_syntax,
)
from scoring.payloads import _payload_calls as _read_payload
from scoring.payloads import calls_from_objects as _read_objects

# What may follow a fence's opening backticks before the code: blanks, then a language tag and its
# line end, or just a line end. It always matches (maybe empty).
_FENCE_HEADER = re.compile(r"[ \t]*(?:[A-Za-z][\w+.-]*[ \t]*\n|\n?)")


def _answer_text(text: str, limits: Limits) -> list[Call]:
    """Answer text inside markup (Llama 4's call list): read as any answer is."""
    return decode_text(text, limits)


# Markers that start a family's call markup, and their readers (from the format modules, in the
# registry's order). The one found first in a text decides (a later one may sit inside a value).
NATIVE_MARKERS: tuple[tuple[str, NativeReader], ...] = tuple(
    (marker.text, marker.reader_with(_answer_text)) for marker in markers()
)
# Markup that may hold no call at all: a Harmony answer whose messages are reasoning and a final
# answer. For every other family, markers without a complete call are a decode error.
NATIVE_MAY_HOLD_NO_CALL = frozenset(marker.text for marker in markers() if marker.may_hold_no_call)


# A payload (JSON-shaped data, python call syntax) may be a whole assistant message whose content is
# answer text; the payload readers sit below this module and hand that text back (MessageText) to be
# read here, as any answer is.
def _payload_calls(payload: str, limits: Limits, guarded: bool = False) -> list[Call]:
    try:
        return _read_payload(payload, limits, guarded)
    except MessageText as message:
        return decode_text(message.content, limits)


def calls_from_objects(
    value: Any, limits: Limits, *, from_json: bool, schemas: Schemas = NO_SCHEMAS
) -> list[Call]:
    try:
        return _read_objects(value, limits, from_json=from_json)
    except MessageText as message:
        return decode_text(message.content, limits, schemas)


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
        calls.append(Call(name, arguments))
        size += len(raw)
    if size > limits.max_bytes:  # the general path says so
        return None
    return calls


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
    finder: Finder | None = None
    end = 0
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
        # Qwen3-Coder's XML and GLM's pairs are read from the whole text, by their own structure: a
        # value may hold "</tool_call>" as text, and the block ends where the call does.
        structured = text.startswith("<function=", first) or "<arg_key>" in block
        try:
            if text.startswith("<function=", first):
                finder = finder or Finder(text)
                read, end = xml_calls_at(text, first, finder, limits, schemas)
                calls.extend(read)
            elif "<arg_key>" in block:
                finder = finder or Finder(text)
                call, end = glm_call_at(text, body, finder, limits, schemas)
                calls.append(call)
            else:
                calls.extend(_block_calls(block, limits, schemas, closed=close >= 0))
        except DecodeError as error:
            if close >= 0:
                raise
            cut_off = error  # the last block, cut off before its end: the complete calls before it stand
        if structured:
            start = text.find(_TOOL_CALL, max(end, body)) if close >= 0 else -1
            continue
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


def _bare_functions(text: str, at: int, limits: Limits, schemas: Schemas) -> list[Call]:
    """Qwen3-Coder's ``<function=NAME>...</function>`` written without its ``<tool_call>`` tags
    (the engines read it so too)."""
    calls = xml_calls_at(text, at, Finder(text), limits, schemas)[0]
    if not calls:
        raise DecodeError("no complete tool call after <function=")
    return calls


# Markers of formats that may sit inside prose, with their readers (from the marker's position).
_EMBEDDED: tuple[tuple[str, EmbeddedReader], ...] = (
    (_TOOL_CALL, lambda text, at, limits, schemas: _tool_call_blocks(text, limits, schemas)),
    ("```", lambda text, at, limits, schemas: _FENCED_BLOCKS(text, limits)),
    ("<execute>", lambda text, at, limits, schemas: _EXECUTE_BLOCKS(text, limits)),
    ("<function=", _bare_functions),
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


_CLOSERS = {_TOOL_CALL: _TOOL_CALL_END, "```": "```", "<execute>": "</execute>", "<function=": "</function>"}


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


def _whole_then_embedded(text: str, limits: Limits, schemas: Schemas = NO_SCHEMAS) -> list[Call]:
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


_REASONING_TAGS = (("<think>", "</think>"), ("[THINK]", "[/THINK]"))
_REASONING_LOOKS = 3  # reasoning blocks looked past for the markup that follows them (bounded cost)


def _inside_open_reasoning(text: str, position: int) -> int | None:
    """Where the reasoning block open at ``position`` closes (the end of the text when it does
    not), or None when ``position`` is in no open block."""
    for opener, closer in _REASONING_TAGS:
        opened = text.rfind(opener, 0, position)
        if opened >= 0 and text.rfind(closer, 0, position) < opened:
            close = text.find(closer, position)
            return len(text) if close < 0 else close + len(closer)
    return None


def _drop_reasoning(text: str, limits: Limits) -> str:
    """:func:`drop_reasoning`, but a reasoning tag inside a native family's call markup is part
    of a value (Kimi K2.6 writing ``</think>`` into an argument), not the end of the reasoning:
    the reasoning is then only what comes before that markup. The markup is the first native
    marker outside an open reasoning block; everything else is as drop_reasoning has it."""
    dropped = drop_reasoning(text)
    if not _has_native_marker(text):
        return dropped
    start = 0
    for _ in range(_REASONING_LOOKS):
        found: tuple[int, NativeReader] | None = None
        for marker, reader in NATIVE_MARKERS:
            position = text.find(marker, start, len(text) if found is None else found[0])
            if position >= 0:
                found = (position, reader)
        if found is None:
            return dropped
        block_end = _inside_open_reasoning(text, found[0])
        if block_end is None:
            break
        start = block_end
    else:
        return dropped
    position, reader = found
    try:
        end = reader(text, position, limits, NO_SCHEMAS).end
    except DecodeError:
        return dropped
    markup = text[position:end]
    if not any(tag in markup for pair in _REASONING_TAGS for tag in pair):
        return dropped
    return drop_reasoning(text[:position]) + text[position:]


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
        body = _drop_reasoning(body, limits).strip()
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
