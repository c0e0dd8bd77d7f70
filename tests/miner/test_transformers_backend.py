"""The transformers backend on a tiny random Llama built in a fixture: loading, templates with
tools, dynamic batching that keeps every answer with its own caller, failures kept to one batch."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from subnet.metrics import new_registry, register_readings
from subnet.miner import GenerationRequest, ModelLoadError, ModelOptions, build_backend, transformers_backend
from subnet.miner.base import BadModelRequest, ModelError
from subnet.miner.transformers_backend import TransformersBackend, build_prompt

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}

# Prompts of different content and length, so rows are padded differently in a batch.
PROMPTS = [
    "weather in paris",
    "how much is the stock price of symbol for the flight to tokyo please",
    "book hotel",
    "convert currency amount from to list files read path json python code block",
    "what is the time in berlin",
    "search query limit",
]


def _shown(backend: TransformersBackend) -> dict[str, float]:
    """The backend's figures as the miner's /metrics shows them."""
    registry = new_registry()
    register_readings(registry, backend.readings())
    return {sample.name: sample.value for family in registry.collect() for sample in family.samples}


def _request(text: str, max_tokens: int = 12, **extra: Any) -> GenerationRequest:
    return GenerationRequest(
        messages=[{"role": "user", "content": text}], tools=[WEATHER], max_tokens=max_tokens, **extra
    )


def generate_only() -> contextlib.AbstractContextManager[Any]:
    """As for a model whose cache cannot be split by row (sliding-window or recurrent layers):
    a backend started inside runs its batches whole, with generate()."""
    return mock.patch.object(transformers_backend, "supports_model", lambda model: False)


async def _started(folder: Path, *, continuous: bool = True, **options: Any) -> TransformersBackend:
    """A started backend; ``continuous`` False: as for a model whose cache cannot be split by
    row, batches run whole with generate()."""
    backend = build_backend(ModelOptions(path=str(folder), **options))
    assert isinstance(backend, TransformersBackend)
    with generate_only() if not continuous else contextlib.nullcontext():
        await backend.start()
    assert (backend.engine is not None) == continuous
    return backend


# Both ways of batching: rows joining a running batch (the default where the model allows it)
# and generate() on left-padded batches (models whose cache cannot be split by row).
@pytest.fixture(params=["continuous", "generate"])
async def batching(
    tiny_model_dir: Path, request: pytest.FixtureRequest
) -> AsyncIterator[TransformersBackend]:
    backend = await _started(
        tiny_model_dir,
        continuous=request.param == "continuous",
        batch_wait_ms=300,
        max_batch=8,
        max_new_tokens=24,
    )
    yield backend
    await backend.close()


@pytest.fixture
async def one_at_a_time(tiny_model_dir: Path) -> AsyncIterator[TransformersBackend]:
    backend = await _started(tiny_model_dir, batch_wait_ms=0, max_batch=1, max_new_tokens=24)
    yield backend
    await backend.close()


async def test_loads_on_cpu_in_float32_with_the_templates_format(batching: TransformersBackend) -> None:
    assert (batching.device, batching.dtype) == ("cpu", "float32")
    assert batching.adapter is not None and batching.adapter.name == "hermes"
    assert "transformers, cpu float32, format hermes" in batching.describe()


async def test_the_chat_template_renders_the_tools(batching: TransformersBackend) -> None:
    assert batching.adapter is not None
    prompt = build_prompt(batching.tokenizer, batching.adapter, "auto", _request("weather in paris"))
    assert '"name": "get_weather"' in prompt.text and "<tools>" in prompt.text
    assert prompt.text.endswith("<|im_start|>assistant\n") and prompt.prefix == "" and prompt.allow_calls
    forced = build_prompt(
        batching.tokenizer,
        batching.adapter,
        "auto",
        _request("weather", tool_choice={"type": "function", "function": {"name": "get_weather"}}),
    )
    assert forced.text.endswith('<tool_call>\n{"name": "get_weather", "arguments": ')
    silent = build_prompt(
        batching.tokenizer, batching.adapter, "auto", _request("weather", tool_choice="none")
    )
    assert "<tools>" not in silent.text and not silent.allow_calls


async def test_a_template_without_tools_gets_the_adapters_prompt(plain_tiny_model_dir: Path) -> None:
    backend = await _started(plain_tiny_model_dir, format="json", max_new_tokens=4)
    try:
        assert backend.adapter is not None and backend.adapter.name == "json"
        prompt = build_prompt(backend.tokenizer, backend.adapter, "json", _request("weather in paris"))
        assert prompt.text.startswith("<|im_start|>system\nYou choose function calls.")
        assert "get_weather" in prompt.text
        result = await backend.generate(_request("weather in paris", max_tokens=4))
        assert result.usage.completion_tokens <= 4
    finally:
        await backend.close()


async def test_concurrent_requests_are_batched_and_each_gets_its_own_answer(
    batching: TransformersBackend, one_at_a_time: TransformersBackend
) -> None:
    budgets = [6 + 3 * index for index in range(len(PROMPTS))]
    requests = [_request(text, budget) for text, budget in zip(PROMPTS, budgets, strict=True)]

    batched = await asyncio.gather(*(batching.generate(request) for request in requests))
    alone = [await one_at_a_time.generate(request) for request in requests]

    assert _shown(batching)["subnet_miner_batches_total"] == 1  # all six started together
    assert _shown(one_at_a_time)["subnet_miner_batches_total"] == len(requests)
    if batching.engine is not None:  # the running batch's decoding steps (none from CUDA graphs on a CPU)
        shown = _shown(batching)
        assert shown["subnet_miner_decode_steps_total"] > 0
        assert shown["subnet_miner_decode_steps_replayed_total"] == 0
    if batching.engine is not None and batching.engine.prefixes is not None:  # shown once there is a store
        assert {"subnet_miner_prefix_reused_tokens_total", "subnet_miner_prefilled_tokens_total"} < set(
            _shown(batching)
        )
    # Greedy decoding: a left-padded row decodes exactly as the same prompt alone.
    assert [result.raw_text for result in batched] == [result.raw_text for result in alone]
    assert len({result.raw_text for result in batched}) == len(requests)  # answers are distinguishable
    for result, budget in zip(batched, budgets, strict=True):
        assert 0 < result.usage.completion_tokens <= budget
        assert result.usage.prompt_tokens > 0
        assert result.finish_reason in {"stop", "length", "tool_calls"}


async def test_batches_form_while_the_model_is_busy(tiny_model_dir: Path) -> None:
    backend = await _started(tiny_model_dir, batch_wait_ms=0, max_batch=4, max_new_tokens=8)
    try:
        results = await asyncio.gather(*(backend.generate(_request(text, 8)) for text in PROMPTS * 2))
        assert len(results) == 12
        # With no wait the first request goes alone; the rest queue up behind it in batches of <= 4.
        assert 3 <= backend.batches_run < 12
    finally:
        await backend.close()


async def test_max_tokens_caps_each_row(batching: TransformersBackend) -> None:
    short, long = await asyncio.gather(
        batching.generate(_request(PROMPTS[1], 2)), batching.generate(_request(PROMPTS[1], 20))
    )
    assert short.usage.completion_tokens <= 2
    assert long.raw_text.startswith(short.raw_text)


async def test_a_model_answer_in_the_format_becomes_tool_calls(batching: TransformersBackend) -> None:
    prompt = build_prompt(
        batching.tokenizer,
        batching.adapter,  # type: ignore[arg-type]
        "auto",
        _request("weather", tool_choice={"type": "function", "function": {"name": "get_weather"}}),
    )
    continuation = batching.tokenizer('{"city": "Paris"}}\n</tool_call>', add_special_tokens=False)[
        "input_ids"
    ]
    eos = batching.tokenizer.eos_token_id
    result = batching._finish(prompt, 10, [*continuation, eos, eos], budget=40)
    assert result.finish_reason == "tool_calls"
    assert result.content is None and result.tool_calls is not None
    assert result.tool_calls[0]["function"]["name"] == "get_weather"
    assert json.loads(result.tool_calls[0]["function"]["arguments"]) == {"city": "Paris"}
    assert result.usage.completion_tokens == len(continuation) + 1


async def test_a_failing_batch_fails_only_its_callers(
    batching: TransformersBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_generate = batching.model.generate
    calls = {"n": 0}

    def generate_once_broken(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("CUDA error: device-side assert triggered")
        return real_generate(*args, **kwargs)

    monkeypatch.setattr(batching.model, "generate", generate_once_broken)
    real_forward = batching.model.forward

    def forward_once_broken(*args: Any, **kwargs: Any) -> Any:
        # The continuous engine's shared pass is a decoding step (one new token per row); a row's
        # own prefill failing fails that row alone (tests/miner/test_failing_alone.py).
        if kwargs["input_ids"].shape[1] == 1:
            calls["n"] += 1
            if calls["n"] == 1:
                raise RuntimeError("CUDA error: device-side assert triggered")
        return real_forward(*args, **kwargs)

    monkeypatch.setattr(batching.model, "forward", forward_once_broken)
    failed = await asyncio.gather(
        *(batching.generate(_request(text)) for text in PROMPTS[:3]), return_exceptions=True
    )
    assert all(isinstance(error, ModelError) and "generation failed" in str(error) for error in failed)
    after = await asyncio.gather(*(batching.generate(_request(text)) for text in PROMPTS[:3]))
    assert all(result.usage.completion_tokens > 0 for result in after)


async def test_an_oversized_prompt_fails_alone_in_its_batch(batching: TransformersBackend) -> None:
    huge = "weather " * 3000
    results = await asyncio.gather(
        batching.generate(_request(PROMPTS[0])), batching.generate(_request(huge)), return_exceptions=True
    )
    assert not isinstance(results[0], BaseException) and results[0].usage.completion_tokens > 0
    assert isinstance(results[1], BadModelRequest) and "exceeds the model's 2048" in str(results[1])


async def test_a_cancelled_caller_does_not_disturb_the_others(batching: TransformersBackend) -> None:
    doomed = asyncio.ensure_future(batching.generate(_request(PROMPTS[0])))
    kept = asyncio.ensure_future(batching.generate(_request(PROMPTS[2])))
    await asyncio.sleep(0.01)
    doomed.cancel()
    result = await kept
    assert result.usage.completion_tokens > 0
    assert doomed.cancelled()


async def test_a_caller_that_goes_away_leaves_the_running_batch(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One place in the batch: the next request can only start once the gone caller's row left.
    backend = await _started(tiny_model_dir, batch_wait_ms=0, max_batch=1, max_new_tokens=400)
    assert backend.engine is not None
    rows: list[Any] = []
    real_admit = backend.engine.admit

    def admit(admitted: list[Any]) -> list[Any]:
        rows.extend(admitted)
        return real_admit(admitted)

    five_written = threading.Event()
    real_step = backend.engine.step

    def step() -> list[Any]:
        finished = real_step()
        if rows and len(rows[0].generated) >= 5:
            five_written.set()
        return finished

    monkeypatch.setattr(backend.engine, "admit", admit)
    monkeypatch.setattr(backend.engine, "step", step)
    try:
        gone = asyncio.ensure_future(backend.generate(_request(PROMPTS[0], max_tokens=400)))
        assert await asyncio.to_thread(five_written.wait, 60)
        gone.cancel()  # what the gate's handler timeout does to a slow answer
        next_one = await backend.generate(_request(PROMPTS[2], max_tokens=4))
        assert next_one.usage.completion_tokens > 0
        assert rows[0].finished and len(rows[0].generated) < 20  # not decoded on to its 400
        assert backend.engine.active == 0
    finally:
        await backend.close()


async def test_close_fails_waiting_requests_and_refuses_new_ones(tiny_model_dir: Path) -> None:
    backend = await _started(tiny_model_dir, batch_wait_ms=5_000, max_batch=8)
    waiting = asyncio.ensure_future(backend.generate(_request(PROMPTS[0])))
    await asyncio.sleep(0.05)
    await backend.close()
    with pytest.raises(ModelError, match="shutting down"):
        await waiting
    with pytest.raises(ModelError, match="not serving"):
        await backend.generate(_request(PROMPTS[0]))


@pytest.mark.parametrize(
    ("path", "message"),
    [(None, "--model.path is required"), ("/nonexistent/model", "is not a model folder")],
)
async def test_bad_model_paths_are_one_clear_error(path: str | None, message: str) -> None:
    backend = build_backend(ModelOptions(path=path))
    with pytest.raises(ModelLoadError, match=message):
        await backend.start()
    await backend.close()


async def test_a_folder_that_is_not_a_model_is_refused(tmp_path: Path) -> None:
    backend = build_backend(ModelOptions(path=str(tmp_path)))
    with pytest.raises(ModelLoadError, match=r"has no config\.json"):
        await backend.start()
    await backend.close()


def test_unknown_backend_is_one_clear_error() -> None:
    with pytest.raises(ModelLoadError, match="unknown model backend 'vllm'"):
        build_backend(ModelOptions(backend="vllm"))


@pytest.mark.parametrize("continuous", [True, False])
async def test_close_during_generation_answers_the_running_batch(
    tiny_model_dir: Path, continuous: bool
) -> None:
    # max_batch 1: the second request waits for room in either way of batching.
    backend = await _started(
        tiny_model_dir, continuous=continuous, batch_wait_ms=0, max_batch=1, max_new_tokens=40
    )
    running = asyncio.ensure_future(backend.generate(_request(PROMPTS[1], 40)))
    for _ in range(2_000):  # until the batch is in the generation thread
        if backend._running:
            break
        await asyncio.sleep(0.005)
    assert backend._running
    queued = asyncio.ensure_future(backend.generate(_request(PROMPTS[0])))
    await asyncio.sleep(0)
    await backend.close()
    # The running batch is answered; what was still queued is told the miner is stopping.
    result = await asyncio.wait_for(running, 1)
    assert result.usage.completion_tokens > 0
    with pytest.raises(ModelError, match="shutting down"):
        await asyncio.wait_for(queued, 1)


async def test_sampling_and_greedy_requests_are_served_together_or_apart(
    batching: TransformersBackend,
) -> None:
    requests = [
        _request(PROMPTS[0]),
        _request(PROMPTS[1], temperature=0.8),
        _request(PROMPTS[2], temperature=0.0),
    ]
    results = await asyncio.gather(*(batching.generate(request) for request in requests))
    # Rows of a running batch decode with their own temperature; generate() takes one per batch,
    # so there the greedy ones go together and the sampled one alone.
    assert batching.batches_run == (1 if batching.engine is not None else 2)
    assert all(result.usage.completion_tokens > 0 for result in results)


STRICT_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- if message.role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "[{{ message.role }}] {{ message.content }}\n"
    "{%- endfor %}[assistant] "
)


def test_a_template_without_a_system_role_gets_the_tool_prompt_in_the_user_turn(tiny_model_dir: Path) -> None:
    from transformers import AutoTokenizer

    from subnet.miner.adapters import ADAPTERS

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    tokenizer.chat_template = STRICT_TEMPLATE
    request = GenerationRequest(
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "weather in paris"},
        ],
        tools=[WEATHER],
    )
    prompt = build_prompt(tokenizer, ADAPTERS["codeact"], "codeact", request)
    assert prompt.text.startswith("[user] Be brief.\n\nYou act by writing Python.")
    assert prompt.text.rstrip().endswith("weather in paris[assistant]")
    assert "def get_weather(city: str):" in prompt.text


STOCK = {
    "type": "function",
    "function": {
        "name": "get_stock_price",
        "parameters": {
            "type": "object",
            "properties": {"symbol": {"type": "string"}},
            "required": ["symbol"],
        },
    },
}


@pytest.mark.parametrize("fmt", ["hermes", "pythonic", "json", "codeact"])
async def test_required_with_several_tools_starts_with_one_of_their_calls(
    batching: TransformersBackend, fmt: str
) -> None:
    from subnet.miner.adapters import ADAPTERS

    adapter = ADAPTERS[fmt]
    batching.adapter = adapter  # the same model, prompted and constrained in each format
    requests = [
        GenerationRequest(
            messages=[{"role": "user", "content": text}],
            tools=[WEATHER, STOCK],
            tool_choice="required",
            max_tokens=12,
        )
        for text in PROMPTS[:3]
    ]
    # A random model would never choose on its own: every answer still opens a call to a given tool.
    results = await asyncio.gather(*(batching.generate(request) for request in requests))
    openings = (adapter.forced_prefix("get_weather"), adapter.forced_prefix("get_stock_price"))
    for result in results:
        assert result.raw_text.startswith(openings), result.raw_text
    # and a row with no choice to make in the same batch is left alone
    free = await asyncio.gather(batching.generate(_request(PROMPTS[0])), batching.generate(requests[0]))
    assert not free[0].raw_text.startswith(openings)


async def test_a_short_request_joins_a_running_batch_and_leaves_before_the_long_one(
    tiny_model_dir: Path,
) -> None:
    backend = await _started(tiny_model_dir, batch_wait_ms=0, max_batch=8, max_new_tokens=200)
    try:
        long = asyncio.ensure_future(backend.generate(_request(PROMPTS[1], 200)))
        for _ in range(2_000):  # until the long one is decoding
            if backend._running:
                break
            await asyncio.sleep(0.005)
        short = await backend.generate(_request(PROMPTS[3], 3))
        long_was_done = long.done()
        assert short.usage.completion_tokens <= 3
        assert backend.batches_run == 2  # the short one was admitted into the running batch
        result = await long
        if result.finish_reason == "length":  # no early EOS: the long one ran all 200 steps
            assert result.usage.completion_tokens == 200
            assert not long_was_done  # and the short one did not wait for them
    finally:
        await backend.close()
