"""Benchmark of swallowed cancellations: a loop that reads the metagraph from the devchain through
the real SDK and ChainClient, like the miner's refresher, is cancelled N times at random moments;
a cancellation is swallowed when the loop is still running 2 s later.

    .venv/bin/python bench/cancellation.py [--cancels 300] [--seed 1]

Prints the count for ChainClient as it is (awaits bounded with asyncio.timeout) and for the same
client with its call bounded by asyncio.wait_for, as it was when a loaded test run hung in a
miner's stop: on Python 3.11 wait_for returns the answer instead of raising a cancellation that
lands as the call finishes. Target: 0 swallowed as it is.
"""

from __future__ import annotations

import asyncio
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import bittensor as bt

from subnet.chain import ChainClient
from subnet.cli import OneLineParser, user_errors
from subnet.config import int_arg, parse_miner_settings
from subnet.devchain import DevChain
from subnet.wallets import create_dev_wallet, load_wallet

NETUID = 1
STILL_RUNNING_S = 2.0


async def _wait_for_call(
    self: ChainClient, what: str, operation: Callable[[Any], Awaitable[Any]], *, bounded: bool = True
) -> Any:
    """ChainClient._call's two bounded awaits as they were spelled before (no retries)."""
    client = await asyncio.wait_for(self._connected(), self.retry.timeout)
    return await asyncio.wait_for(operation(client), self.retry.timeout if bounded else None)


def _client(root: Path) -> ChainClient:
    chain = DevChain(root / "dev.sqlite", block_time=0.05)
    for name in ("owner", "miner"):
        create_dev_wallet(name, "default", root / "wallets")
    owner = bt.Wallet("owner", "default", path=str(root / "wallets"))
    chain.create_subnet(
        owner.coldkeypub.ss58_address, owner.hotkeypub.ss58_address, netuid=NETUID, tempo=1_000
    )
    flags = {
        "--netuid": str(NETUID),
        "--subtensor.network": "dev",
        "--devchain.path": str(chain.path),
        "--wallet.name": "miner",
        "--wallet.hotkey": "default",
        "--wallet.path": str(root / "wallets"),
        "--model.path": str(root),
    }
    settings = parse_miner_settings([part for flag in flags.items() for part in flag], env={})
    return ChainClient.from_settings(settings, load_wallet(settings.wallet, require_coldkey=True))


async def _swallowed(client: ChainClient, cancels: int, seed: int) -> int:
    rng = random.Random(seed)
    swallowed = 0

    async def refresh() -> None:
        while True:
            await client.metagraph()

    for done in range(cancels):
        task = asyncio.create_task(refresh())
        await asyncio.sleep(rng.uniform(0.005, 0.05))
        task.cancel()
        ended, _ = await asyncio.wait({task}, timeout=STILL_RUNNING_S)
        if not ended:
            swallowed += 1
            task.cancel()  # the loop is inside its next read: this one lands
            await asyncio.wait({task}, timeout=STILL_RUNNING_S)
        if (done + 1) % 50 == 0:
            print(f"  {done + 1}/{cancels} cancels, {swallowed} swallowed", file=sys.stderr)
    return swallowed


async def run(cancels: int, seed: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-cancellation-") as tmp:
        for label, patched in (("asyncio.timeout (as it is)", False), ("asyncio.wait_for (as it was)", True)):
            client = _client(Path(tmp) / label.split()[0])
            if patched:
                client._call = _wait_for_call.__get__(client)  # type: ignore[method-assign]
            started = time.monotonic()
            swallowed = await _swallowed(client, cancels, seed)
            await client.close()
            print(
                f"{label:30} {swallowed:4d} of {cancels} cancellations swallowed "
                f"({time.monotonic() - started:.0f} s)"
            )


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cancels", type=int_arg(1, 100_000), default=300)
    parser.add_argument("--seed", type=int, default=1)
    with user_errors(parser.prog):
        args = parser.parse_args(argv)
    asyncio.run(run(args.cancels, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
