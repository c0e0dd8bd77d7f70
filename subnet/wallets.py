"""Wallets: the neurons' (:func:`load_wallet`) and development ones made without prompts.

``load_wallet`` opens the wallet the ``--wallet.*`` flags name, its hotkey unlocked, or raises
a one-line ``ConfigError`` with the command that fixes it.

Development wallets: create an unencrypted coldkey + hotkey without prompts.

    python -m subnet.wallets create --wallet.name N [--wallet.hotkey H] [--wallet.path P] [--force]

They go to ``wallets/`` in the user data directory (beside the devchain), never to
``~/.bittensor/wallets`` unless ``--wallet.path`` says so.
For local runs on the devchain only: the coldkey is stored *unencrypted*, so
never put real funds on it. Files are written with bittensor 11's own wallet
and keyfile API, so ``bt.Wallet(N, H, path=P)`` and btcli read them as usual.
An existing coldkey is reused when only a new hotkey is asked for; nothing
existing is overwritten without ``--force``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from subnet.cli import OneLineParser, run_main
from subnet.config.errors import ConfigError
from subnet.config.flags import add_flag
from subnet.config.settings import WalletSettings, default_dev_wallet_path, default_wallet_path

if TYPE_CHECKING:
    import bittensor as bt

DEFAULT_HOTKEY = "default"
# Former spellings of `create`'s flags, refused in one line naming the neurons' own flags.
RENAMED = {"--name": "--wallet.name", "--hotkey": "--wallet.hotkey", "--path": "--wallet.path"}


# --- the neurons' wallets ----------------------------------------------------------------
# The configuration's settings name the wallet; this module opens it (the configuration never
# imports it back). bittensor is imported where a wallet is opened: it takes seconds to load.


def _wallet_fix(settings: WalletSettings) -> str:
    path_flag = f" --wallet-path {settings.path}" if settings.path != default_wallet_path() else ""
    return (
        f"`python -m subnet.wallets create --wallet.name {settings.name} --wallet.hotkey {settings.hotkey} "
        f"--wallet.path {settings.path}` "
        f"(development, unencrypted) or "
        f"`btcli wallet create -w {settings.name} -H {settings.hotkey}{path_flag}`"
    )


def _env_assignment(name: str) -> str:
    """How to set ``name`` from a shell. The SDK derives it from the key's path, which may hold a
    character ('-') that ``export`` refuses; ``env`` takes any name."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return f"`export {name}=<encoded password>`"
    return f"`env '{name}=<encoded password>' python ...`"


def load_wallet(settings: WalletSettings, *, require_coldkey: bool = False) -> bt.Wallet:
    """The wallet named by ``settings``, with its hotkey unlocked for signing.

    Raises :class:`ConfigError` (one line, with the command that fixes it) when the wallet
    or hotkey is missing, or a key that is needed is encrypted and no password is
    available without prompting (``BT_WALLET_PASSWORD``, ``BT_WALLET_PASSWORD_FILE`` or
    the key's ``BT_PW_...`` variable). The coldkey is only needed to pay for things
    (registration): pass ``require_coldkey=True`` there.
    """
    import bittensor as bt
    from bittensor.keyfiles import KeyfileError, WrongPasswordError
    from bittensor.sp_core import get_password_from_environment
    from bittensor.wallets import resolve_wallet_password

    wallet = bt.Wallet(settings.name, settings.hotkey, str(settings.path))
    wallet_dir = Path(settings.path) / settings.name
    if not wallet_dir.is_dir():
        raise ConfigError(
            f"wallet {settings.name!r} not found in {settings.path}; create it with {_wallet_fix(settings)}"
        )
    if not wallet.hotkey_file.exists_on_device():
        raise ConfigError(
            f"hotkey {settings.hotkey!r} not found in wallet {settings.name!r} ({wallet.hotkey_file.path}); "
            f"create it with `btcli wallet new-hotkey -w {settings.name} -H {settings.hotkey}` "
            f"or `python -m subnet.wallets create --wallet.name {settings.name} "
            f"--wallet.hotkey {settings.hotkey} --wallet.path {settings.path}`"
        )
    if not wallet.coldkeypub_file.exists_on_device():
        raise ConfigError(
            f"wallet {settings.name!r} has no coldkeypub.txt in {wallet_dir}; restore it with "
            f"`btcli wallet regen-coldkeypub -w {settings.name}` "
            f"or create the wallet with {_wallet_fix(settings)}"
        )
    try:
        if wallet.hotkey_file.is_encrypted():
            password = get_password_from_environment(wallet.hotkey_file.env_var_name())
            if not password:
                raise ConfigError(
                    f"hotkey {settings.hotkey!r} of wallet {settings.name!r} is encrypted and no password is "
                    f"available; set it with {_env_assignment(wallet.hotkey_file.env_var_name())} (the SDK's "
                    "encoded form, as btcli/bittensor write it) or use an unencrypted hotkey"
                )
            wallet.get_hotkey(password)
        else:
            wallet.get_hotkey()
        _ = wallet.coldkeypub
    except WrongPasswordError:
        raise ConfigError(
            f"wrong password for hotkey {settings.hotkey!r} of wallet {settings.name!r} "
            f"(from {wallet.hotkey_file.env_var_name()})"
        ) from None
    except (KeyfileError, OSError, ValueError) as error:
        if "password env var" in str(error):  # the SDK could not decode the BT_PW_... variable
            raise ConfigError(
                f"{wallet.hotkey_file.env_var_name()} does not hold the hotkey's password in the SDK's "
                f"encoded form ({error}); set it as btcli/bittensor write it, or use an unencrypted hotkey"
            ) from None
        raise ConfigError(f"cannot read wallet {settings.name!r}: {error}") from None

    if require_coldkey:
        _unlock_coldkey(wallet, settings, resolve_wallet_password, WrongPasswordError, KeyfileError)
    return wallet


