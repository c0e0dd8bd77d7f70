"""No deprecation noise from our own calls at model start: transformers 5 takes the cache as
``cache``; passing ``past_key_values`` (or reading it from an output) logs "`past_key_values`/
`cache_params` are deprecated" at every miner start."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from subnet.miner import GenerationRequest, ModelOptions, build_backend, transformers_backend


@pytest.mark.parametrize("continuous", [True, False], ids=["engine", "generate"])
async def test_a_model_start_and_answer_log_no_cache_deprecation(
    tiny_model_dir: Path, continuous: bool, one_torch_thread: None
) -> None:
    transformers_generic = pytest.importorskip("transformers.utils.generic")
    said: list[str] = []
    original = transformers_generic.logger.warning_once

    def record(message: Any, *args: Any, **kwargs: Any) -> None:
        said.append(str(message))
        original(message, *args, **kwargs)

    backend = build_backend(ModelOptions(path=str(tiny_model_dir), max_new_tokens=4))
    with mock.patch.object(transformers_generic.logger, "warning_once", record):
        if continuous:
            await backend.start()
        else:
            with mock.patch.object(transformers_backend, "supports_model", lambda model: False):
                await backend.start()
        try:
            request = GenerationRequest(messages=[{"role": "user", "content": "hi"}], tools=[], max_tokens=4)
            await backend.generate(request)
        finally:
            await backend.close()
    assert not [line for line in said if "past_key_values" in line]
