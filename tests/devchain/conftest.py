"""Fixtures for the devchain tests: a fresh fast-block chain file and development wallets in tmp_path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from subnet.devchain import DevChain
from subnet.wallets import create_dev_wallet

# Short blocks keep epochs and rate limits quick; tests jump further with skip_blocks.
TEST_BLOCK_TIME = 0.05


@pytest.fixture
def chain_path(tmp_path: Path) -> Path:
    return tmp_path / "devchain.sqlite"


@pytest.fixture
def chain(chain_path: Path) -> DevChain:
    return DevChain(chain_path, block_time=TEST_BLOCK_TIME)


@pytest.fixture
def make_wallet(tmp_path: Path, chain: DevChain) -> Callable[..., Any]:
    """A funded development wallet named ``name`` (bittensor.Wallet) under tmp_path."""
    import bittensor as bt

    def make(name: str, tao: float = 1_000.0) -> Any:
        create_dev_wallet(name, "default", tmp_path / "wallets")
        wallet = bt.Wallet(name, "default", path=str(tmp_path / "wallets"))
        if tao:
            chain.fund(wallet.coldkeypub.ss58_address, tao)
        return wallet

    return make
