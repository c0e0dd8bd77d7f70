"""Development wallets: create an unencrypted coldkey + hotkey without prompts.

    python -m subnet.wallets create --name N [--hotkey H] [--path P] [--force]

For local runs on the devchain only: the coldkey is stored *unencrypted*, so
never put real funds on it. Files are written with bittensor 11's own wallet
and keyfile API, so ``bt.Wallet(N, H, path=P)`` and btcli read them as usual.
An existing coldkey is reused when only a new hotkey is asked for; nothing
existing is overwritten without ``--force``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from subnet.cli import OneLineParser, run_main

DEFAULT_HOTKEY = "default"


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


def _default_path() -> Path:
    from bittensor.wallet import DEFAULT_WALLET_PATH

    return Path(DEFAULT_WALLET_PATH)


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
    root = (path or _default_path()).expanduser()
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
    create = commands.add_parser("create", help="create an unencrypted coldkey + hotkey (development only)")
    create.add_argument("--name", required=True, help="wallet (coldkey) name")
    create.add_argument("--hotkey", default=DEFAULT_HOTKEY, help="hotkey name (default: default)")
    create.add_argument(
        "--path", type=Path, default=None, help="wallets directory (default ~/.bittensor/wallets)"
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
