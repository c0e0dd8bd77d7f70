"""Test-wide set-up: keep the bittensor SDK's caches, config and wallets out of the user's home."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

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
