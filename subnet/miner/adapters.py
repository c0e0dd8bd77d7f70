"""Output adapters: how to prompt a model for tool calls in its family's format, and how to read it.

One adapter per format (hermes, pythonic, json, codeact, and the native markup of each open
model family: qwen3_coder, llama3, llama4, mistral, deepseek, deepseek_dsml, kimi, glm, harmony,
gemma4), kept in `ADAPTERS`. An adapter says
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from scoring import NATIVE_FORMATS, Call, DecodeError, decode, render, to_openai_tool_calls
from scoring.decoding import markup_span
from scoring.native import drop_reasoning, harmony_final_text

# Reasoning blocks some models write before answering; never part of the answer.
_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL)
# Llama's end-of-message tokens, which an engine's text can carry after a call whatever the
# format; the call markers themselves are read by scoring.decode.
_CALL_MARKERS = re.compile(r"<\|eom_id\|>|<\|eot_id\|>")


def _functions(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The function schemas of OpenAI tools (plain function dicts are accepted too)."""
    return [tool.get("function", tool) for tool in tools]


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
    """Prompting and reading for one tool-call format. Subclasses fill in the format's idiom."""

    name: ClassVar[str]

    def system_prompt(self, tools: list[dict[str, Any]]) -> str:
        raise NotImplementedError

    def render_calls(self, calls: list[tuple[str, Any]]) -> str:
        """Earlier assistant calls, as the model would have written them (scoring's renderer)."""
        decoded = [Call(name, arguments if isinstance(arguments, dict) else {}) for name, arguments in calls]
        try:
            return str(render(decoded, self.name))
        except ValueError:  # a name python syntax cannot hold: JSON says the same thing
            return str(render(decoded, "json"))

    def render_tool_result(self, name: str, content: str) -> str:
        return f"Result of {name or 'the function'}: {content}"

    def forced_prefix(self, function_name: str | None) -> str:
        """The start of an answer that must call `function_name` (None: any function)."""
        raise NotImplementedError

    # Whether the model's special tokens must be kept when its answer is decoded to text: the
    # native formats of several families are special tokens (Kimi's <|tool_call_begin|>, Llama's
    # <|python_tag|>), which a tokenizer's skip_special_tokens would silently remove.
    keeps_special_tokens: ClassVar[bool] = False

    def clean(self, text: str) -> str:
        """The answer with what is not part of it (reasoning blocks) taken out, before decoding."""
        return _CALL_MARKERS.sub("", drop_reasoning(_THINK_BLOCK.sub("", text))).strip()

    def content_of(self, cleaned: str) -> str:
        """What the answer says in words when it holds no call (markup taken out)."""
        return cleaned

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


class HermesAdapter(OutputAdapter):
    """``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (Qwen, Hermes, HRM-style models)."""

    name = "hermes"

    def system_prompt(self, tools: list[dict[str, Any]]) -> str:
        listing = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
        return (
            "You may call functions to answer the user. The functions are described as JSON schemas "
            "between <tools> and </tools>:\n"
            f"<tools>\n{listing}\n</tools>\n"
            "To call a function, write a JSON object with its name and arguments between "
            "<tool_call> and </tool_call>, one pair of tags per call:\n"
            '<tool_call>\n{"name": "function_name", "arguments": {"parameter": "value"}}\n</tool_call>\n'
            "Take argument values from the user's words; do not invent them. If no function fits the "
            "request, or a required argument is missing, answer in plain text and call nothing."
        )

    def render_tool_result(self, name: str, content: str) -> str:
        return f"<tool_response>\n{content}\n</tool_response>"

    def forced_prefix(self, function_name: str | None) -> str:
        if function_name is None:
            return '<tool_call>\n{"name": "'
        return '<tool_call>\n{"name": ' + json.dumps(function_name) + ', "arguments": '


class PythonicAdapter(OutputAdapter):
    """The BFCL / BitAgent form: a Python list of keyword calls, ``[func(a=1), other(b="x")]``."""

    name = "pythonic"

    def system_prompt(self, tools: list[dict[str, Any]]) -> str:
        listing = json.dumps(_functions(tools), ensure_ascii=False)
        return (
            "You are an expert at calling functions. Given a question and the functions below, decide "
            "which calls answer it.\n"
            "Answer with the calls only, as a Python list of keyword calls: "
            "[func_name(param1=value1, param2=value2), other_func(param=value)]. "
            "Values are Python literals. Write no other text.\n"
            "If none of the functions fits, or the question lacks a required argument, say so in words "
            "instead of calling.\n"
            f"The functions, in JSON:\n{listing}"
        )

    def forced_prefix(self, function_name: str | None) -> str:
        return "[" if function_name is None else f"[{function_name}("


