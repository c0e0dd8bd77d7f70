"""How the transformers backend feeds its continuous-batching engine: a caller answered at one
step that sends its next request at once has it admitted at the very next step (not one later),
while the other rows keep decoding."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from subnet.miner import GenerationRequest, ModelOptions
from subnet.miner.continuous_batching import Row
from subnet.miner.transformers_backend import TransformersBackend

pytest.importorskip("torch")
pytest.importorskip("transformers")


def _request(text: str, max_tokens: int) -> GenerationRequest:
    return GenerationRequest(messages=[{"role": "user", "content": text}], max_tokens=max_tokens)


async def test_a_caller_answered_at_a_step_joins_at_the_next_one(tiny_model_dir: Path) -> None:
    backend = TransformersBackend(ModelOptions(path=str(tiny_model_dir), batch_wait_ms=50, max_batch=4))
    await backend.start()
    engine = backend.engine
    assert engine is not None
    steps = 0
    finished_at: dict[Any, int] = {}
    admitted_at: list[int] = []
    real_step, real_admit = engine.step, engine.admit

    def step() -> list[Row]:
        nonlocal steps
        done = real_step()
        steps += 1
        finished_at.update((row.key, steps) for row in done)
        return done

    def admit(rows: list[Row]) -> list[Row]:
        admitted_at.append(steps)
        done = real_admit(rows)
        finished_at.update((row.key, steps) for row in done)
        return done

    engine.step = step  # type: ignore[method-assign]
    engine.admit = admit  # type: ignore[method-assign]

    async def one_after_another() -> None:
        for text in ("weather in paris", "book hotel", "what is the time in berlin"):
            await backend.generate(_request(text, max_tokens=3))

    try:
        await asyncio.gather(
            one_after_another(), backend.generate(_request("search query limit list files", max_tokens=60))
        )
    finally:
        await backend.close()
    # Keys in arrival order: 0, 2, 3 the follow-ups' chain, 1 the long request. The first
    # admission took 0 and 1; each follow-up is admitted at the step count where the request
    # before it finished (not one step later), while the long one was still decoding.
    assert len(admitted_at) == 3
    assert admitted_at[1:] == [finished_at[0], finished_at[2]]
    assert finished_at[1] > admitted_at[2]
