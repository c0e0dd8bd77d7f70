"""Validator entry point.

    python neurons/validator.py --wallet.name V --wallet.hotkey H --netuid N \
        --subtensor.network NET [--db.url URL] [--rounds K]

Parses the flags, builds the wallet, chain client and validator, and runs it;
the work lives in subnet.validator. Mistakes a user can make end in one line
and exit code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# The libraries take a second or more to load; Ctrl-C meanwhile stops here, before anything started.
try:
    import asyncio
    import logging

    from subnet.chain import ChainClient, ChainUnavailable
    from subnet.cli import user_errors
    from subnet.config import ValidatorSettings, parse_validator_settings
    from subnet.logs import configure_logging
    from subnet.validator.node import Validator, check_phrasing, event_loop_factory
    from subnet.wallets import load_wallet
    from tasks import compiled
except KeyboardInterrupt:
    print("validator: interrupted while starting", file=sys.stderr)
    raise SystemExit(130) from None

log = logging.getLogger("validator")


async def run(settings: ValidatorSettings) -> None:
    check_phrasing(settings)
    wallet = load_wallet(settings.wallet)
    chain = ChainClient.from_settings(settings, wallet)
    try:
        try:
            uid = await chain.ensure_registered()
            log.info("validator uid %d on netuid %d", uid, settings.netuid)
        except ChainUnavailable as exc:
            # Not fatal: the jobs retry, and rounds start as soon as a metagraph arrives.
            log.warning("%s; starting anyway", exc)
        # Whether rounds generate tasks with the compiled modules (`python -m tasks compile`).
        log.info("task generator: %s", compiled.state().reason)
        await Validator(settings, wallet=wallet, chain=chain).run(rounds=settings.rounds)
    finally:
        await chain.close()


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with user_errors("validator"):
            settings = parse_validator_settings(argv)
            configure_logging(settings.logging, process_name="validator")
            # uvloop where installed: a round's sockets and callbacks cost less CPU on it.
            with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
                runner.run(run(settings))
    except KeyboardInterrupt:  # also while the flags were read, before the loop's handlers exist
        log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
