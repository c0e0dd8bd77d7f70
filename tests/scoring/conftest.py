"""Fixtures shared by the scoring tests."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def bench(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    """bench/decode_check.py loaded as a module (its corpus is the tests' corpus too)."""
    return load_bench("decode_check")
