"""Output adapters: how to prompt a model for tool calls in its family's format, and how to read it.

One adapter per format a miner can be started with, kept in `ADAPTERS` and built from the format
registry (:mod:`scoring.formats`, one module per format: its prompt, forced-call start and
clean-up are there, with its renderer and reader). An adapter says
- how to describe the tools when the model's chat template cannot take ``tools=`` itself
  (a system prompt of our own, in the family's idiom),
- how earlier assistant calls and tool results are written back into a text-only history (a
  template that renders tools itself gets them as OpenAI messages instead, `native_history`;
  `history_forms` lists the fallbacks for templates that refuse a form),
- which text to put at the start of the answer when the caller forces a call (``tool_choice``),
- how to read the answer: model text -> OpenAI ``tool_calls`` through `scoring.decode` (the one
  decoder of the project), or plain ``content`` when the text holds no call.

`format_for_template` picks a format from a chat template (``--model.format auto``), and
`template_takes_tools` tells whether the template renders ``tools=`` on its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from scoring import Call, DecodeError
from scoring.decoding import decode, markup_span
from scoring.formats import REGISTRY, Format, Prompting, format_names, template_format
from scoring.formats.reading import drop_reasoning
from scoring.formats.spec import functions_of
from scoring.rendering import render, to_openai_tool_calls

# Reasoning blocks some models write before answering; never part of the answer.
_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL)
# Llama's end-of-message tokens, which an engine's text can carry after a call whatever the
# format; the call markers themselves are read by scoring.decode.
_CALL_MARKERS = re.compile(r"<\|eom_id\|>|<\|eot_id\|>")


def _arguments_object(arguments: Any) -> Any:
    """Tool-call arguments as an object: OpenAI history carries them as a JSON string."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def _history_calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    calls = []
    for tool_call in message.get("tool_calls") or []:
        function = tool_call.get("function", {})
        calls.append((str(function.get("name", "")), _arguments_object(function.get("arguments", {}))))
    return calls


def text_of(message: dict[str, Any]) -> str:
    """A message's text: a string content, or its text parts joined."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


@dataclass(frozen=True)
class ReadAnswer:
    """What a model's text means: OpenAI tool calls, or content when it holds none."""

    tool_calls: list[dict[str, Any]] | None
    content: str | None


class OutputAdapter:
    """Prompting and reading for one tool-call format, as its module in scoring.formats says."""

    def __init__(self, spec: Format) -> None:
        if spec.prompting is None:
            raise ValueError(f"format {spec.name!r} is an output shape, not a model format")
        self.spec = spec
        self.name = spec.name
        self._prompting: Prompting = spec.prompting
        # Whether the model's special tokens must be kept when its answer is decoded to text: the
        # native formats of several families are special tokens (Kimi's <|tool_call_begin|>,
        # Llama's <|python_tag|>), which a tokenizer's skip_special_tokens would silently remove.
        self.keeps_special_tokens = spec.prompting.keeps_special_tokens

    def __repr__(self) -> str:
        return f"OutputAdapter({self.name!r})"

    def system_prompt(self, tools: list[dict[str, Any]]) -> str:
        return self._prompting.system_prompt(tools)

    def render_calls(self, calls: list[tuple[str, Any]]) -> str:
        """Earlier assistant calls, as the model would have written them (scoring's renderer)."""
        if self._prompting.history_calls is not None:
            return self._prompting.history_calls(calls)
        decoded = [Call(name, arguments if isinstance(arguments, dict) else {}) for name, arguments in calls]
        try:
            return str(self.spec.render(decoded))
        except ValueError:  # a name python syntax cannot hold: JSON says the same thing
            return str(render(decoded, "json"))

    def render_tool_result(self, name: str, content: str) -> str:
        return self._prompting.tool_result(name, content)

    def forced_prefix(self, function_name: str | None) -> str:
        """The start of an answer that must call `function_name` (None: any function)."""
        return self._prompting.forced_prefix(function_name)

    def history_call_id(self, name: str, number: int) -> str | None:
        """The id of an earlier call as the family's template wants it (None: keep the caller's)."""
        style = self._prompting.history_call_id
        return None if style is None else style(name, number)

    def clean(self, text: str) -> str:
        """The answer with what is not part of it (reasoning blocks) taken out, before decoding."""
        cleaned = _CALL_MARKERS.sub("", drop_reasoning(_THINK_BLOCK.sub("", text))).strip()
        own = self._prompting.clean
        return cleaned if own is None else own(cleaned)

    def content_of(self, cleaned: str) -> str:
        """What the answer says in words when it holds no call (markup taken out)."""
        own = self._prompting.content_of
        return cleaned if own is None else own(cleaned)

    def read(self, text: str, *, allow_calls: bool = True, tools: Any = None) -> ReadAnswer:
        """Model text -> tool calls (via scoring.decode; ``tools`` type the values some families
        write as text) and the words around them as content, or only content. Nothing is executed."""
        cleaned = self.clean(text)
        if allow_calls and cleaned:
            try:
                calls = decode(cleaned, tools=tools)
            except DecodeError:
                calls = []
            calls = [call for call in calls if call.name]
            if calls:
                span = markup_span(cleaned)
                words = f"{cleaned[: span[0]].strip()}\n{cleaned[span[1] :].strip()}".strip() if span else ""
                return ReadAnswer(tool_calls=list(to_openai_tool_calls(calls)), content=words or None)
        return ReadAnswer(tool_calls=None, content=self.content_of(cleaned))


