"""neurons/validator.py runs the validator on uvloop's event loop where uvloop is installed."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ENTRY = Path(__file__).resolve().parents[2] / "neurons" / "validator.py"


def _entry_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("validator_entry_under_test", ENTRY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_entry_point_runs_on_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    uvloop = pytest.importorskip("uvloop")
    entry = _entry_module()
    seen: list[type[asyncio.AbstractEventLoop]] = []

    async def fake_run(settings: Any) -> None:
        seen.append(type(asyncio.get_running_loop()))

    settings = type("Settings", (), {"logging": None})()
    monkeypatch.setattr(entry, "parse_validator_settings", lambda argv: settings)
    monkeypatch.setattr(entry, "configure_logging", lambda *args, **kwargs: None)
    monkeypatch.setattr(entry, "run", fake_run)
    assert entry.main([]) == 0
    assert seen == [uvloop.Loop]


def test_the_entry_point_logs_which_generator_modules_rounds_run(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    entry = _entry_module()
    ran: list[Any] = []

    class Chain:
        async def ensure_registered(self) -> int:
            return 7

        async def close(self) -> None:
            ran.append("closed")

    class FakeValidator:
        def __init__(self, settings: Any, wallet: Any, chain: Any) -> None:
            pass

        async def run(self, rounds: Any) -> None:
            ran.append("ran")

    settings = type("Settings", (), {"wallet": None, "netuid": 1, "rounds": 1})()
    monkeypatch.setattr(entry, "check_phrasing", lambda settings: None)
    monkeypatch.setattr(entry, "load_wallet", lambda wallet: None)
    monkeypatch.setattr(entry.ChainClient, "from_settings", staticmethod(lambda settings, wallet: Chain()))
    monkeypatch.setattr(entry, "Validator", FakeValidator)
    monkeypatch.setattr(
        entry.compiled, "state", lambda: entry.compiled.State(False, "Python modules: because")
    )
    with caplog.at_level("INFO", logger="validator"):
        asyncio.run(entry.run(settings))
    assert ran == ["ran", "closed"]
    assert "task generator: Python modules: because" in caplog.messages
