"""Benchmark of the devchain: what one SDK call costs, how the metagraph and epochs scale, and how
many writes per second several processes sharing the file get through.

    .venv/bin/python bench/devchain.py [--uids 256] [--calls 200] [--writers 4] [--seconds 3]

All through the real bittensor SDK where the neurons would use it (bt.ServeAxon, bt.SetWeights,
client.subnets.metagraph); set-up uses the admin API. Figures are wall-clock on whatever else the
machine is doing, so read them as orders of magnitude.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import bittensor as bt

from subnet.cli import OneLineParser, user_errors
from subnet.config import float_arg, int_arg
from subnet.devchain import DevChain, dev_keypair


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"median {statistics.median(ordered) * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms"


def _writer(path: str, index: int, seconds: float, counts: Any) -> None:
    chain = DevChain(path)
    address = dev_keypair(f"//Writer{index}").ss58_address
    done = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        chain.fund(address, 1)
        done += 1
    counts[index] = done


async def run(uids: int, calls: int, writers: int, seconds: float) -> None:
    root = Path(tempfile.mkdtemp(prefix="devchain-bench-"))
    path = root / "chain.sqlite"
    chain = DevChain(path, block_time=0.01)
    owner = dev_keypair("//Alice")
    netuid = chain.create_subnet(
        owner.ss58_address,
        dev_keypair("//Owner").ss58_address,
        max_allowed_uids=uids,
        weights_rate_limit=0,
        tempo=10_000,
    )
    keys = [dev_keypair(f"//Neuron{i}") for i in range(1, uids)]
    started = time.perf_counter()
    for key in keys:
        chain.register(netuid, key.ss58_address, owner.ss58_address)
    elapsed = time.perf_counter() - started
    print(f"admin registrations: {len(keys)} in {elapsed:.2f} s ({len(keys) / elapsed:.0f}/s)")
    validator = keys[0]
    chain.add_stake(owner.ss58_address, validator.ss58_address, netuid, 1_000)

    async with bt.Subtensor("local", substrate=chain) as client:
        serve = []
        for i in range(calls):
            key = keys[i % len(keys)]
            t0 = time.perf_counter()
            result = await client.execute(bt.ServeAxon(netuid=netuid, ip="127.0.0.1", port=9000 + i), key)
            serve.append(time.perf_counter() - t0)
            assert result.success, result.message
        print(f"bt.ServeAxon via SDK execute: {_ms(serve)} ({len(serve) / sum(serve):.0f}/s sequential)")

        weights = {i: float(i % 7 + 1) for i in range(1, uids)}
        setw = []
        for _ in range(max(1, calls // 10)):
            t0 = time.perf_counter()
            result = await client.execute(bt.SetWeights(netuid=netuid, weights=weights), validator)
            setw.append(time.perf_counter() - t0)
            assert result.success, result.message
        print(f"bt.SetWeights over {len(weights)} uids: {_ms(setw)}")

        reads = []
        for _ in range(max(1, calls // 10)):
            t0 = time.perf_counter()
            graph = await client.subnets.metagraph(netuid, commitments=False)
            reads.append(time.perf_counter() - t0)
        assert graph is not None and len(graph.neurons) == uids
        print(f"metagraph read, {uids} uids: {_ms(reads)}")

        epochs = []
        for _ in range(5):
            chain.skip_blocks(10_000)
            t0 = time.perf_counter()
            await client.subnets.metagraph(netuid, commitments=False)
            epochs.append(time.perf_counter() - t0 - statistics.median(reads))
        print(
            f"epoch catch-up ({uids} uids, one {len(weights)}-weight row): {_ms(epochs)} on top of the read"
        )

    with multiprocessing.Manager() as manager:
        counts = manager.dict()
        processes = [
            multiprocessing.Process(target=_writer, args=(str(path), i, seconds, counts))
            for i in range(writers)
        ]
        for p in processes:
            p.start()
        for p in processes:
            p.join()
        total = sum(counts.values())
    print(
        f"{writers} processes writing for {seconds:g} s: {total} transactions ({total / seconds:.0f}/s total)"
    )


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uids", type=int_arg(1), default=256)
    parser.add_argument("--calls", type=int_arg(1), default=200)
    parser.add_argument("--writers", type=int_arg(1), default=4)
    parser.add_argument("--seconds", type=float_arg(0.0, low_open=True), default=3.0)
    with user_errors(parser.prog):
        args = parser.parse_args()
    asyncio.run(run(args.uids, args.calls, args.writers, args.seconds))


if __name__ == "__main__":
    main()
