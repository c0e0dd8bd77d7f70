"""Kimi K3 (XTML): ``<|open|>tools<|sep|>`` holding ``<|open|>call tool="NAME" index="1"<|sep|>``
with ``<|open|>argument key="K" type="number"<|sep|>VALUE<|close|>argument<|sep|>`` per argument,
each call closed by ``<|close|>call<|sep|>``, the section by ``<|close|>tools<|sep|>``; reasoning in
``<|open|>think<|sep|>...<|close|>think<|sep|>``, the answer in ``<|open|>response<|sep|>...``.

Values are text, typed by the offered schema where it names a type, else by the ``type``
attribute (:func:`declared_value`). Each value runs to its own ``<|close|>argument``, so other
markers inside a value are part of it; reasoning is skipped to its closing tag, so a call inside
it is no call (also when the template prefilled ``<|open|>think``, so that only its closing tag
is in the answer).

Written from the issue's description of recorded K3 outputs (no K3 template or output was at
hand): the ``<|sep|>`` after a closing tag is taken as optional, the ``index`` is ignored.
"""

from __future__ import annotations

import re
from typing import Any

from scoring.formats.reading import Reading, Schemas, count, declared_value, skip_blank
from scoring.formats.spec import CallMarkup, Format, Marker, family_prompting
from scoring.formats.writing import text_value
from scoring.model import Call, Limits

OPEN = "<|open|>"
CLOSE = "<|close|>"
SEP = "<|sep|>"
TOOLS = OPEN + "tools"
CALL = OPEN + "call"
THINK = OPEN + "think"
THINK_END = CLOSE + "think"
RESPONSE = OPEN + "response"
_HEAD_MAX = 600  # a tag's head (name and attributes) longer than this is no tag
_TAG = re.compile(r"([a-z_]{1,32})")
_ATTRIBUTE = re.compile(r"\s+([A-Za-z_]{1,32})=\"([^\"]{0,256})\"")


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "string"


def render(calls: list[Call]) -> str:
    written = []
    for index, call in enumerate(calls, start=1):
        arguments = "".join(
            f'{OPEN}argument key="{key}" type="{_type_of(value)}"{SEP}{text_value(value)}{CLOSE}argument{SEP}'
            for key, value in call.arguments.items()
        )
        written.append(f'{CALL} tool="{call.name}" index="{index}"{SEP}{arguments}{CLOSE}call{SEP}')
    return f"{TOOLS}{SEP}{''.join(written)}{CLOSE}tools{SEP}"


def _element(text: str, position: int) -> tuple[str, dict[str, str], int] | None:
    """The tag opened at ``position`` (which holds ``<|open|>``): its name, its attributes and
    where its content starts; None for no well-formed head."""
    start = position + len(OPEN)
    sep = text.find(SEP, start, start + _HEAD_MAX)
    if sep < 0:
        return None
    tag = _TAG.match(text, start, sep)
    if tag is None:
        return None
    attributes: dict[str, str] = {}
    at = tag.end()
    while (attribute := _ATTRIBUTE.match(text, at, sep)) is not None:
        attributes[attribute.group(1)] = attribute.group(2)
        at = attribute.end()
    if text[at:sep].strip():
        return None
    return tag.group(1), attributes, sep + len(SEP)


def _after_close(text: str, position: int, tag: str) -> int | None:
    """Where ``<|close|>tag`` (and its ``<|sep|>``) ends, when it stands at ``position``."""
    closer = CLOSE + tag
    if not text.startswith(closer, position):
        return None
    position += len(closer)
    return position + len(SEP) if text.startswith(SEP, position) else position


def _skip_to_close(text: str, position: int, tag: str) -> int | None:
    close = text.find(CLOSE + tag, position)
    return None if close < 0 else _after_close(text, close, tag)


