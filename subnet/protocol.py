"""Wire models for the miner endpoint: the OpenAI chat-completions subset, with explicit limits.

Both directions are validated with these models: the miner parses a validator's request with
`ChatCompletionRequest`, the validator parses a miner's answer with `ChatCompletionResponse`.
Every list and string carries an upper bound so that a hostile peer cannot make the other
side allocate or validate unbounded data; the byte size of a whole body is capped before
parsing (the transport enforces `MAX_REQUEST_BODY_BYTES` / `MAX_RESPONSE_BODY_BYTES`).
Unknown fields are ignored rather than refused, so that any OpenAI client and any
OpenAI-compatible engine (vLLM, SGLang, llama.cpp server) interoperates.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# Whole-body caps, enforced by the transport before any parsing.
MAX_REQUEST_BODY_BYTES = 1 << 20
MAX_RESPONSE_BODY_BYTES = 1 << 20

# Structural caps. Generous for tool-calling tasks (BFCL's largest prompts hold a few dozen
# functions and a handful of turns) and for a multi-turn episode's history (8 turns of up to 10
# steps, each step an assistant message and its tool results), while bounding validation work;
# the body cap bounds the total.
MAX_MESSAGES = 256
MAX_MESSAGE_CHARS = 64_000
MAX_CONTENT_PARTS = 16
MAX_TOOLS = 128
MAX_NAME_CHARS = 256
MAX_DESCRIPTION_CHARS = 8_000
MAX_MODEL_CHARS = 256
MAX_ID_CHARS = 256
MAX_TOOL_CALLS = 64
MAX_ARGUMENTS_CHARS = 64_000
MAX_CHOICES = 8
MAX_MAX_TOKENS = 32_768
MAX_ERROR_MESSAGE_CHARS = 2_000

Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
Identifier = Annotated[str, Field(max_length=MAX_ID_CHARS)]


class _WireModel(BaseModel):
    """Common configuration: unknown fields are ignored, instances are immutable."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class FunctionCall(_WireModel):
    """The function half of a tool call; `arguments` is always a JSON string on our side."""

    name: Name
    arguments: str = Field(default="{}", max_length=MAX_ARGUMENTS_CHARS)

    @field_validator("arguments", mode="before")
    @classmethod
    def _object_arguments_to_json(cls, value: Any) -> Any:
        # Some engines send the arguments as an object; normalise so consumers see one form.
        # Only re-serialisation, never evaluation.
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False)
        return value


class ToolCall(_WireModel):
    """One OpenAI tool call in an assistant message."""

    id: Identifier = ""
    type: Literal["function"] = "function"
    function: FunctionCall


class TextPart(_WireModel):
    """One text part of a message whose content is a list of parts."""

    type: Literal["text"] = "text"
    text: str = Field(max_length=MAX_MESSAGE_CHARS)