class JsonAdapter(OutputAdapter):
    """One JSON object per call, a list for several (OpenAI keys; BusyBeaver's tool/args also read)."""

    name = "json"

    def system_prompt(self, tools: list[dict[str, Any]]) -> str:
        listing = json.dumps(_functions(tools), ensure_ascii=False)
        return (
            "You choose function calls. The functions, as JSON schemas:\n"
            f"{listing}\n"
            'To call a function, answer with one JSON object only: {"name": "<function name>", '
            '"arguments": {"<parameter>": <value>}}. For several calls, answer with a JSON list of '
            "such objects. Write no other text. If no function fits, or a required argument is "
            "missing, answer in plain text."
        )

    def render_calls(self, calls: list[tuple[str, Any]]) -> str:
        objects = [{"name": name, "arguments": arguments} for name, arguments in calls]
        return json.dumps(objects[0] if len(objects) == 1 else objects, ensure_ascii=False)

    def forced_prefix(self, function_name: str | None) -> str:
        if function_name is None:
            return '{"name": "'
        return '{"name": ' + json.dumps(function_name) + ', "arguments": '


class CodeActAdapter(OutputAdapter):
    """Calls as top-level statements of one python block (CodeActAgent); nothing is ever run."""

    name = "codeact"
    # CodeActAgent writes its code between <execute> tags; read it as the python block it is.
    _EXECUTE = re.compile(r"<execute>(.*?)(?:</execute>|$)", re.DOTALL)

    def system_prompt(self, tools: list[dict[str, Any]]) -> str:
        signatures = "\n\n".join(_python_signature(function) for function in _functions(tools))
        return (
            "You act by writing Python. The functions below are available; call them with keyword "
            "arguments in one ```python block, one call per line, for example:\n"
            '```python\nfunction_name(parameter="value")\n```\n'
            "Write calls only: no imports, assignments or definitions. If no function fits, or a "
            "required argument is missing, answer in plain text without code.\n\n"
            f"```python\n{signatures}\n```"
        )

    def forced_prefix(self, function_name: str | None) -> str:
        return "```python\n" if function_name is None else f"```python\n{function_name}("

    def clean(self, text: str) -> str:
        cleaned = super().clean(text)
        blocks = self._EXECUTE.findall(cleaned)
        if blocks:
            return "```python\n" + "\n".join(block.strip() for block in blocks) + "\n```"
        return cleaned


class NativeFamilyAdapter(OutputAdapter):
    """A model family whose chat template teaches its own call markup (the table in docs/miner.md).

    Its answers are read by scoring.decode, which knows every family's markup; what an adapter
    adds is the start of a forced call, and a prompt in the family's idiom for the rare template
    that cannot render tools itself.
    """

    keeps_special_tokens = True

    def __init__(self, name: str, forced: tuple[str, str]) -> None:
        self.name = name  # type: ignore[misc]
        self._forced_any, self._forced_named = forced

    def system_prompt(self, tools: list[dict[str, Any]]) -> str:
        listing = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
        example = render([Call("function_name", {"parameter": "value"})], self.name)
        return (
            "You may call functions to answer the user. The functions, as JSON schemas:\n"
            f"{listing}\n"
            f"To call a function, write:\n{example}\n"
            "Take argument values from the user's words; do not invent them. If no function fits the "
            "request, or a required argument is missing, answer in plain text and call nothing."
        )

    def render_calls(self, calls: list[tuple[str, Any]]) -> str:
        return str(render([Call(n, a if isinstance(a, dict) else {}) for n, a in calls], self.name))

    def forced_prefix(self, function_name: str | None) -> str:
        if function_name is None:
            return self._forced_any
        return self._forced_any + self._forced_named.format(name=function_name)


class HarmonyAdapter(NativeFamilyAdapter):
    """gpt-oss: an answer without a call is its final channel's text, not the markup."""

    def content_of(self, cleaned: str) -> str:
        final = harmony_final_text(cleaned)
        return cleaned if final is None else final.strip()


# The start of a forced call in each family's markup, and its continuation naming the function.
_FORCED_CALL_STARTS: dict[str, tuple[str, str]] = {
    "qwen3_coder": ("<tool_call>\n<function=", "{name}>\n"),
    "llama3": ('<|python_tag|>{"name": "', '{name}", "parameters": '),
    "llama4": ("<|python_start|>[", "{name}("),
    "mistral": ("[TOOL_CALLS]", "{name}[ARGS]"),
    "deepseek": ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>", "{name}<｜tool▁sep｜>"),
    "deepseek_dsml": ('<｜DSML｜function_calls>\n<｜DSML｜invoke name="', '{name}">\n'),
    "kimi": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.",
        "{name}:0<|tool_call_argument_begin|>",
    ),
    "glm": ("<tool_call>", "{name}\n"),
    "harmony": ("<|channel|>commentary to=functions.", "{name} <|constrain|>json<|message|>"),
    "gemma4": ("<|tool_call>call:", "{name}{{"),
}


def _native_adapter(name: str) -> NativeFamilyAdapter:
    forced = _FORCED_CALL_STARTS[name]
    return HarmonyAdapter(name, forced) if name == "harmony" else NativeFamilyAdapter(name, forced)


_JSON_TO_PYTHON = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "float": "float",
    "boolean": "bool",
    "array": "list",
    "tuple": "list",
    "object": "dict",
    "dict": "dict",
}


