"""A request rendered with the model's chat template (`build_prompt`): the text the model
continues, the forced start of its answer and what the answer may hold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scoring.schema import function_of
from subnet.miner.adapters import (
    OutputAdapter,
    forced_function,
    history_forms,
    native_format,
    template_takes_tools,
)
from subnet.miner.base import GenerationRequest


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt: the text the model continues, the forced start of its answer, whether
    the answer may hold calls (``tool_choice: none`` says it may not), and, when a call is
    required but the function is not named, the continuations it must start with (one per tool:
    the function's name and what follows it in the format)."""

    text: str
    prefix: str
    allow_calls: bool
    choices: tuple[str, ...] = ()
    native: bool = False  # the chat template rendered the tools itself
    tools: tuple[dict[str, Any], ...] = ()  # offered, to type the values some families write as text


def build_prompt(
    tokenizer: Any, adapter: OutputAdapter, requested_format: str, request: GenerationRequest
) -> Prompt:
    """Render a request with the model's chat template.

    The template's own tool rendering (``tools=``) is used when it has one and it speaks the
    chosen format; otherwise the adapter's system prompt describes the tools. Earlier calls and
    their results go in the first form of the history that the template accepts (`history_forms`).
    """
    template = getattr(tokenizer, "chat_template", None)
    template = template if isinstance(template, str) else None
    tools = [] if request.tool_choice == "none" else list(request.tools)
    native = template_takes_tools(template) and (
        requested_format == "auto" or native_format(template) == adapter.name
    )
    extra: dict[str, Any] = {"tools": tools} if native and tools else {}
    refusal: Exception | None = None
    for messages in history_forms(adapter, request.messages, tools, native=native):
        try:
            text = tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True, **extra
            )
            break
        except Exception as error:  # the template refuses this form: try the next one
            refusal = refusal or error
    else:
        assert refusal is not None
        raise refusal
    must_call, function_name = forced_function(request.tool_choice, tools)
    prefix = adapter.forced_prefix(function_name) if must_call and tools else ""
    choices: tuple[str, ...] = ()
    if must_call and tools and function_name is None:
        names = [str(function_of(tool).get("name", "")) for tool in tools]
        choices = tuple(adapter.forced_prefix(name)[len(prefix) :] for name in names if name)
    return Prompt(
        text=str(text) + prefix,
        prefix=prefix,
        allow_calls=bool(tools),
        choices=choices,
        native=native,
        tools=tuple(tools),
    )
