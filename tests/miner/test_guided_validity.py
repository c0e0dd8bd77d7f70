"""Guided calls are schema-valid, every one: generated tasks in each guided format (the miner's own
grammars and the families' markups through xgrammar's structural tags), decoded by the tiny random
Llama (whose own choices are noise, so only the guide makes them calls), every call checked
against the offered tool's schema (the episode runner's check and the project's BFCL checker).
The suite runs 100 tasks a format; bench/guided_validity.py runs the 500 of the figure."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

import tasks
from scoring.checking import check
from subnet.miner import GenerationRequest, ModelOptions, build_backend
from subnet.miner.adapters import ADAPTERS
from subnet.miner.base import BadModelRequest
from subnet.miner.guided import GUIDED_FORMATS, guided_format_names
from subnet.miner.transformers_backend import TransformersBackend
from tasks.episodes.arguments import schema_error

pytestmark = pytest.mark.slow

TASKS = tasks.generate("guided-validity", 100)
# The families' markups, spelled by the tiny model's 600-token vocabulary, take many tokens (a
# GLM call with six required arguments needs over 96 for its tags; a DSML call with five, empty
# strings and all, over 256): fewer tasks, more tokens.
MARKUP_TASKS, MARKUP_TOKENS = 40, 320


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guided(one_torch_thread: None, tiny_model_dir: Path) -> AsyncIterator[TransformersBackend]:
    backend = build_backend(
        ModelOptions(
            path=str(tiny_model_dir),
            guided="on",
            max_new_tokens=MARKUP_TOKENS,
            batch_wait_ms=20,
            max_batch=16,
        )
    )
    assert isinstance(backend, TransformersBackend)
    await backend.start()
    yield backend
    await backend.close()


def _acceptable(value: Any) -> Any:
    """A value in BFCL's possible-answer form (nested dicts list their acceptable values)."""
    if isinstance(value, dict):
        return {key: [_acceptable(item)] for key, item in value.items()}
    if isinstance(value, list):
        return [_acceptable(item) if isinstance(item, dict) else item for item in value]
    return value


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("format_name", sorted(guided_format_names()))
async def test_every_guided_call_is_schema_valid(guided: TransformersBackend, format_name: str) -> None:
    guided.adapter = ADAPTERS[format_name]
    chosen, budget = (TASKS, 96) if format_name in GUIDED_FORMATS else (TASKS[:MARKUP_TASKS], MARKUP_TOKENS)
    requests = [
        GenerationRequest(messages=task.messages, tools=task.tools, tool_choice="required", max_tokens=budget)
        for task in chosen
    ]
    answers = await asyncio.gather(
        *(guided.generate(request) for request in requests), return_exceptions=True
    )
    # the tiny model holds 2,048 positions: the prompts longer than that (its tokenizer spells
    # words in many pieces; a task offers up to a dozen tools, lookalikes included, and its
    # request states context sentences) are refused before decoding, as the miner refuses them:
    # about one in four
    served = [
        (task, answer)
        for task, answer in zip(chosen, answers, strict=True)
        if not isinstance(answer, BadModelRequest)
    ]
    assert len(served) >= 0.6 * len(chosen) and not any(
        isinstance(answer, BaseException) for _, answer in served
    )
    invalid = []
    calls = 0
    for task, result in served:
        assert not isinstance(result, BaseException)
        functions = {tool["function"]["name"]: tool["function"] for tool in task.tools}
        if not result.tool_calls:
            invalid.append(("no call", result.raw_text))
            continue
        for tool_call in result.tool_calls:
            calls += 1
            name = tool_call["function"]["name"]
            arguments = json.loads(tool_call["function"]["arguments"])
            error = (
                schema_error(arguments, functions[name]["parameters"])
                if name in functions
                else "unknown tool"
            )
            if error is not None:
                invalid.append((error, result.raw_text))
        expected = [
            {
                call["function"]["name"]: {
                    key: [_acceptable(value)]
                    for key, value in json.loads(call["function"]["arguments"]).items()
                }
            }
            for call in result.tool_calls
        ]
        verdict = check(result.tool_calls, list(functions.values()), expected, "parallel")
        if not verdict.valid:
            invalid.append((verdict.message, result.raw_text))
    assert calls >= len(served)
    assert invalid == [], f"{len(invalid)} of {calls} calls invalid; first: {invalid[:3]}"
