"""Gemma 4: ``<|tool_call>call:NAME{key:<|"|>text<|"|>,n:3}<tool_call|>``, one block per call:
keys bare, strings between ``<|"|>`` tokens."""

from __future__ import annotations

import json
import re
from typing import Any

from scoring.formats.reading import Finder, Reading, Schemas, count, object_arguments
from scoring.formats.spec import Format, Marker, family_prompting
from scoring.formats.writing import json_text
from scoring.model import Call, DecodeError, Limits

CALL = "<|tool_call>"
CALL_END = "<tool_call|>"
QUOTE = '<|"|>'
_HEAD = re.compile(r"\s*call:([^\s{]{1,256})\s*\{")
# A bare key runs to its colon and may hold spaces ("call:f{max results:3}"); outside the <|"|> strings
# only keys are text, so anything up to a colon that is no bracket, comma or quote is one. Possessive:
# a run that meets no colon fails at once instead of backtracking through up to 256 characters.
_KEY = re.compile(r"([{,]\s*)([^\s:{}\[\],\"][^:{}\[\],\"]{0,255}+):")


def _value(value: Any) -> str:
    if isinstance(value, str):
        return f"{QUOTE}{value}{QUOTE}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{key}:{_value(item)}" for key, item in value.items()) + "}"
    return json_text(value)


def render(calls: list[Call]) -> str:
    return "".join(f"{CALL}call:{call.name}{_value(call.arguments)}{CALL_END}" for call in calls)


def _quoted_key(match: re.Match[str]) -> str:
    return f"{match.group(1)}{json.dumps(match.group(2).rstrip())}:"


def gemma_arguments(body: str) -> dict[str, Any]:
    """``{key:value,...}`` with strings between ``<|"|>`` tokens, keys bare: made JSON, then read."""
    pieces = body.split(QUOTE)
    if len(pieces) % 2 == 0:
        raise DecodeError('an unclosed <|"|> string')
    # Outside the quotes: quote the bare keys. Inside: the string, escaped as JSON.
    converted = [
        json.dumps(piece) if index % 2 else _KEY.sub(_quoted_key, piece) for index, piece in enumerate(pieces)
    ]
    try:
        value = json.loads("".join(converted))
    except (ValueError, RecursionError) as error:
        raise DecodeError(f"Gemma call arguments are not readable: {error}") from None
    return object_arguments(value)


def _call_end(finder: Finder, start: int) -> int:
    """Where the ``<tool_call|>`` that closes a call starting at ``start`` is, skipping any that
    sit inside a ``<|"|>`` string; -1 when the call is cut off."""
    inside = False
    position = start
    while True:
        quote = finder.find(QUOTE, position)
        if inside:
            if quote < 0:
                return -1
            inside, position = False, quote + len(QUOTE)
            continue
        close = finder.find(CALL_END, position)
        if close < 0:
            return -1
        if 0 <= quote < close:
            inside, position = True, quote + len(QUOTE)
            continue
        return close


def read(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    calls: list[Call] = []
    end = at
    position = at
    finder = Finder(text)
    while position >= 0:
        head = _HEAD.match(text, position + len(CALL))
        if head is None:
            if calls:
                break
            raise DecodeError("a Gemma tool call without call:NAME{...}")
        close = _call_end(finder, head.end())
        if close < 0:
            break  # cut off
        calls.append(Call(head.group(1), gemma_arguments(text[head.end() - 1 : close].strip())))
        count(calls, limits)
        end = close + len(CALL_END)
        position = finder.find(CALL, end)
    return Reading(calls, at, end)


FORMAT = Format(
    name="gemma4",
    render=render,
    writes=r'`<\|tool_call>call:NAME{key:<\|"\|>text<\|"\|>,n:3}<tool_call\|>`',
    families="Gemma 4",
    auto_when=r"`<\|tool_call>`",
    decode_needs_tools=True,
    markers=(Marker(CALL, read),),
    fingerprints=((CALL,),),
    fingerprint_rank=70,
    prompting=family_prompting(render, ("<|tool_call>call:", "{name}{{")),
)
