"""Fixtures shared by the scoring tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "scoring.py"


@pytest.fixture(scope="session")
def bench() -> ModuleType:
    """bench/scoring.py loaded as a module (its corpus is the tests' corpus too)."""
    spec = importlib.util.spec_from_file_location("scoring_bench_for_tests", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path  # the bench drops its own folder from sys.path when loaded
    return module
