"""The phrasing engines that run a model, on the miner's own backends.

``openai``: any OpenAI-compatible endpoint (vLLM, SGLang, a llama.cpp server), through the
miner's ``OpenAIBackend`` (timeouts, a 4 MiB answer cap, API key from an environment variable).
``transformers``: a local model folder through the miner's batched ``TransformersBackend`` (GPU
where present). Either answers its own phrasings with tools for ``--phrasing.verify solve``.
"""

from __future__ import annotations

from typing import Any

from subnet.miner.backends import build_backend
from subnet.miner.base import EngineTimeout, GenerationRequest, ModelError, ModelOptions
from subnet.phrasing import PhrasingSetupError
from tasks.phrasing import EngineAnswer, PhrasingRequest

__all__ = ["OpenAIEngine", "TransformersEngine"]


class _BackendEngine:
    """A phrasing engine over a miner backend."""

    name = ""
    rewrites = True

    def __init__(self, settings: Any, options: ModelOptions) -> None:
        self.settings = settings
        self.backend = build_backend(options)

    async def start(self) -> None:
        await self.backend.start()

    async def close(self) -> None:
        await self.backend.close()

    def describe(self) -> str:
        return str(self.backend.describe())

    async def write(self, request: PhrasingRequest) -> EngineAnswer:
        try:
            result = await self.backend.generate(
                GenerationRequest(
                    messages=list(request.messages),
                    max_tokens=self.settings.max_tokens,
                    temperature=self.settings.temperature,
                )
            )
        except ModelError as error:
            return EngineAnswer(None, error="timeout" if isinstance(error, EngineTimeout) else "engine_error")
        usage = result.usage
        if result.tool_calls or not isinstance(result.content, str):
            return EngineAnswer(None, usage.prompt_tokens, usage.completion_tokens, error="not_text")
        return EngineAnswer(result.content, usage.prompt_tokens, usage.completion_tokens)

    async def solve(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        result = await self.backend.generate(
            GenerationRequest(messages=messages, tools=tools, tool_choice="auto", temperature=0.0)
        )
        if result.tool_calls:
            return {"role": "assistant", "content": None, "tool_calls": result.tool_calls}
        return result.content or ""


class OpenAIEngine(_BackendEngine):
    """Rewordings from an OpenAI-compatible endpoint (``--phrasing.url``, ``--phrasing.model``)."""

    name = "openai"

    def __init__(self, settings: Any) -> None:
        if not settings.url:
            raise PhrasingSetupError(
                "--phrasing.engine openai needs --phrasing.url (the endpoint's http:// URL)"
            )
        options = ModelOptions(
            backend="openai",
            base_url=settings.url,
            name=settings.model,
            api_key_env=settings.api_key_env,
            timeout=settings.timeout,
            max_new_tokens=max(settings.max_tokens, 256),
        )
        super().__init__(settings, options)


class TransformersEngine(_BackendEngine):
    """Rewordings from a local model folder (``--phrasing.path``; ``demo`` is the demo model)."""

    name = "transformers"

    def __init__(self, settings: Any) -> None:
        if not settings.path:
            raise PhrasingSetupError(
                "--phrasing.engine transformers needs --phrasing.path (a local model folder, or demo)"
            )
        options = ModelOptions(
            backend="transformers",
            path=settings.path,
            device=settings.device,
            timeout=settings.timeout,
            max_new_tokens=max(settings.max_tokens, 256),
            max_batch=max(1, min(settings.concurrency, 32)),
        )
        super().__init__(settings, options)
