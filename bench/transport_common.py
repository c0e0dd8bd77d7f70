"""What the transport benchmarks (bench/transport.py and its scenarios) share: the request and
answer they send, percentiles, forged floods and their report, the miner's default policy."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import aiohttp
import bittensor as bt
import psutil
from aiohttp import web

from subnet.protocol import (
    AssistantMessage,
    ChatCompletionRequest,
    ChatCompletionResponse,
    Choice,
    FunctionCall,
    Message,
    ToolCall,
)
from subnet.transport import (
    CHAT_PATH,
    CallerIdentity,
    DirectoryEntry,
    MetagraphDirectory,
    ServerPolicy,
    StaticDirectory,
    build_miner_app,
)

T = TypeVar("T")
SCENARIOS = ("gate", "split-headers", "interim-heads", "slow-heads", "round-rate", "lockout", "localnet")
# The refusals answered 429 (subnet.transport.refusals.REFUSAL_STATUS).
# The checkout this file belongs to.
TREE = str(Path(__file__).resolve().parents[1])
REFUSED_429 = ("rate_limited", "caller_busy", "peer_auth_failures", "peer_busy")
LOOPBACK = "127.0.0.1"
HONEST_SOURCE = "127.0.0.2"  # a second loopback address: the validator is not the forger's peer


def _canned_response() -> ChatCompletionResponse:
    call = ToolCall(id="c0", function=FunctionCall(name="get_weather", arguments='{"city": "Paris"}'))
    return ChatCompletionResponse(
        id="bench", model="bench", choices=[Choice(message=AssistantMessage(tool_calls=[call]))]
    )


def _request() -> ChatCompletionRequest:
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
    return ChatCompletionRequest.model_validate(
        {"model": "bench", "messages": [Message(role="user", content="Weather in Paris?")], "tools": [tool]}
    )


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


_BLOCK = 100  # requests per kind between CPU-time readings of the miner process


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


@dataclass(frozen=True)
class FloodResult:
    statuses: Counter[str]
    wall_s: float
    server_cpu_s: float

    @property
    def total(self) -> int:
        return sum(self.statuses.values())


ForgedRequest = Callable[[], bytes]


def _forged_request_builder(
    kind: str, body: bytes, claimed_hotkey: str, miner_hotkey: str, forger: bt.Keypair | None = None
) -> ForgedRequest:
    """Raw HTTP/1.1 bytes of one forged request of `kind` (fresh nonce, random signature).

    `split_headers` is a request the forger really signs with its own (unregistered) key, with
    the claimed hotkey sent first as a second X-Bittensor-Hotkey header.
    """
    head = f"POST {CHAT_PATH} HTTP/1.1\r\nHost: {LOOPBACK}\r\nContent-Type: application/json\r\n"
    head += f"Content-Length: {len(body)}\r\n"
    auth_common = f"X-Bittensor-Version: 1\r\nX-Bittensor-Receiver: {miner_hotkey}\r\n"

    def forged_signature() -> bytes:
        headers = (
            f"{auth_common}X-Bittensor-Hotkey: {claimed_hotkey}\r\n"
            f"X-Bittensor-Nonce: {time.time_ns()}\r\nX-Bittensor-Signature: 0x{os.urandom(64).hex()}\r\n"
        )
        return (head + headers + "\r\n").encode() + body

    def no_headers() -> bytes:
        return (head + "\r\n").encode() + body

    def split_headers() -> bytes:
        assert forger is not None
        signed = bt.http_auth.sign(
            forger, method="POST", path=CHAT_PATH, body=body, receiver_ss58=miner_hotkey
        )
        lines = f"X-Bittensor-Hotkey: {claimed_hotkey}\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in signed.items()
        )
        return (head + lines + "\r\n").encode() + body

    builders = {
        "forged_signature": forged_signature,
        "no_headers": no_headers,
        "split_headers": split_headers,
    }
    return builders[kind]


async def _flood(
    port: int, build: ForgedRequest, seconds: float, connections: int, window: int
) -> Counter[str]:
    """Pipelined forged requests on `connections` keep-alive sockets for `seconds`."""
    statuses: Counter[str] = Counter()
    deadline = time.perf_counter() + seconds

    async def connection() -> None:
        while time.perf_counter() < deadline:
            reader, writer = await asyncio.open_connection(LOOPBACK, port)
            outstanding = 0
            tail = b""
            try:
                while time.perf_counter() < deadline or outstanding:
                    while outstanding < window and time.perf_counter() < deadline:
                        writer.write(build())
                        outstanding += 1
                    chunk = await asyncio.wait_for(reader.read(1 << 16), timeout=5)
                    if not chunk:
                        break
                    data = tail + chunk
                    start = 0
                    while (found := data.find(b"HTTP/1.1 ", start)) >= 0 and found + 12 <= len(data):
                        statuses[data[found + 9 : found + 12].decode()] += 1
                        outstanding -= 1
                        start = found + 12
                    tail = data[max(start, len(data) - 11) :]
            except (ConnectionError, TimeoutError):
                statuses["connection_lost"] += 1
            finally:
                writer.close()

    await asyncio.gather(*(connection() for _ in range(connections)))
    return statuses


async def _flood_measured(
    process: psutil.Process, port: int, build: ForgedRequest, seconds: float, connections: int
) -> FloodResult:
    before = process.cpu_times()
    started = time.perf_counter()
    statuses = await _flood(port, build, seconds, connections, window=8)
    wall = time.perf_counter() - started
    after = process.cpu_times()
    cpu = (after.user - before.user) + (after.system - before.system)
    return FloodResult(statuses=statuses, wall_s=wall, server_cpu_s=cpu)


async def _honest_during_flood(
    port: int, signer: bt.Keypair, miner_hotkey: str, seconds: float
) -> tuple[int, int, list[float]]:
    body = _request().to_body()
    served = refused = 0
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=1, local_addr=(HONEST_SOURCE, 0))
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=10)) as session:
        while time.perf_counter() < deadline:
            headers = bt.http_auth.sign(
                signer, method="POST", path=CHAT_PATH, body=body, receiver_ss58=miner_hotkey
            )
            headers["Content-Type"] = "application/json"
            started = time.perf_counter()
            async with session.post(f"http://{LOOPBACK}:{port}{CHAT_PATH}", data=body, headers=headers) as r:
                await r.read()
                if r.status == 200:
                    served += 1
                    latencies.append(time.perf_counter() - started)
                else:
                    refused += 1
            await asyncio.sleep(0.05)
    return served, refused, latencies


def _report_flood(label: str, result: FloodResult) -> None:
    per_wall = result.total / result.wall_s
    per_cpu = result.total / result.server_cpu_s if result.server_cpu_s > 0 else float("nan")
    by_status = ", ".join(f"{status}: {count}" for status, count in sorted(result.statuses.items()))
    print(
        f"  {label:<52} {result.total:>7} in {result.wall_s:.2f} s = {per_wall:>7.0f}/s wall, "
        f"{per_cpu:>7.0f}/s per miner CPU-second ({by_status})"
    )


async def _watch_loop(stop: asyncio.Event, stalls: list[float], period_s: float = 0.005) -> None:
    """How late each of the loop's 5 ms sleeps wakes up: its stalls, as other work holds it."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        before = loop.time()
        await asyncio.sleep(period_s)
        stalls.append(loop.time() - before - period_s)


async def _after(delay_s: float, query: Awaitable[T]) -> T:
    await asyncio.sleep(delay_s)
    return await query


# --- limits that fit the protocol (issue 26) ---------------------------------------------------


def _miner_policy() -> ServerPolicy:
    """The policy a miner started with default flags runs (a real network: permits required)."""
    from subnet.config import MinerSettings
    from subnet.miner.node import server_policy

    return server_policy(MinerSettings())


def _never_met_miner(miner_hotkey: str, validator_hotkey: str, stranger_hotkey: str) -> web.Application:
    """A miner with the default policy; the validator published no axon (never met), the stranger
    is registered without a permit."""
    canned = _canned_response()

    async def handler(request: ChatCompletionRequest, caller: CallerIdentity) -> ChatCompletionResponse:
        return canned

    directory = MetagraphDirectory(
        StaticDirectory(
            [
                DirectoryEntry(uid=1, hotkey=validator_hotkey, stake=1e4),
                DirectoryEntry(uid=2, hotkey=stranger_hotkey, stake=1e4, validator_permit=False),
            ]
        )
    )
    return build_miner_app(
        hotkey_ss58=miner_hotkey, directory=directory, policy=_miner_policy(), handler=handler
    )
