"""An encrypted hotkey without a usable password: the line says how to set the variable, and what it holds."""

from __future__ import annotations

import bittensor as bt
import pytest

from subnet.config import ConfigError, WalletSettings
from subnet.wallets import create_dev_wallet, load_wallet


@pytest.fixture(scope="module")
def encrypted_hotkey(tmp_path_factory: pytest.TempPathFactory) -> tuple[WalletSettings, str]:
    # Encrypting takes seconds (a slow key derivation): once for the module.
    root = tmp_path_factory.mktemp("keys") / "wallets-with-a-dash"  # the SDK's variable name keeps the '-'
    create_dev_wallet("miner", "default", root)
    wallet = bt.Wallet("miner", "default", path=str(root))
    wallet.hotkey_file.set_keypair(wallet.get_hotkey(), encrypt=True, overwrite=True, password="a-long-pass!")
    return WalletSettings(name="miner", hotkey="default", path=root), wallet.hotkey_file.env_var_name()


def test_a_variable_name_export_cannot_set_is_given_with_env(
    encrypted_hotkey: tuple[WalletSettings, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, variable = encrypted_hotkey
    monkeypatch.delenv(variable, raising=False)
    assert "-" in variable
    with pytest.raises(ConfigError) as raised:
        load_wallet(settings)
    message = str(raised.value)
    assert f"`env '{variable}=<encoded password>' python ...`" in message and "export" not in message


def test_a_plain_password_in_the_variable_is_explained(
    encrypted_hotkey: tuple[WalletSettings, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, variable = encrypted_hotkey
    monkeypatch.setenv(variable, "a-long-pass!")  # the plain password, not the SDK's encoded form
    with pytest.raises(
        ConfigError, match=f"{variable} does not hold the hotkey's password in the SDK's encoded"
    ):
        load_wallet(settings)
