"""Test-wide set-up: keep the bittensor SDK's caches, config and wallets out of the user's home."""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.slow import pytest_addoption, pytest_collection_modifyitems
from tests.support.watchdog import Watchdog

__all__ = ["pytest_addoption", "pytest_collection_modifyitems"]  # hooks: the slow tests are opt-in

# The Python generator modules, even where a compiled build exists (tasks.compiled): tests replace
# module attributes, which compiled callers do not see. SUBNET_COMPILED=1 runs the suite compiled.
os.environ.setdefault("SUBNET_COMPILED", "0")

_BTCLI_FILES = {
    "BTCLI_CONFIG": "btcli.json",
    "BTCLI_PROXIES_PATH": "btcli_proxies.json",
    "BTCLI_ADDRESSES_PATH": "btcli_addresses.json",
    "BTCLI_MULTISIGS_PATH": "btcli_multisigs.json",
    "BTCLI_MULTISIG_CACHE": "btcli_multisig_cache.json",
    "BTCLI_SUBNET_NAMES_CACHE": "btcli_subnet_names.json",
    "BTCLI_TOKEN_SYMBOLS_CACHE": "btcli_token_symbols.json",
}


def pytest_configure(config: object) -> None:
    root = Path(tempfile.mkdtemp(prefix="subnet-tests-bt-"))
    for var, name in _BTCLI_FILES.items():
        os.environ[var] = str(root / name)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(autouse=True)
def _isolated_root_logging() -> Iterator[None]:
    """Undo what a test's in-process main() did to the root logger.

    ``configure_logging`` installs a handler on the sys.stderr of the moment, which under pytest is
    that test's capture stream; left in place, it writes to a closed file in every later test.
    """
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)


BENCH_DIR = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="session")
def load_bench() -> Callable[[str], ModuleType]:
    """Loads ``bench/<name>.py`` as a module (once per session) for tests of a benchmark's parts."""
    loaded: dict[str, ModuleType] = {}

    def load(name: str) -> ModuleType:
        if name not in loaded:
            spec = importlib.util.spec_from_file_location(f"{name}_bench_for_tests", BENCH_DIR / f"{name}.py")
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
            path = list(sys.path)
            sys.path.append(str(BENCH_DIR))  # where a script finds its siblings (transport_common, ...)
            try:
                spec.loader.exec_module(module)
            finally:
                sys.path[:] = path  # and a bench may put the repository root on sys.path when loaded
            loaded[name] = module
        return loaded[name]

    return load


_WATCHDOG: Watchdog | None = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """A test that hangs fails after ``tests.support.watchdog.HANG_S`` with its stacks shown."""
    global _WATCHDOG
    if _WATCHDOG is None:
        _WATCHDOG = Watchdog()
    _WATCHDOG.arm(item.nodeid)
    try:
        return (yield)
    finally:
        _WATCHDOG.disarm()
