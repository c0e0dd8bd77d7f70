"""A flood of forged requests from one peer must not stop a validator's signed request.

Forged requests claim the validator's own hotkey (the most expensive forgery: it passes every
header-only check and costs a signature verification). Limits after verification key on the
verified hotkey, so the forgeries never spend the validator's budget; the peer failure budget
keys on the forger's address. The validator queries from 127.0.0.2 where the two must differ.
"""

from __future__ import annotations

import asyncio
import os
import random
import time

import aiohttp
import pytest

from subnet.transport import CHAT_PATH, ClientTimeouts, MinerClient, MinerTarget, QueryStatus, ServerPolicy

FLOOD_WORKERS = 8
HONEST_QUERIES = 3


async def _flood(
    url: str, validator_hotkey: str, miner_hotkey: str, body: bytes, stop: asyncio.Event
) -> dict[int, int]:
    """Forged requests claiming `validator_hotkey` from 127.0.0.1 until `stop`; counts by status."""
    statuses: dict[int, int] = {}
    rng = random.Random(5)

    async def worker(session: aiohttp.ClientSession) -> None:
        while not stop.is_set():
            headers = {
                "X-Bittensor-Version": "1",
                "X-Bittensor-Hotkey": validator_hotkey,
                "X-Bittensor-Receiver": miner_hotkey,
                "X-Bittensor-Nonce": str(time.time_ns()),
                "X-Bittensor-Signature": "0x" + rng.randbytes(64).hex(),
                "Content-Type": "application/json",
            }
            async with session.post(url + CHAT_PATH, data=body, headers=headers) as response:
                await response.read()
                statuses[response.status] = statuses.get(response.status, 0) + 1

    connector = aiohttp.TCPConnector(limit=0, local_addr=("127.0.0.1", 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(FLOOD_WORKERS)))
    return statuses


@pytest.mark.parametrize(
    ("peer_budget", "validator_addr"),
    [(True, "127.0.0.2"), (False, "127.0.0.1")],
    ids=["peer-budget-on-separate-address", "no-peer-budget-same-address"],
)
async def test_forged_flood_does_not_stop_the_validator(
    peer_budget, validator_addr, start_miner, wallets, kit
) -> None:
    policy = ServerPolicy(
        per_caller_rate=2.0,
        per_caller_burst=HONEST_QUERIES,
        per_ip_failed_auth_rate=20.0 if peer_budget else None,
        per_ip_failed_auth_burst=50.0,
    )
    miner = await start_miner(policy=policy)
    body = kit.sample_request().to_body()
    stop = asyncio.Event()
    flood = asyncio.create_task(_flood(miner.url, wallets.hotkey("validator"), miner.hotkey, body, stop))
    await asyncio.sleep(0.3)

    target = MinerTarget(hotkey=miner.hotkey, ip="127.0.0.1", port=miner.port, uid=0)
    client = MinerClient(
        wallets["validator"], timeouts=ClientTimeouts(total_s=10.0), local_addr=(validator_addr, 0)
    )
    results = []
    async with client:
        for _ in range(HONEST_QUERIES):
            results.append(await client.query(target, kit.sample_request()))
            await asyncio.sleep(0.2)
    stop.set()
    statuses = await flood

    assert [result.status for result in results] == [QueryStatus.OK] * HONEST_QUERIES, results
    assert 200 not in statuses, statuses
    assert sum(statuses.values()) >= 100, statuses
    assert set(statuses) <= {401, 429}
    if peer_budget:
        assert statuses.get(429, 0) > statuses.get(401, 0), statuses
    assert len(miner.handler.calls) == HONEST_QUERIES
    assert {caller.hotkey for _, caller in miner.handler.calls} == {wallets.hotkey("validator")}
    if os.environ.get("TRANSPORT_FLOOD_VERBOSE"):
        print(statuses, [round(result.latency_s, 4) for result in results])
