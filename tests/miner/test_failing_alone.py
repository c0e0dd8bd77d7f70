"""One request's own failure (its prompt cannot be prepared, its guide raises mid-answer, its
answer cannot be read) fails that caller alone: the other callers of the same batch get the
answers they get without it, in both ways of batching, and the backend goes on serving."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from subnet.miner import GenerationRequest, ModelOptions, transformers_backend
from subnet.miner.base import ModelError
from subnet.miner.guided import GuidedCalls
from subnet.miner.transformers_backend import TransformersBackend

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/miner/conftest.py

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
PROMPTS = ["weather in paris", "what is the time in berlin", "book hotel", "search query limit"]
DOOMED = "doomed request about the weather"
BROKEN_BIAS = 12345.0  # marks the doomed row's guide, so the patched guide knows which row it is


def _request(text: str) -> GenerationRequest:
    return GenerationRequest(
        messages=[{"role": "user", "content": text}], tools=[WEATHER], tool_choice="required", max_tokens=40
    )


def generate_only() -> contextlib.AbstractContextManager[Any]:
    """As for a model whose cache cannot be split by row (sliding-window or recurrent layers):
    a backend started inside runs its batches whole, with generate()."""
    return mock.patch.object(transformers_backend, "supports_model", lambda model: False)


@pytest.fixture(params=["continuous", "generate"])
async def backend(tiny_model_dir: Path, request: pytest.FixtureRequest) -> AsyncIterator[TransformersBackend]:
    served = TransformersBackend(
        ModelOptions(path=str(tiny_model_dir), batch_wait_ms=300, max_batch=8, max_new_tokens=40, guided="on")
    )
    with generate_only() if request.param == "generate" else contextlib.nullcontext():
        await served.start()
    assert (served.engine is not None) == (request.param == "continuous")
    yield served
    await served.close()


def _break(backend: TransformersBackend, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the doomed request fail at ``where``; every other request is served as before."""
    real_guide, real_finish = backend._guide, backend._finish

    def guide(request: GenerationRequest, prompt: Any) -> Any:
        doomed = request.messages[0]["content"] == DOOMED
        if doomed and where == "prepare":
            raise KeyError("a schema the guide cannot read")
        made = real_guide(request, prompt)
        return dataclasses.replace(made, call_bias=BROKEN_BIAS) if doomed and made is not None else made

    def finish(prompt: Any, *args: Any, **kwargs: Any) -> Any:
        if where == "read" and DOOMED in prompt.text:
            raise ValueError("the adapter choked on this answer")
        return real_finish(prompt, *args, **kwargs)

    real_choose = GuidedCalls._choose
    shown: dict[tuple[int, int], int] = {}

    def choose(self: GuidedCalls, row: int, *args: Any) -> Any:
        if where == "guide" and self.call_biases[row] == BROKEN_BIAS:
            shown[(id(self), row)] = shown.get((id(self), row), 0) + 1
            if shown[(id(self), row)] == 3:  # mid-answer: two tokens of the call are written
                raise AssertionError("the guide lost its state")
        return real_choose(self, row, *args)

    monkeypatch.setattr(backend, "_guide", guide)
    monkeypatch.setattr(backend, "_finish", finish)
    monkeypatch.setattr(GuidedCalls, "_choose", choose)


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("prepare", "KeyError: 'a schema the guide cannot read'"),
        ("guide", "AssertionError: the guide lost its state"),
        ("read", "ValueError: the adapter choked on this answer"),
    ],
)
async def test_a_request_that_fails_on_its_own_fails_alone(
    backend: TransformersBackend,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    where: str,
    message: str,
) -> None:
    requests = [_request(text) for text in PROMPTS]
    # The doomed request is guided too (dataclasses.replace only moves its bias), so the batch
    # it shares decodes like this one, with it in the same place.
    baseline = await asyncio.gather(
        *(backend.generate(request) for request in [*requests[:2], _request(DOOMED), *requests[2:]])
    )
    _break(backend, where, monkeypatch)
    batches = backend.batches_run
    with caplog.at_level(logging.ERROR, logger="subnet.miner"):
        results = await asyncio.gather(
            *(backend.generate(request) for request in [*requests[:2], _request(DOOMED), *requests[2:]]),
            return_exceptions=True,
        )
    assert backend.batches_run == batches + 1  # all five were in one batch
    failed = results.pop(2)
    assert isinstance(failed, ModelError) and str(failed) == f"generation failed: {message}"
    baseline.pop(2)
    for result, expected in zip(results, baseline, strict=True):
        assert not isinstance(result, BaseException), result
        assert result.raw_text == expected.raw_text
        assert result.tool_calls == expected.tool_calls
    logged = [record for record in caplog.records if record.exc_info]
    assert len(logged) == 1 and "failed for one request" in logged[0].getMessage()
    # and the backend goes on: the same requests, the doomed one no longer doomed
    monkeypatch.undo()
    again = await asyncio.gather(*(backend.generate(request) for request in requests))
    assert [result.raw_text for result in again] == [expected.raw_text for expected in baseline]
