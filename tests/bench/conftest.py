"""The red team's package (bench/redteam_kit) for the tests of its parts."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="session")
def kit() -> Callable[[str], ModuleType]:
    """``kit("lexical.worked")`` is the module redteam_kit.lexical.worked, imported from bench/
    (on sys.path after the project's packages, only while it loads)."""

    def load(name: str) -> ModuleType:
        path = list(sys.path)
        sys.path.append(str(BENCH_DIR))
        try:
            return importlib.import_module(f"redteam_kit.{name}")
        finally:
            sys.path[:] = path

    return load


def _merged(*modules: ModuleType) -> SimpleNamespace:
    """One namespace over a package's modules, so a test names a helper without its module."""
    return SimpleNamespace(**{name: value for module in modules for name, value in vars(module).items()})


@pytest.fixture(scope="session")
def lexical_kit(kit: Callable[[str], ModuleType]) -> SimpleNamespace:
    """Every module of redteam_kit.lexical in one namespace (``lexical_kit._worked_out``)."""
    return _merged(
        *(kit(f"lexical.{part}") for part in ("words", "tools", "finders", "reading", "worked", "miner"))
    )


@pytest.fixture(scope="session")
def agent_kit(kit: Callable[[str], ModuleType]) -> SimpleNamespace:
    """redteam_kit.agent and its modules in one namespace (``agent_kit._map_tools``)."""
    parts = ("tools", "values", "bank_home_mail", "shop_workspace", "agent", "play")
    return _merged(*(kit(f"agent.{part}") for part in parts), kit("agent"))
