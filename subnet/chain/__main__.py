"""``python -m subnet.chain register``: register a hotkey on any network, the devchain included."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from subnet.chain.client import ChainClient
from subnet.config import ConfigError, parse_register_settings, user_errors
from subnet.logs import configure_logging
from subnet.wallets import load_wallet


async def _register_once(settings: Any, wallet: Any) -> tuple[str, int]:
    async with ChainClient.from_settings(settings, wallet) as chain:
        return chain.hotkey, await chain.register()


def main(argv: list[str] | None = None) -> int:
    """``python -m subnet.chain register [--netuid N] [--wallet.name W] ...``: register a hotkey."""

    args = list(sys.argv[1:] if argv is None else argv)
    with user_errors("python -m subnet.chain"):
        if not args or args[0] not in {"register", "-h", "--help"}:
            raise ConfigError("usage: python -m subnet.chain register [flags]; see `register --help`")
        if args[0] != "register":
            print("usage: python -m subnet.chain register [flags]  (register --help lists the flags)")
            return 0
        settings = parse_register_settings(args[1:])
        configure_logging(settings.logging, process_name="register")
        wallet = load_wallet(settings.wallet, require_coldkey=True)
        hotkey, uid = asyncio.run(_register_once(settings, wallet))
        print(f"hotkey {hotkey} is uid {uid} on netuid {settings.netuid}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