ADAPTERS: dict[str, OutputAdapter] = {name: OutputAdapter(REGISTRY[name]) for name in format_names()}

# --model.format's choices: `auto` (the template's own format) and every adapter.
MODEL_FORMATS = ("auto", *ADAPTERS)

# A template that shows no format of its own: the BFCL/BitAgent prompt, which small instruct
# models follow most reliably (see docs/miner.md).
DEFAULT_FORMAT = "pythonic"


def native_format(chat_template: str | None) -> str | None:
    """The format a chat template was written for, when it shows one (the formats' fingerprints)."""
    return template_format(chat_template)


def format_for_template(requested: str, chat_template: str | None) -> OutputAdapter:
    """The adapter for ``--model.format`` (``auto``: the template's own format, else the default)."""
    if requested != "auto":
        try:
            return ADAPTERS[requested]
        except KeyError:
            raise ValueError(
                f"unknown model format {requested!r}; choose one of {', '.join(MODEL_FORMATS)}"
            ) from None
    return ADAPTERS[native_format(chat_template) or DEFAULT_FORMAT]


def template_takes_tools(chat_template: str | None) -> bool:
    """Whether a chat template renders a ``tools`` list itself."""
    return bool(chat_template) and re.search(r"\btools\b", chat_template or "") is not None


def forced_function(
    tool_choice: str | dict[str, Any] | None, tools: list[dict[str, Any]]
) -> tuple[bool, str | None]:
    """(must call, the function it must be) from OpenAI ``tool_choice``.

    ``required`` with a single tool forces that tool; a named choice forces the name.
    """
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name")
        return True, str(name) if name else None
    if tool_choice == "required" and tools:
        functions = functions_of(tools)
        return True, (str(functions[0].get("name")) if len(functions) == 1 else None)
    return False, None


def _answered_calls(messages: list[dict[str, Any]]) -> dict[int, tuple[int, str]]:
    """For each tool message (by position), the call it answers: the call's number in the
    conversation and its function's name. Paired by ``tool_call_id``; a result whose id names no
    call answers the first unanswered call of the assistant message before it (OpenAI's order)."""
    by_id: dict[str, tuple[int, str]] = {}
    waiting: list[tuple[int, str]] = []
    answered: dict[int, tuple[int, str]] = {}
    number = 0
    for position, message in enumerate(messages):
        if message.get("role") == "assistant" and message.get("tool_calls"):
            waiting = []
            for tool_call in message["tool_calls"]:
                call = (number, str((tool_call.get("function") or {}).get("name", "")))
                number += 1
                waiting.append(call)
                if tool_call.get("id"):
                    by_id[str(tool_call["id"])] = call
        elif message.get("role") == "tool":
            found = by_id.get(str(message.get("tool_call_id") or "")) or (waiting[0] if waiting else None)
            if found is not None:
                answered[position] = found
                if found in waiting:
                    waiting.remove(found)
    return answered