def _call(text: str, position: int, schemas: Schemas) -> tuple[Call, int] | None:
    """The call whose ``<|open|>call`` stands at ``position``, and where it ends; None when it
    is cut off or garbled."""
    head = _element(text, position)
    if head is None or head[0] != "call" or not head[1].get("tool"):
        return None
    name, position = head[1]["tool"], head[2]
    properties = schemas.get(name)
    arguments: dict[str, Any] = {}
    while True:
        position = skip_blank(text, position)
        closed = _after_close(text, position, "call")
        if closed is not None:
            return Call(name, arguments), closed
        if not text.startswith(OPEN, position):
            return None
        argument = _element(text, position)
        if argument is None or argument[0] != "argument" or "key" not in argument[1]:
            return None
        value_end = text.find(CLOSE + "argument", argument[2])
        if value_end < 0:
            return None  # cut off
        key, raw = argument[1]["key"], text[argument[2] : value_end]
        arguments[key] = declared_value(raw, properties.get(key), argument[1].get("type"))
        position = _after_close(text, value_end, "argument") or value_end


def _read_from(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    calls: list[Call] = []
    end = position = at
    in_tools = False
    while True:
        position = skip_blank(text, position)
        if not in_tools and text.startswith(THINK_END, position):  # the opening tag was prefilled
            position = end = _after_close(text, position, "think") or position
            continue
        if in_tools:
            closed = _after_close(text, position, "tools")
            if closed is not None:
                end = closed
                break
            if not text.startswith(CALL, position):
                break  # garbled or cut off: the complete calls stand
        else:
            position = text.find(OPEN, position)
            if position < 0:
                break
        element = _element(text, position)
        if element is None:
            break
        tag, _, content = element
        if tag in ("think", "response") and not in_tools:
            skipped = _skip_to_close(text, content, tag)
            if skipped is None:
                break  # runs to the end of the text
            position = end = skipped
        elif tag == "tools" and not in_tools:
            in_tools, position = True, content
        elif tag == "call":
            found = _call(text, position, schemas)
            if found is None:
                break
            calls.append(found[0])
            count(calls, limits)
            position = end = found[1]
        else:
            break
    return Reading(calls, at, end)


def read(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    reading = _read_from(text, at, limits, schemas)
    # Reasoning whose <|open|>think the template prefilled: what came before its closing tag (calls
    # included) was reasoning, unless that closing tag sat inside a value of the calls read.
    prefilled = text.find(THINK_END, reading.end)
    if prefilled >= 0 and THINK not in text[:prefilled]:
        reading = _read_from(text, prefilled, limits, schemas)
    return reading


def content_of(cleaned: str) -> str:
    """An answer without a call is its response's text, not the markup."""
    start = cleaned.rfind(RESPONSE)
    if start < 0:
        return cleaned
    element = _element(cleaned, start)
    if element is None:
        return cleaned
    close = cleaned.find(CLOSE + "response", element[2])
    return (cleaned[element[2] :] if close < 0 else cleaned[element[2] : close]).strip()


FORMAT = Format(
    name="kimi_k3",
    render=render,
    writes=(
        r'`<\|open\|>call tool="NAME" index="1"<\|sep\|><\|open\|>argument key="K" type="number"<\|sep\|>'
        r"VALUE<\|close\|>argument<\|sep\|>...<\|close\|>call<\|sep\|>` in a tools section"
    ),
    families="Kimi K3 (XTML)",
    auto_when=r"`<\|open\|>call` or `<\|open\|>tools`",
    decode_needs_tools=True,
    markers=(
        Marker(TOOLS, read),
        Marker(CALL, read),
        Marker(THINK, read, may_hold_no_call=True),
        Marker(THINK_END, read, may_hold_no_call=True),
        Marker(RESPONSE, read, may_hold_no_call=True),
    ),
    fingerprints=((CALL,), (TOOLS,)),
    fingerprint_rank=25,  # any rank: its markers are no other format's
    prompting=family_prompting(
        render,
        (TOOLS + SEP + CALL + ' tool="', '{name}" index="1"' + SEP),
        content_of=content_of,
        markup=CallMarkup(
            CALL + ' tool="{name}" index="{index}"' + SEP,
            CLOSE + "call" + SEP,
            arguments="kimi_k3_xml",
            opening=TOOLS + SEP,
            closing=CLOSE + "tools" + SEP,
        ),
    ),
)