def _dict_or_empty(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _python_signature(function: dict[str, Any]) -> str:
    # Any JSON may stand where a schema has a dict or a list: what is not one counts as empty.
    parameters = _dict_or_empty(function.get("parameters"))
    properties = _dict_or_empty(parameters.get("properties"))
    listed = parameters.get("required")
    required = {str(key) for key in listed} if isinstance(listed, list) else set()
    rendered = []
    for key in sorted(properties, key=lambda key: key not in required):
        spec = properties[key] if isinstance(properties[key], dict) else {}
        annotation = _JSON_TO_PYTHON.get(str(spec.get("type")), "object")
        rendered.append(f"{key}: {annotation}" + ("" if key in required else " = None"))
    lines = [f"def {function.get('name', 'function')}({', '.join(rendered)}):"]
    doc = str(function.get("description", "")).strip()
    for key, spec in properties.items():
        if isinstance(spec, dict) and spec.get("description"):
            doc += f"\n    {key}: {spec['description']}"
            if spec.get("enum"):
                doc += f" (one of {spec['enum']})"
    lines.append(f'    """{doc.replace(chr(34) * 3, "")}"""' if doc else "    ...")
    return "\n".join(lines)


ADAPTERS: dict[str, OutputAdapter] = {
    adapter.name: adapter
    for adapter in (
        HermesAdapter(),
        PythonicAdapter(),
        JsonAdapter(),
        CodeActAdapter(),
        *(_native_adapter(name) for name in NATIVE_FORMATS),
    )
}

FORMATS = ("auto", *ADAPTERS)

# Template fingerprints -> the format the template's model was trained on; the first match wins.
# The most specific markup first: Qwen3-Coder's and GLM's templates also write <tool_call>.
_TEMPLATE_FINGERPRINTS: tuple[tuple[Callable[[str], bool], str], ...] = (
    (lambda template: "｜DSML｜" in template, "deepseek_dsml"),
    (lambda template: "tool▁call▁begin" in template or "tool▁calls▁begin" in template, "deepseek"),
    (
        lambda template: (
            "<|tool_call_argument_begin|>" in template or "<|tool_calls_section_begin|>" in template
        ),
        "kimi",
    ),
    (lambda template: "<arg_key>" in template, "glm"),
    (lambda template: "<function=" in template and "<parameter=" in template, "qwen3_coder"),
    (
        lambda template: "<|channel|>" in template and ("to=functions" in template or "<|call|>" in template),
        "harmony",
    ),
    (lambda template: "<|tool_call>" in template, "gemma4"),
    (lambda template: "<|python_start|>" in template, "llama4"),
    (lambda template: "<|python_tag|>" in template, "llama3"),
    (lambda template: '"parameters": dictionary of argument name' in template, "llama3"),
    (lambda template: "[TOOL_CALLS]" in template, "mistral"),
    (lambda template: "<tool_call>" in template, "hermes"),
    (lambda template: "func_name1(" in template or "[func_name(" in template, "pythonic"),
    (lambda template: "<execute>" in template or "```python" in template, "codeact"),
)
# A template that shows no format of its own: the BFCL/BitAgent prompt, which small instruct
# models follow most reliably (see docs/miner.md).
DEFAULT_FORMAT = "pythonic"


def native_format(chat_template: str | None) -> str | None:
    """The format a chat template was written for, when it shows one."""
    for matches, format_name in _TEMPLATE_FINGERPRINTS:
        if chat_template and matches(chat_template):
            return format_name
    return None


def format_for_template(requested: str, chat_template: str | None) -> OutputAdapter:
    """The adapter for ``--model.format`` (``auto``: the template's own format, else the default)."""
    if requested != "auto":
        try:
            return ADAPTERS[requested]
        except KeyError:
            raise ValueError(
                f"unknown model format {requested!r}; choose one of {', '.join(FORMATS)}"
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
        functions = _functions(tools)
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


# Ids of earlier calls as some families' templates need them: Kimi K2's template writes a call's
# id where other templates write its name (the model was trained on functions.NAME:N), and
# Mistral's refuses any id that is not 9 letters or digits.
_HISTORY_CALL_IDS: dict[str, Callable[[str, int], str]] = {
    "kimi": lambda name, number: f"functions.{name}:{number}",
    "mistral": lambda name, number: f"call{number:05d}",
}


def native_history(
    messages: list[dict[str, Any]], adapter: OutputAdapter | None = None, *, arguments_as_text: bool = False
) -> list[dict[str, Any]]:
    """Messages for a template that renders tools itself: call arguments as objects, as most
    templates expect (``arguments_as_text``: JSON strings, for templates that concatenate them, as
    DeepSeek's do); each tool result named after its call, and call ids as the family writes them."""
    answered = _answered_calls(messages)
    style = _HISTORY_CALL_IDS.get(adapter.name) if adapter is not None else None
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
                if style is not None:
                    tool_call["id"] = style(str(function.get("name", "")), number)
                number += 1
                tool_calls.append(tool_call)
            copy["tool_calls"] = tool_calls
        if copy.get("role") == "tool" and position in answered:
            call_number, name = answered[position]
            if name:
                copy.setdefault("name", name)
            if style is not None:
                copy["tool_call_id"] = style(name, call_number)
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