class Message(_WireModel):
    """A chat message (system, user, assistant or tool)."""

    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list[TextPart] | None = Field(default=None)
    name: Name | None = None
    tool_calls: list[ToolCall] | None = Field(default=None, max_length=MAX_TOOL_CALLS)
    tool_call_id: Identifier | None = None

    @field_validator("content")
    @classmethod
    def _bounded_content(cls, value: str | list[TextPart] | None) -> str | list[TextPart] | None:
        if isinstance(value, str) and len(value) > MAX_MESSAGE_CHARS:
            raise ValueError(f"message content longer than {MAX_MESSAGE_CHARS} characters")
        if isinstance(value, list) and len(value) > MAX_CONTENT_PARTS:
            raise ValueError(f"more than {MAX_CONTENT_PARTS} content parts")
        return value

    def text(self) -> str:
        """The message's text, parts joined; empty when it has none."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text for part in self.content)


class FunctionDefinition(_WireModel):
    """An OpenAI function schema. `parameters` stays a free-form JSON Schema object (BFCL's
    `"type": "dict"` included); its size is bounded by the body cap."""

    name: Name
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)
    parameters: dict[str, Any] = Field(default_factory=dict)


class Tool(_WireModel):
    """An OpenAI function tool."""

    type: Literal["function"] = "function"
    function: FunctionDefinition


class NamedToolChoice(_WireModel):
    """`tool_choice` forcing one named function."""

    class Target(_WireModel):
        name: Name

    type: Literal["function"] = "function"
    function: Target


ToolChoice = Literal["auto", "none", "required"] | NamedToolChoice


class ChatCompletionRequest(_WireModel):
    """The request a validator sends to a miner (OpenAI chat-completions subset)."""

    model: str = Field(default="", max_length=MAX_MODEL_CHARS)
    messages: list[Message] = Field(min_length=1, max_length=MAX_MESSAGES)
    tools: list[Tool] | None = Field(default=None, max_length=MAX_TOOLS)
    tool_choice: ToolChoice | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_MAX_TOKENS)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)

    @model_validator(mode="after")
    def _tool_choice_names_an_offered_tool(self) -> ChatCompletionRequest:
        # As OpenAI does: a call cannot be required without tools, nor of a function not
        # offered. Served anyway, the model would be made to call a function the caller does
        # not know, and an OpenAI-compatible engine behind the miner refuses it.
        choice = self.tool_choice
        names = {tool.function.name for tool in self.tools or []}
        if choice == "required" and not names:
            raise ValueError("tool_choice 'required' needs tools")
        if isinstance(choice, NamedToolChoice) and choice.function.name not in names:
            raise ValueError("tool_choice names a function that is not among the tools")
        return self

    def to_body(self) -> bytes:
        """The canonical JSON body to sign and send (unset optional fields left out)."""
        return self.model_dump_json(exclude_none=True).encode()


class AssistantMessage(_WireModel):
    """The miner's answer: tool calls or plain content (or both, as OpenAI allows)."""

    role: Literal["assistant"] = "assistant"
    content: str | None = Field(default=None, max_length=MAX_MESSAGE_CHARS)
    tool_calls: list[ToolCall] | None = Field(default=None, max_length=MAX_TOOL_CALLS)


class Choice(_WireModel):
    """One completion choice; the validator scores choices[0]."""

    index: int = Field(default=0, ge=0)
    message: AssistantMessage
    finish_reason: str | None = Field(default=None, max_length=64)


class Usage(_WireModel):
    """Token accounting as the miner reports it (informational, not trusted for scoring)."""

    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    total_tokens: int = Field(default=0, ge=0)


class ChatCompletionResponse(_WireModel):
    """The miner's answer (an OpenAI chat completion)."""

    id: Identifier = ""
    object: str = Field(default="chat.completion", max_length=64)
    created: int = 0
    model: str = Field(default="", max_length=MAX_MODEL_CHARS)
    choices: list[Choice] = Field(min_length=1, max_length=MAX_CHOICES)
    usage: Usage | None = None

    @property
    def message(self) -> AssistantMessage:
        """The first choice's message, the one that is scored."""
        return self.choices[0].message

    def to_body(self) -> bytes:
        """The JSON body a miner sends."""
        return self.model_dump_json(exclude_none=True).encode()


class ErrorDetail(_WireModel):
    """Machine-readable error type and a human-readable message (never a traceback)."""

    type: str = Field(max_length=64)
    message: str = Field(default="", max_length=MAX_ERROR_MESSAGE_CHARS)


class ErrorBody(_WireModel):
    """Every error the miner returns: `{"error": {"type": ..., "message": ...}}`."""

    error: ErrorDetail

    @classmethod
    def of(cls, error_type: str, message: str) -> ErrorBody:
        return cls(error=ErrorDetail(type=error_type, message=message[:MAX_ERROR_MESSAGE_CHARS]))

    def to_body(self) -> bytes:
        return self.model_dump_json().encode()
