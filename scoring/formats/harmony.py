"""gpt-oss (Harmony): messages ``[<|start|>assistant]<|channel|>commentary to=functions.NAME
[<|constrain|>json]<|message|>{...}<|call|>`` (``to=`` may stand in the role header instead); a
message addressed to a function is a call, the analysis channel is reasoning and the final
channel is the answer."""

from __future__ import annotations

import re

from scoring.formats.reading import Finder, Reading, Schemas, count, json_value_at, object_arguments
from scoring.formats.spec import CallMarkup, Format, Marker, family_prompting
from scoring.formats.writing import json_text
from scoring.model import Call, Limits

CHANNEL = "<|channel|>"
START = "<|start|>assistant"
_MESSAGE = "<|message|>"
_ENDS = ("<|call|>", "<|end|>", "<|return|>")
_RECIPIENT = re.compile(r"\bto=(?:functions\.)?([^\s<]{1,256})")
# The role header of the first message when the prompt's prefill ends at "<|start|>assistant": the
# answer opens with " to=functions.NAME" and only then its channel marker, where reading starts.
_HEADER_BEFORE = re.compile(r"(?:^|\s|assistant)to=(?:functions\.)?([^\s<]{1,256})\s*\Z")


def render(calls: list[Call]) -> str:
    return "".join(
        f"{START}{CHANNEL}commentary to=functions.{call.name} <|constrain|>json"
        f"{_MESSAGE}{json_text(call.arguments)}<|call|>"
        for call in calls
    ).removeprefix(START)  # the prompt's prefill: an answer opens at its channel


def _message_end(finder: Finder, start: int) -> int:
    """Where the message whose body starts at ``start`` ends (after its end marker), or -1."""
    ends = [(found, len(marker)) for marker in _ENDS if (found := finder.find(marker, start)) >= 0]
    if not ends:
        return -1
    found, length = min(ends)
    return found + length


def read(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
    calls: list[Call] = []
    position = at
    end = at
    finder = Finder(text)
    while True:
        message = finder.find(_MESSAGE, position)
        if message < 0:
            break
        body_start = message + len(_MESSAGE)
        recipient = _RECIPIENT.search(text, position, message)
        if recipient is None and position == at:
            recipient = _HEADER_BEFORE.search(text, max(0, at - 300), at)
        if recipient is not None:
            found = json_value_at(text, body_start)
            if found is None:
                break  # cut off
            calls.append(Call(recipient.group(1), object_arguments(found[0])))
            count(calls, limits)
            closed = _message_end(finder, found[1])
            end = found[1] if closed < 0 else closed
        else:
            closed = _message_end(finder, body_start)
            if closed < 0:
                break
            end = closed
        position = end
    return Reading(calls, at, end)


def harmony_final_text(text: str) -> str | None:
    """The text of an answer's final channel, or None when it has none."""
    final = text.rfind("<|channel|>final")
    if final < 0:
        return None
    message = text.find(_MESSAGE, final)
    if message < 0:
        return None
    body = message + len(_MESSAGE)
    ends = [found for marker in _ENDS if (found := text.find(marker, body)) >= 0]
    return text[body : min(ends)] if ends else text[body:]


def content_of(cleaned: str) -> str:
    """An answer without a call is its final channel's text, not the markup."""
    final = harmony_final_text(cleaned)
    return cleaned if final is None else final.strip()


FORMAT = Format(
    name="harmony",
    render=render,
    writes=(
        r"`<\|channel\|>commentary to=functions.NAME <\|constrain\|>json<\|message\|>{...}<\|call\|>` "
        "(or `to=` in the role header); analysis is reasoning, final is the answer"
    ),
    families="gpt-oss",
    auto_when=r"`<\|channel\|>` with `to=functions` or `<\|call\|>`",
    decode_needs_tools=True,
    # Markup that may hold no call at all: an answer whose messages are reasoning and a final answer.
    markers=(Marker(CHANNEL, read, may_hold_no_call=True), Marker(START, read, may_hold_no_call=True)),
    fingerprints=((CHANNEL, "to=functions"), (CHANNEL, "<|call|>")),
    fingerprint_rank=60,
    prompting=family_prompting(
        render,
        (CHANNEL + "commentary to=functions.", "{name} <|constrain|>json<|message|>"),
        content_of=content_of,
        markup=CallMarkup(
            CHANNEL + "commentary to=functions.{name} <|constrain|>json<|message|>",
            "<|call|>",
            separator=START,
        ),
    ),
)
