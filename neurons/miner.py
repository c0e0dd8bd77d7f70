"""Miner entry point.

    python neurons/miner.py --wallet.name M --wallet.hotkey H --netuid N \
        --subtensor.network NET --axon.port P --model.backend B --model.path X

Parses the flags, loads the wallet and runs the miner; the work lives in subnet.miner.
Mistakes a user can make (bad flags, missing wallet, unregistered hotkey, bad model path,
missing demo package) end in one line and exit code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# The libraries take a second or more to load; Ctrl-C meanwhile stops here, before anything started.
try:
    import asyncio
    import logging

    from subnet.cli import exit_with, user_errors
    from subnet.config import parse_miner_settings
    from subnet.logs import configure_logging
    from subnet.miner.base import ModelLoadError
    from subnet.miner.node import run_miner
    from subnet.wallets import load_wallet
except KeyboardInterrupt:
    print("miner: interrupted while starting", file=sys.stderr)
    raise SystemExit(130) from None

log = logging.getLogger("miner")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with user_errors("miner"):
            settings = parse_miner_settings(argv)
            configure_logging(settings.logging, process_name="miner")
            wallet = load_wallet(settings.wallet)
            try:
                asyncio.run(run_miner(settings, wallet=wallet))
            except ModelLoadError as error:
                exit_with(error, "miner")
    except KeyboardInterrupt:  # also while the flags and wallet were read, before the handlers exist
        log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
