"""Test-wide set-up: keep the bittensor SDK's caches, config and wallets out of the user's home."""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

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
