"""The miner's model layer in plain data: what a backend is asked, what it answers, how it fails.

Everything here speaks OpenAI chat data as plain dicts (messages, tools, tool_choice), so the
backends and adapters are usable and testable without the wire models; `subnet.miner.service`
converts from and to `subnet.protocol`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from subnet.config import ModelSettings
from subnet.metrics import Reading


class ModelError(Exception):
    """A request the model layer could not answer. ``status`` is the HTTP status to answer with."""

    status = 500
    kind = "model_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadModelRequest(ModelError):
    """The request itself cannot be served (prompt too long, template refuses the messages)."""

    status = 400
    kind = "bad_request"


class EngineUnavailable(ModelError):
    """The model engine cannot be reached or answered with a server error."""

    status = 503
    kind = "engine_unavailable"


class EngineFailed(ModelError):
    """The model engine failed on this request (HTTP 500 with its own error: a chat template that
    cannot render the messages, an assertion): not an outage, and no sign of load."""

    status = 502
    kind = "engine_error"


class EngineTimeout(ModelError):
    """The model engine did not answer within the configured time."""

    status = 504
    kind = "engine_timeout"


class ModelLoadError(Exception):
    """The model could not be loaded (bad path, missing package). The message is one line for a user."""


@dataclass(frozen=True)
class ModelOptions(ModelSettings):
    """How to load and run the model: the miner's `--model.*` settings plus what only code sets."""

    # Where `--model.path demo` keeps its converted folder; None: $SUBNET_MODEL_CACHE or the user cache.
    cache_dir: str | None = None

    @classmethod
    def from_settings(cls, settings: Any, **overrides: Any) -> ModelOptions:
        """Copy the same-named attributes of a settings object (e.g. `ModelSettings`)."""
        values = {f.name: getattr(settings, f.name) for f in fields(cls) if hasattr(settings, f.name)}
        values.update(overrides)
        return cls(**values)

    @property
    def served_name(self) -> str:
        """The model name reported to callers."""
        if self.name:
            return self.name
        return self.path or self.backend


@dataclass(frozen=True)
class GenerationRequest:
    """One chat completion to produce. ``max_tokens`` None: the backend's cap."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: str | dict[str, Any] | None = None
    max_tokens: int | None = None
    temperature: float | None = None


@dataclass(frozen=True)
class Usage:
    """Token counts of one completion."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class GenerationResult:
    """A completion: OpenAI ``tool_calls`` (arguments as JSON strings) or ``content``.

    ``raw_text`` is what the model wrote (before decoding), kept for logs and tests.
    """

    tool_calls: list[dict[str, Any]] | None
    content: str | None
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = "stop"
    raw_text: str = ""


class Backend(Protocol):
    """A model that answers chat completions; `start` loads, `close` frees."""

    options: ModelOptions

    async def start(self) -> None: ...

    async def generate(self, request: GenerationRequest) -> GenerationResult: ...

    async def close(self) -> None: ...

    def describe(self) -> str:
        """One phrase for the start-up log line: what is served, on what."""
        ...

    def readings(self) -> list[Reading]:
        """The figures the backend keeps that the miner's /metrics shows (none for a remote engine,
        which has its own)."""
        ...