def _unlock_coldkey(
    wallet: bt.Wallet,
    settings: WalletSettings,
    resolve_wallet_password: Callable[..., str | None],
    wrong_password: type[Exception],
    keyfile_error: type[Exception],
) -> None:
    if not wallet.coldkey_file.exists_on_device():
        raise ConfigError(
            f"wallet {settings.name!r} has no coldkey on this machine ({wallet.coldkey_file.path}); "
            f"registering needs it: `btcli wallet regen-coldkey -w {settings.name}`"
        )
    try:
        password = resolve_wallet_password(wallet) if wallet.coldkey_file.is_encrypted() else None
        if wallet.coldkey_file.is_encrypted() and not password:
            raise ConfigError(
                f"coldkey of wallet {settings.name!r} is encrypted and no password is available; "
                "export BT_WALLET_PASSWORD=<password> (or BT_WALLET_PASSWORD_FILE=<file>)"
            )
        wallet.get_coldkey(password)
    except wrong_password:
        raise ConfigError(f"wrong password for the coldkey of wallet {settings.name!r}") from None
    except (keyfile_error, OSError, ValueError) as error:
        raise ConfigError(f"cannot unlock the coldkey of wallet {settings.name!r}: {error}") from None


# --- development wallets --------------------------------------------------------------------


class WalletExistsError(Exception):
    """The wallet (or this hotkey of it) already exists and --force was not given."""


@dataclass(frozen=True)
class CreatedWallet:
    name: str
    hotkey_name: str
    path: Path
    coldkey_ss58: str
    hotkey_ss58: str
    coldkey_created: bool


def _check_name(kind: str, value: str) -> None:
    if not value or "/" in value or "\\" in value or value in {".", ".."}:
        raise ValueError(f"{kind} name {value!r} must be a plain name without slashes")


def create_dev_wallet(
    name: str, hotkey: str = DEFAULT_HOTKEY, path: Path | None = None, *, force: bool = False
) -> CreatedWallet:
    """Write an unencrypted coldkey (unless one exists and not ``force``) and a new hotkey."""
    import bittensor as bt

    _check_name("wallet", name)
    _check_name("hotkey", hotkey)
    root = (path or default_dev_wallet_path()).expanduser()
    wallet = bt.Wallet(name, hotkey, path=str(root))
    coldkey_file = root / name / "coldkey"
    hotkey_file = root / name / "hotkeys" / hotkey
    coldkey_exists = coldkey_file.exists()
    if hotkey_file.exists() and not force:
        raise WalletExistsError(
            f"wallet {name!r} already has hotkey {hotkey!r} at {hotkey_file}; pass --force to overwrite it"
        )
    create_coldkey = force or not coldkey_exists
    if create_coldkey:
        wallet.create_new_coldkey(use_password=False, overwrite=force, suppress=True)
    wallet.create_new_hotkey(use_password=False, overwrite=force, suppress=True)
    return CreatedWallet(
        name=name,
        hotkey_name=hotkey,
        path=root,
        coldkey_ss58=wallet.coldkeypub.ss58_address,
        hotkey_ss58=wallet.hotkey.ss58_address,
        coldkey_created=create_coldkey,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m subnet.wallets", description="Development wallets for the devchain."
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    create = commands.add_parser(
        "create", help="create an unencrypted coldkey + hotkey (development only)", renamed=RENAMED
    )
    add_flag(create, "wallet.name", dest="name", required=True)
    add_flag(create, "wallet.hotkey", dest="hotkey", default=DEFAULT_HOTKEY, note="Default: default.")
    add_flag(
        create,
        "wallet.path",
        dest="path",
        note="Default: wallets/ in the user data directory, beside the devchain (never ~/.bittensor).",
    )
    create.add_argument("--force", action="store_true", help="overwrite an existing coldkey and hotkey")
    return parser


def _create(args: argparse.Namespace) -> None:
    created = create_dev_wallet(args.name, args.hotkey, args.path, force=args.force)
    state = "created" if created.coldkey_created else "kept existing"
    print(f"wallet {created.name} at {created.path / created.name} (unencrypted: development only)")
    print(f"coldkey ({state}): {created.coldkey_ss58}")
    print(f"hotkey {created.hotkey_name}: {created.hotkey_ss58}")


COMMANDS: dict[str, Callable[[argparse.Namespace], None]] = {"create": _create}


def main(argv: Sequence[str] | None = None) -> int:
    from bittensor_core import KeyfileError

    def run() -> None:
        args = build_parser().parse_args(argv)
        COMMANDS[args.command](args)

    return run_main("wallets", run, errors=(WalletExistsError, KeyfileError, ValueError, OSError))


if __name__ == "__main__":
    sys.exit(main())
