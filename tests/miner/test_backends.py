"""subnet.miner.backends: the registry (subnet.registry) builds whatever it names, imported on demand, and the
openai backend's own required setting is worded where it is declared."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from subnet.miner.backends import build_backend
from subnet.miner.base import ModelLoadError, ModelOptions
from subnet.registry import BACKENDS, BackendEntry, missing_setting, settings_mistake


class _Stub:
    def __init__(self, options: ModelOptions) -> None:
        self.options = options


def test_a_registered_backend_is_built_from_its_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    module: Any = types.ModuleType("stub_backend_module")
    module.StubBackend = _Stub
    monkeypatch.setitem(sys.modules, "stub_backend_module", module)
    monkeypatch.setitem(BACKENDS, "stub", BackendEntry("stub_backend_module:StubBackend"))
    backend = build_backend(ModelOptions(backend="stub"))
    assert isinstance(backend, _Stub) and backend.options.backend == "stub"


def test_the_openai_backend_says_what_it_needs() -> None:
    from subnet.miner.openai_backend import OpenAIBackend

    with pytest.raises(ModelLoadError) as error:
        OpenAIBackend(ModelOptions(backend="openai"))
    assert str(error.value) == missing_setting("openai", "base_url")
    assert "--model.base_url" in str(error.value)


def test_settings_mistake_reads_model_options() -> None:
    assert settings_mistake(ModelOptions()) is None
    assert settings_mistake(ModelOptions(backend="openai", base_url="http://x")) is None
    assert settings_mistake(ModelOptions(backend="openai")) == missing_setting("openai", "base_url")
    mistake = settings_mistake(ModelOptions(backend="openai", base_url="http://x", guided="on"))
    assert mistake is not None and mistake.startswith("--model.guided on is for --model.backend transformers")
