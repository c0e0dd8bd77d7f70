"""Llama 4: ``<|python_start|>[f(a=1), g(b="x")]<|python_end|>``, a python call list between markers."""

from __future__ import annotations

from scoring.formats.reading import Reading, Schemas, TextDecoder
from scoring.formats.spec import Format, Marker, family_prompting
from scoring.formats.writing import python_call_list
from scoring.model import Call, DecodeError, Limits

START = "<|python_start|>"
END = "<|python_end|>"


def render(calls: list[Call]) -> str:
    return f"{START}{python_call_list(calls)}{END}"


def read(text: str, at: int, limits: Limits, schemas: Schemas, decode_text: TextDecoder) -> Reading:
    """The call list after the start marker, read as any answer's text is (``decode_text``). The
    end marker may also sit inside a string value: the first end after which the list reads is the
    end."""
    start = at + len(START)
    close = text.find(END, start)
    error = DecodeError("no complete call list after <|python_start|>")
    for _ in range(limits.max_calls):
        if close < 0:
            break
        try:
            return Reading(decode_text(text[start:close], limits), at, close + len(END))
        except DecodeError as failed:
            error = failed
        close = text.find(END, close + 1)
    try:  # no end marker (the stop token was cut): the rest, if it reads
        return Reading(decode_text(text[start:], limits), at, len(text))
    except DecodeError:
        pass
    complete = _complete_python_calls(text[start:], limits, decode_text)
    if complete:
        return Reading(complete, at, len(text))
    raise error


def _complete_python_calls(body: str, limits: Limits, decode_text: TextDecoder, tries: int = 8) -> list[Call]:
    """The complete calls of a python call list cut off mid-call: the list closed after each of
    its last few ``)`` in turn, from the end, until one reads (bounded: ``tries`` parses)."""
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


FORMAT = Format(
    name="llama4",
    render=render,
    writes=r'`<\|python_start\|>[f(a=1), g(b="x")]<\|python_end\|>`',
    families="Llama 4",
    auto_when=r"`<\|python_start\|>`",
    decode_needs_tools=True,
    markers=(Marker(START, answer_reader=read),),
    fingerprints=((START,),),
    fingerprint_rank=80,
    prompting=family_prompting(render, ("<|python_start|>[", "{name}(")),
)
