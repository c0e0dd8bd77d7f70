"""Phrasing test fixtures: the stand-in phrasing model on loopback, in each of its modes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from types import ModuleType
from typing import Any

import pytest

from subnet.config import PhrasingSettings
from subnet.phrasing import build_engine


@pytest.fixture(scope="session")
def standin(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("phrasing_standin")


@pytest.fixture
async def standin_engine(standin: ModuleType) -> AsyncIterator[Callable[..., Awaitable[Any]]]:
    """``await make(mode="private", delay=0.0, **settings)``: a started openai engine over a stand-in."""
    started: list[tuple[Any, Any]] = []

    async def make(mode: str = "private", delay: float = 0.0, **settings: Any) -> Any:
        server = await standin.StandinServer(mode, delay).start()
        engine = build_engine(PhrasingSettings(engine="openai", url=server.url, model="standin", **settings))
        await engine.start()
        engine.server = server
        started.append((server, engine))
        return engine

    yield make
    for server, engine in started:
        await engine.close()
        await server.stop()