def text_history(
    adapter: OutputAdapter, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Messages for a template without tool support: our tool prompt in the system message, earlier
    calls and tool results written out as text (the results of one step in one user message)."""
    converted: list[dict[str, Any]] = []
    answered = _answered_calls(messages)
    after_result = False
    for position, message in enumerate(messages):
        role = message.get("role", "user")
        if role == "developer":
            role = "system"
        if role == "assistant" and message.get("tool_calls"):
            text = text_of(message)
            calls = adapter.render_calls(_history_calls(message))
            converted.append({"role": "assistant", "content": f"{text}\n{calls}".strip()})
        elif role == "tool":
            name = str(message.get("name") or answered.get(position, (0, ""))[1])
            result = adapter.render_tool_result(name, text_of(message))
            if after_result:  # parallel calls: their results together, as one turn
                converted[-1] = {"role": "user", "content": f"{converted[-1]['content']}\n{result}"}
            else:
                converted.append({"role": "user", "content": result})
        else:
            converted.append({"role": role, "content": text_of(message)})
        after_result = role == "tool"
    if tools:
        instructions = adapter.system_prompt(tools)
        if converted and converted[0]["role"] == "system":
            converted[0] = {
                "role": "system",
                "content": f"{converted[0]['content']}\n\n{instructions}".strip(),
            }
        else:
            converted.insert(0, {"role": "system", "content": instructions})
    return converted


def native_history(
    messages: list[dict[str, Any]], adapter: OutputAdapter | None = None, *, arguments_as_text: bool = False
) -> list[dict[str, Any]]:
    """Messages for a template that renders tools itself: call arguments as objects, as most
    templates expect (``arguments_as_text``: JSON strings, for templates that concatenate them, as
    DeepSeek's do); each tool result named after its call, and call ids as the family writes them."""
    answered = _answered_calls(messages)
    converted = []
    number = 0
    for position, message in enumerate(messages):
        copy = {key: value for key, value in message.items() if value is not None}
        if copy.get("role") == "developer":
            copy["role"] = "system"
        if isinstance(copy.get("content"), list):
            copy["content"] = text_of(copy)
        if copy.get("tool_calls"):
            tool_calls = []
            for tool_call in copy["tool_calls"]:
                function = tool_call.get("function") or {}
                arguments = function.get("arguments", {})
                if not arguments_as_text:
                    arguments = _arguments_object(arguments)
                elif not isinstance(arguments, str):
                    arguments = json.dumps(arguments, ensure_ascii=False)
                tool_call = {**tool_call, "function": {**function, "arguments": arguments}}
                call_id = adapter.history_call_id(str(function.get("name", "")), number) if adapter else None
                if call_id is not None:
                    tool_call["id"] = call_id
                number += 1
                tool_calls.append(tool_call)
            copy["tool_calls"] = tool_calls
        if copy.get("role") == "tool" and position in answered:
            call_number, name = answered[position]
            if name:
                copy.setdefault("name", name)
            call_id = adapter.history_call_id(name, call_number) if adapter else None
            if call_id is not None:
                copy["tool_call_id"] = call_id
        converted.append(copy)
    return converted


def history_forms(
    adapter: OutputAdapter, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, native: bool
) -> Iterator[list[dict[str, Any]]]:
    """The ways to hand a conversation to a chat template, the most faithful first: the backend
    renders the first one its template accepts. Templates refuse in their own ways: DeepSeek's
    concatenate call arguments as strings; Llama 2's, Mistral v0.1's and CodeActAgent's take no
    system turn (it is said at the start of the first user turn instead); some insist that user
    and assistant turns alternate (a turn cut by the step cap leaves two user turns in a row,
    joined then)."""
    if native:
        histories = [
            native_history(messages, adapter),
            native_history(messages, adapter, arguments_as_text=True),
        ]
    else:
        histories = [text_history(adapter, messages, tools)]
    yield from histories
    for history in histories:
        forms = [_alternating(history)]
        if history and history[0].get("role") == "system":
            folded = _system_into_first_user(history)
            forms += [folded, _alternating(folded)]
        yield from (form for form in forms if form != history)


def _system_into_first_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    system, rest = messages[0], [dict(message) for message in messages[1:]]
    for message in rest:
        if message.get("role") == "user":
            message["content"] = f"{system.get('content') or ''}\n\n{message.get('content') or ''}".strip()
            return rest
    return [{"role": "user", "content": system.get("content") or ""}, *rest]


def _alternating(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs of plain user (or plain assistant) turns joined into one turn each, and an empty
    assistant turn between tool results and a user turn (where the step cap ended a turn)."""
    joined: list[dict[str, Any]] = []
    for message in messages:
        previous = joined[-1] if joined else None
        if previous is not None and previous.get("role") == "tool" and message.get("role") == "user":
            joined.append({"role": "assistant", "content": ""})
            previous = None
        if (
            previous is not None
            and message.get("role") in ("user", "assistant")
            and previous.get("role") == message.get("role")
            and not previous.get("tool_calls")
            and not message.get("tool_calls")
        ):
            content = f"{previous.get('content') or ''}\n\n{message.get('content') or ''}".strip()
            joined[-1] = {**previous, "content": content}
        else:
            joined.append(message)
    return joined
