"""The thin layer between the wire protocol and the model layer.

`MinerModel.handle` is the transport's chat handler: a `ChatCompletionRequest` from an
authenticated caller -> plain dicts -> the backend -> a `ChatCompletionResponse`. A model error
becomes the transport's `Refusal` with a matching error type (400 bad request, 503 engine down,
504 engine slow), so the caller gets a JSON error, never a traceback.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from pydantic import ValidationError

from subnet.miner.base import (
    Backend,
    BadModelRequest,
    EngineFailed,
    EngineTimeout,
    EngineUnavailable,
    GenerationRequest,
    GenerationResult,
    ModelError,
)
from subnet.protocol import (
    MAX_ID_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_TOOL_CALLS,
    AssistantMessage,
    ChatCompletionRequest,
    ChatCompletionResponse,
    Choice,
    FunctionCall,
    ToolCall,
    Usage,
)
from subnet.transport import Refusal

log = logging.getLogger(__name__)

MAX_FINISH_REASON_CHARS = 64  # Choice.finish_reason's bound on the wire

# Model error -> the transport's refusal type (see subnet.transport.refusals.REFUSAL_STATUS).
_REFUSAL_TYPES: dict[type[ModelError], str] = {
    BadModelRequest: "invalid_request",
    EngineUnavailable: "overloaded",
    EngineFailed: "engine_error",
    EngineTimeout: "handler_timeout",
}


def to_generation_request(request: ChatCompletionRequest) -> GenerationRequest:
    """The wire request as plain OpenAI dicts."""
    tool_choice: str | dict[str, Any] | None
    if request.tool_choice is None or isinstance(request.tool_choice, str):
        tool_choice = request.tool_choice
    else:
        tool_choice = request.tool_choice.model_dump()
    return GenerationRequest(
        messages=[message.model_dump(exclude_none=True) for message in request.messages],
        tools=[tool.model_dump(exclude_none=True) for tool in request.tools or []],
        tool_choice=tool_choice,
        max_tokens=request.max_tokens,
        temperature=request.temperature,
    )


def to_response(result: GenerationResult, model_name: str) -> ChatCompletionResponse:
    """A backend result as the OpenAI chat completion the caller reads."""
    tool_calls = _wire_calls(result.tool_calls)
    finish_reason = result.finish_reason
    content = None
    if tool_calls is None:
        # No calls, or calls the wire cannot carry: the model's text is the answer.
        content = (result.content or result.raw_text or "")[:MAX_MESSAGE_CHARS]
        finish_reason = "stop" if finish_reason == "tool_calls" else finish_reason
    message = AssistantMessage(content=content, tool_calls=tool_calls)
    return ChatCompletionResponse(
        id=f"chatcmpl-{uuid.uuid4().hex}",
        created=int(time.time()),
        model=model_name,
        choices=[Choice(index=0, message=message, finish_reason=finish_reason[:MAX_FINISH_REASON_CHARS])],
        usage=Usage(
            prompt_tokens=result.usage.prompt_tokens,
            completion_tokens=result.usage.completion_tokens,
            total_tokens=result.usage.total_tokens,
        ),
    )


def _wire_calls(calls: list[dict[str, Any]] | None) -> list[ToolCall] | None:
    """The result's calls as wire tool calls; None when there are none or when they do not fit
    the protocol's bounds. A model can be talked into writing a function name longer than a
    name may be, or more calls than a message holds (an engine too); the answer must still be
    a valid completion, not a 500."""
    if not calls or len(calls) > MAX_TOOL_CALLS:
        return None
    try:
        return [
            ToolCall(
                id=str(call.get("id") or f"call_{index}")[:MAX_ID_CHARS],
                function=FunctionCall(
                    name=call["function"]["name"], arguments=call["function"].get("arguments", "{}")
                ),
            )
            for index, call in enumerate(calls)
        ]
    except ValidationError as error:
        log.info("calls that do not fit the wire answered as text: %s", error.errors()[0]["msg"])
        return None


class MinerModel:
    """A started backend, served as the transport's chat handler."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.model_name = backend.options.served_name

    async def handle(self, request: ChatCompletionRequest, caller: Any) -> ChatCompletionResponse:
        """Answer one authenticated request (the `ChatHandler` of `subnet.transport`)."""
        try:
            result = await self.backend.generate(to_generation_request(request))
        except ModelError as error:
            refusal_type = _REFUSAL_TYPES.get(type(error), "internal_error")
            log.debug("request from uid %s refused: %s", getattr(caller, "uid", "?"), error.message)
            raise Refusal(refusal_type, error.message) from None
        return to_response(result, self.model_name)
