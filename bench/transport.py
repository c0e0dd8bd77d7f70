"""Benchmark of the authenticated transport: what authentication costs an honest request, and how
many forged requests one core of a miner rejects per second.

The miner runs in a child process pinned to one CPU, serving three apps: a bare endpoint that
does no work (no auth), the gated endpoint with the default policy, and the gated endpoint with
the per-address failure budget switched off (every forgery then pays a signature check). The
parent drives them over loopback: sequential signed requests for latency, and pipelined raw
HTTP for the forged floods. Rates are reported per wall second and per CPU second of the
miner process (the latter is robust to other load on the machine).

    .venv/bin/python bench/transport.py [--requests 2000] [--seconds 3] [--connections 16]
    .venv/bin/python bench/transport.py --scenario split-headers --seconds 10
    .venv/bin/python bench/transport.py --scenario interim-heads [--hostile 16 --honest 16 --deadline 5]
    .venv/bin/python bench/transport.py --scenario slow-heads --seconds 20 [--slow-connections 2000]
    .venv/bin/python bench/transport.py --scenario round-rate [--rounds 5]
    .venv/bin/python bench/transport.py --scenario lockout [--seconds 20]
    .venv/bin/python bench/transport.py --scenario localnet [--rounds 5]

round-rate: a validator's rounds (8 tasks at once, 4 episodes of 30 steps one after the other)
sent as fast as a stand-in model answers, against the miner's own default limits
(`server_policy(MinerSettings())`), rounds back to back: 429 answers per round; then a stranger's
forged flood beside it. lockout: the miner at an open-file limit of 1,024; 20 loopback addresses
x 32 keep-alive connections, one unsigned GET /health every 3 s each (a connection the miner
closes is opened again at once and held until the next GET); a validator the miner has never
met (no axon on the metagraph) sends 29 signed requests, each on a new connection: how many are
served. localnet: `python -m subnet.localnet --miners 0 --model.base_url URL` in front of a
stand-in engine answering at once (it calls the first offered tool, so episodes run to their
step caps): the validator's answers of 429 per round, read from its database.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

# Run as a script, bench/ comes first on sys.path, and bench/scoring.py would hide the package.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

import aiohttp  # noqa: E402
import bittensor as bt  # noqa: E402
import psutil  # noqa: E402
from aiohttp import web  # noqa: E402

from subnet.protocol import (  # noqa: E402
    AssistantMessage,
    ChatCompletionRequest,
    ChatCompletionResponse,
    Choice,
    FunctionCall,
    Message,
    ToolCall,
)
from subnet.transport import (  # noqa: E402
    CHAT_PATH,
    CallerIdentity,
    ClientTimeouts,
    DirectoryEntry,
    MetagraphDirectory,
    MinerClient,
    MinerServer,
    MinerTarget,
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


# --- the miner side (child process) -------------------------------------------------------------


async def _stream_interim_heads(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A hostile miner: `100 Continue` heads as fast as the validator reads them, never an answer."""
    try:
        await reader.readuntil(b"\r\n\r\n")
        while True:
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" * 256)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def _serve(
    miner_hotkey: str, validator_hotkey: str, hostile: int = 0, honest: int = 0, stranger: str = ""
) -> None:
    canned = _canned_response()
    canned_body = canned.to_body()

    async def no_work(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=canned_body, content_type="application/json")

    async def handler(request: ChatCompletionRequest, caller: CallerIdentity) -> ChatCompletionResponse:
        return canned

    # The validator's published axon address is the honest source: the metagraph names it.
    validator = DirectoryEntry(uid=1, hotkey=validator_hotkey, stake=1e4, axon_ip=HONEST_SOURCE)
    directory = MetagraphDirectory(StaticDirectory([validator]))
    # Honest traffic must never hit the caller's rate limit in this benchmark.
    policies = {
        "gated": ServerPolicy(per_caller_rate=1e9, per_caller_burst=1e9),
        "gated_no_peer_budget": ServerPolicy(
            per_caller_rate=1e9, per_caller_burst=1e9, per_ip_failed_auth_rate=None
        ),
        # The miner's own defaults, rate limits included: what an attack on a caller's budget meets.
        "gated_default": ServerPolicy(),
    }
    bare = web.Application()
    bare.router.add_post(CHAT_PATH, no_work)
    servers = {"bare": MinerServer(bare, host=LOOPBACK, port=0)}
    for name, policy in policies.items():
        app = build_miner_app(hotkey_ss58=miner_hotkey, directory=directory, policy=policy, handler=handler)
        servers[name] = MinerServer(app, host=LOOPBACK, port=0)
    if stranger:
        servers["miner"] = MinerServer(
            _never_met_miner(miner_hotkey, validator_hotkey, stranger), host=LOOPBACK, port=0
        )
    for index in range(honest):
        app = build_miner_app(
            hotkey_ss58=miner_hotkey, directory=directory, policy=policies["gated"], handler=handler
        )
        servers[f"honest{index}"] = MinerServer(app, host=LOOPBACK, port=0)
    for server in servers.values():
        await server.start()
    streams = [await asyncio.start_server(_stream_interim_heads, LOOPBACK, 0) for _ in range(hostile)]
    ports: dict[str, int] = {name: server.port for name, server in servers.items()}
    ports |= {f"hostile{index}": stream.sockets[0].getsockname()[1] for index, stream in enumerate(streams)}
    print(json.dumps(ports), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    for stream in streams:
        stream.close()
    for server in servers.values():
        await server.stop(drain_timeout=1.0)


# --- the driver (parent process) ----------------------------------------------------------------


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


_BLOCK = 100  # requests per kind between CPU-time readings of the miner process


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


async def _honest_latency(
    ports: dict[str, int], process: psutil.Process, signer: bt.Keypair, miner_hotkey: str, requests: int
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Sequential requests over one keep-alive connection, bare and signed in alternating blocks.

    Returns the latency samples by kind (and the client's signing time), and the miner
    process's CPU seconds per request by kind: CPU time is far less disturbed by other load on
    the machine than wall-clock latency.
    """
    body = _request().to_body()
    samples: dict[str, list[float]] = {"bare": [], "gated": [], "sign": []}
    cpu: dict[str, float] = {"bare": 0.0, "gated": 0.0}
    counted: dict[str, int] = {"bare": 0, "gated": 0}
    warmup_blocks = 1
    blocks = warmup_blocks + max(1, requests // _BLOCK)
    connector = aiohttp.TCPConnector(limit=1, local_addr=(HONEST_SOURCE, 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        for block in range(blocks):
            for kind in ("bare", "gated"):
                url = f"http://{LOOPBACK}:{ports[kind]}{CHAT_PATH}"
                cpu_before = _cpu_seconds(process)
                for _ in range(_BLOCK):
                    started = signed = time.perf_counter()
                    headers = {"Content-Type": "application/json"}
                    if kind == "gated":
                        headers |= bt.http_auth.sign(
                            signer, method="POST", path=CHAT_PATH, body=body, receiver_ss58=miner_hotkey
                        )
                        signed = time.perf_counter()
                    async with session.post(url, data=body, headers=headers) as response:
                        answer = await response.read()
                        if response.status != 200:
                            raise RuntimeError(
                                f"{kind} endpoint answered {response.status}: {answer[:200]!r}"
                            )
                    if block >= warmup_blocks:
                        samples[kind].append(time.perf_counter() - started)
                        if kind == "gated":
                            samples["sign"].append(signed - started)
                if block >= warmup_blocks:
                    cpu[kind] += _cpu_seconds(process) - cpu_before
                    counted[kind] += _BLOCK
    return samples, {kind: cpu[kind] / counted[kind] for kind in cpu}


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


async def _split_headers(
    args: argparse.Namespace, ports: dict[str, int], signer: bt.Keypair, forger: bt.Keypair, miner_hotkey: str
) -> None:
    """An unregistered forger signs with its own key and sends the validator's hotkey as a first,
    extra X-Bittensor-Hotkey header, while the validator sends a request every 50 ms."""
    body = _request().to_body()
    build = _forged_request_builder("split_headers", body, signer.ss58_address, miner_hotkey, forger)
    flood = asyncio.create_task(
        _flood(ports["gated_default"], build, args.seconds, args.connections, window=8)
    )
    served, refused, latencies = await _honest_during_flood(
        ports["gated_default"], signer, miner_hotkey, args.seconds
    )
    statuses = await flood
    by_status = ", ".join(f"{status}: {count}" for status, count in sorted(statuses.items()))
    total = sum(statuses.values())
    print(f"split auth headers, {args.connections} connections x {args.seconds:g} s, default policy:")
    print(f"  forged requests that reached the model (200): {statuses.get('200', 0)} of {total}")
    print(f"  forged answers by status: {by_status}")
    p50 = f"; latency p50 {_ms(_percentile(latencies, 0.5))}" if latencies else ""
    print(f"  the validator's own requests (every 50 ms): served {served}, refused {refused}{p50}")


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


async def _interim_heads(
    args: argparse.Namespace, ports: dict[str, int], signer: bt.Keypair, miner_hotkey: str
) -> None:
    """The validator's client queries every miner at once, as a round does: the hostile ones
    stream interim heads, the honest ones (asked 0.5 s later, into the flood) answer at once.
    Reported per round: its wall time
    against the deadline, the honest latencies and the longest stall of the validator's loop."""
    request = _request()
    targets = [
        MinerTarget(hotkey=miner_hotkey, ip=LOOPBACK, port=port, uid=0)
        for name, port in ports.items()
        if name.startswith(("hostile", "honest"))
    ]
    hostile = sum(name.startswith("hostile") for name in ports)
    print(
        f"interim-head streams: {hostile} hostile miners, {len(targets) - hostile} honest, "
        f"deadline {args.deadline:g} s, {args.rounds} rounds"
    )
    timeouts = ClientTimeouts(connect_s=3.0, total_s=args.deadline)
    async with MinerClient(signer, timeouts=timeouts, global_concurrency=len(targets)) as client:
        for number in range(1, args.rounds + 1):
            stalls: list[float] = []
            stop = asyncio.Event()
            ticking = asyncio.create_task(_watch_loop(stop, stalls))
            started = time.perf_counter()
            results = await asyncio.gather(
                *(client.query(target, request) for target in targets[:hostile]),
                *(_after(0.5, client.query(target, request)) for target in targets[hostile:]),
            )
            wall = time.perf_counter() - started
            stop.set()
            await ticking
            statuses = Counter(str(result.status) for result in results)
            honest = [r.latency_s for r in results if r.status == "ok"]
            p50 = _ms(_percentile(honest, 0.5)) if honest else "-"
            worst = _ms(max(honest)) if honest else "-"
            print(
                f"  round {number}: {wall:.2f} s (deadline {args.deadline:g} s, over by "
                f"{max(0.0, wall - args.deadline):.2f} s); honest ok {len(honest)}, latency p50 {p50} "
                f"max {worst}; longest loop stall {_ms(max(stalls, default=0.0))}; "
                f"{', '.join(f'{k}: {v}' for k, v in sorted(statuses.items()))}"
            )


async def _slow_head(port: int, source: str, deadline: float, counts: Counter[str]) -> None:
    """One attacker's connection slot: open, send a request line, then one header byte a second
    until the miner closes it; open again, until `deadline`."""
    while time.perf_counter() < deadline:
        try:
            reader, writer = await asyncio.open_connection(LOOPBACK, port, local_addr=(source, 0))
        except OSError:
            counts["connect_failed"] += 1
            await asyncio.sleep(0.1)
            continue
        counts["opened"] += 1
        opened = time.perf_counter()
        try:
            writer.write(f"POST {CHAT_PATH} HTTP/1.1\r\nHost: {LOOPBACK}\r\n".encode())
            while time.perf_counter() < deadline:
                writer.write(b"X")
                await writer.drain()
                try:
                    if await asyncio.wait_for(reader.read(1), timeout=1.0) == b"":
                        break
                except TimeoutError:
                    continue
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
        held = time.perf_counter() - opened
        counts["closed_within_0.1s" if held < 0.1 else "closed_later"] += 1
        if held < 0.1:
            await asyncio.sleep(0.05)  # refused at once: try again soon, without spinning


def _attack_process(port: int, sources: list[str], connections: int, seconds: float, results: Any) -> None:
    """The attacker in a process of its own, so that its reconnecting does not slow the
    validator's loop in the driver; puts its counts on `results`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + 256
    if soft < wanted:  # the attacker's own files: one per connection
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))

    async def attack() -> Counter[str]:
        counts: Counter[str] = Counter()
        deadline = time.perf_counter() + seconds
        slots = (
            _slow_head(port, sources[index % len(sources)], deadline, counts) for index in range(connections)
        )
        await asyncio.gather(*slots)
        return counts

    results.put(dict(asyncio.run(attack())))


async def _honest_fresh_connections(
    port: int, signer: bt.Keypair, miner_hotkey: str, seconds: float
) -> tuple[int, Counter[str], list[float]]:
    """The validator's way: a signed request on a new connection every 100 ms."""
    body = _request().to_body()
    outcomes: Counter[str] = Counter()
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    url = f"http://{LOOPBACK}:{port}{CHAT_PATH}"
    connector = aiohttp.TCPConnector(local_addr=(HONEST_SOURCE, 0), force_close=True, limit=0)
    timeout = aiohttp.ClientTimeout(total=10)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def one() -> None:
            headers = bt.http_auth.sign(
                signer, method="POST", path=CHAT_PATH, body=body, receiver_ss58=miner_hotkey
            )
            headers["Content-Type"] = "application/json"
            started = time.perf_counter()
            try:
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()
                    outcomes[str(response.status)] += 1
                    if response.status == 200:
                        latencies.append(time.perf_counter() - started)
            except (aiohttp.ClientError, TimeoutError, OSError) as exc:
                outcomes[type(exc).__name__] += 1

        requests = []
        while time.perf_counter() < deadline:
            requests.append(asyncio.create_task(one()))
            await asyncio.sleep(0.1)  # 10 a second: well inside the default rate limit
        await asyncio.gather(*requests)
    return outcomes["200"], outcomes, latencies


async def _slow_heads(
    args: argparse.Namespace, ports: dict[str, int], signer: bt.Keypair, miner_hotkey: str
) -> None:
    """Connections that trickle their request head, from a few addresses, against a miner whose
    open-file limit is `--file-limit`; the validator's requests beside them."""
    sources = [f"127.0.0.{20 + index}" for index in range(args.attack_addresses)]
    spawn = multiprocessing.get_context("spawn")
    results = spawn.Queue()
    attacker = spawn.Process(
        target=_attack_process,
        args=(ports["gated_default"], sources, args.slow_connections, args.seconds, results),
    )
    attacker.start()
    await asyncio.sleep(1.5)  # let the attack take its places first
    served, outcomes, latencies = await _honest_fresh_connections(
        ports["gated_default"], signer, miner_hotkey, args.seconds - 2.0
    )
    counts = await asyncio.to_thread(results.get, timeout=args.seconds + 30)
    await asyncio.to_thread(attacker.join, 10)
    print(
        f"slow request heads: {args.slow_connections} connections from {len(sources)} addresses for "
        f"{args.seconds:g} s, miner open-file limit {args.file_limit}"
    )
    print(f"  attacker: {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}")
    asked = sum(outcomes.values())
    p50 = f"; latency p50 {_ms(_percentile(latencies, 0.5))}" if latencies else ""
    print(f"  the validator's requests (every 100 ms, new connection each): {served} of {asked} served{p50}")
    print(f"  the validator's outcomes: {', '.join(f'{k} {v}' for k, v in sorted(outcomes.items()))}")


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


async def _round_rate(
    args: argparse.Namespace, signer: bt.Keypair, forger: bt.Keypair, miner_hotkey: str
) -> None:
    policy = _miner_policy()
    app = _never_met_miner(miner_hotkey, signer.ss58_address, forger.ss58_address)
    tasks, episodes, steps = 8, 4, 30  # the round's defaults; 3 turns x a step cap of 10
    print(
        f"miner's default per-caller limits: rate {policy.per_caller_rate:g}/s, burst "
        f"{policy.per_caller_burst:g}, {policy.per_caller_max_in_flight} at once"
    )
    print(f"a validator's round: {tasks} tasks at once + {episodes} episodes x {steps} steps, back to back")
    async with MinerServer(app, host=LOOPBACK, port=0) as server:
        target = MinerTarget(hotkey=miner_hotkey, ip=LOOPBACK, port=server.port, uid=0)
        client = MinerClient(
            signer,
            timeouts=ClientTimeouts(total_s=10.0),
            per_miner_concurrency=tasks,
            local_addr=(HONEST_SOURCE, 0),
        )
        async with client:
            for number in range(1, args.rounds + 1):
                statuses: Counter[str] = Counter()

                async def ask(statuses: Counter[str] = statuses) -> None:
                    result = await client.query(target, _request())
                    statuses[str(result.http_status or result.status.value)] += 1

                async def episode() -> None:
                    for _ in range(steps):
                        await ask()

                started = time.perf_counter()
                await asyncio.gather(*(ask() for _ in range(tasks)), *(episode() for _ in range(episodes)))
                print(
                    f"  round {number}: {sum(statuses.values())} requests in "
                    f"{time.perf_counter() - started:.2f} s, {statuses['429']} answered 429 "
                    f"({', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))})"
                )
        body = _request().to_body()
        forged: Counter[str] = Counter()
        connector = aiohttp.TCPConnector(local_addr=("127.0.0.3", 0), limit=0)
        url = f"http://{LOOPBACK}:{server.port}{CHAT_PATH}"
        async with aiohttp.ClientSession(connector=connector) as session:
            for _ in range(500):
                # Signed with the stranger's own key, claiming the validator's hotkey.
                headers = bt.http_auth.sign(
                    forger, method="POST", path=CHAT_PATH, body=body, receiver_ss58=miner_hotkey
                )
                headers[bt.http_auth.HEADER_HOTKEY] = signer.ss58_address
                headers["Content-Type"] = "application/json"
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()
                    forged[str(response.status)] += 1
        print(
            f"a stranger's forged flood (500 requests, claims the validator): {forged['429']} answered 429 "
            f"({', '.join(f'{k} {v}' for k, v in sorted(forged.items()))})"
        )


async def _keep_alive_stranger(
    port: int, source: str, period_s: float, deadline: float, counts: Counter[str]
) -> None:
    """One attacker connection: an unsigned GET /health every `period_s`, kept alive; when the
    miner closes it, opened again at once and held until the next GET."""
    while time.perf_counter() < deadline:
        try:
            reader, writer = await asyncio.open_connection(LOOPBACK, port, local_addr=(source, 0))
        except OSError:
            counts["connect_failed"] += 1
            await asyncio.sleep(0.1)
            continue
        counts["opened"] += 1
        try:
            while time.perf_counter() < deadline:
                await asyncio.sleep(min(period_s, max(0.0, deadline - time.perf_counter())))
                writer.write(b"GET /health HTTP/1.1\r\nHost: miner\r\n\r\n")
                await writer.drain()
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5.0)
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                counts["answered"] += 1
                if b"connection: close" in head.lower():
                    break
        except (ConnectionError, OSError, asyncio.IncompleteReadError, TimeoutError):
            counts["reset"] += 1
        finally:
            writer.close()


def _lockout_attack(port: int, sources: list[str], per_source: int, seconds: float, results: Any) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = len(sources) * per_source + 256
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))

    async def attack() -> Counter[str]:
        counts: Counter[str] = Counter()
        deadline = time.perf_counter() + seconds
        await asyncio.gather(
            *(
                _keep_alive_stranger(port, source, 3.0, deadline, counts)
                for source in sources
                for _ in range(per_source)
            )
        )
        return counts

    results.put(dict(asyncio.run(attack())))


async def _lockout(
    args: argparse.Namespace, ports: dict[str, int], signer: bt.Keypair, miner_hotkey: str
) -> None:
    sources = [f"127.0.0.{30 + index}" for index in range(20)]
    spawn = multiprocessing.get_context("spawn")
    results = spawn.Queue()
    attacker = spawn.Process(
        target=_lockout_attack, args=(ports["miner"], sources, 32, args.seconds, results)
    )
    attacker.start()
    await asyncio.sleep(4.0)  # the attack takes its places first
    target = MinerTarget(hotkey=miner_hotkey, ip=LOOPBACK, port=ports["miner"], uid=0)
    client = MinerClient(signer, timeouts=ClientTimeouts(total_s=5.0), local_addr=(HONEST_SOURCE, 0))
    outcomes: Counter[str] = Counter()
    async with client:
        for _ in range(29):
            result = await client.query(target, _request())
            outcomes[result.status.value] += 1
            await asyncio.sleep(0.5)
    counts = await asyncio.to_thread(results.get, timeout=args.seconds + 30)
    await asyncio.to_thread(attacker.join, 10)
    print(
        f"lockout: 20 addresses x 32 keep-alive connections, an unsigned GET every 3 s each, for "
        f"{args.seconds:g} s; miner open-file limit {args.file_limit}, default limits"
    )
    print(f"  attacker: {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}")
    print(
        f"  a validator the miner never met (29 signed requests, new connection each, every 0.5 s): "
        f"{outcomes['ok']} of 29 served ({', '.join(f'{k} {v}' for k, v in sorted(outcomes.items()))})"
    )


def _localnet(args: argparse.Namespace, print_line: Callable[[str], None] = print) -> int:
    """The localnet in front of a stand-in engine that answers at once; 429s per round."""

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "standin", "object": "model"}]})

    asked: Counter[str] = Counter()

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        asked["requests"] += 1
        tools = body.get("tools") or []
        message: dict[str, Any] = {"role": "assistant", "content": "No tool fits."}
        if tools:
            function = tools[0]["function"]
            required = function.get("parameters", {}).get("required", [])
            call = {
                "id": "c0",
                "type": "function",
                "function": {"name": function["name"], "arguments": json.dumps(dict.fromkeys(required, "x"))},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return web.json_response(
            {
                "id": "s",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
        )

    async def run() -> int:
        app = web.Application()
        app.router.add_get("/v1/models", models)
        app.router.add_post("/v1/chat/completions", chat)
        runner = web.AppRunner(app, shutdown_timeout=0.1)
        await runner.setup()
        await web.TCPSite(runner, LOOPBACK, 0).start()
        url = f"http://{LOOPBACK}:{runner.addresses[0][1]}/v1"
        with tempfile.TemporaryDirectory(prefix="bench-localnet-") as state:
            command = [
                sys.executable, "-m", "subnet.localnet", "--state.dir", state, "--dashboard.port", "0",
                "--miners", "0", "--model.base_url", url, "--rounds", str(args.rounds),
                "--round.tasks", "8", "--round.episodes", "4",
            ]  # fmt: skip
            print_line("$ python " + " ".join(command[1:]).replace(state, "STATE").replace(url, "STANDIN"))
            started = time.perf_counter()
            # This tree's code in the localnet and its children, whatever the venv has installed.
            tree = TREE
            env = {
                **os.environ,
                "PYTHONPATH": os.pathsep.join(filter(None, [tree, os.environ.get("PYTHONPATH")])),
            }
            process = await asyncio.create_subprocess_exec(
                *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd=tree, env=env
            )
            output, _ = await process.communicate()
            await runner.cleanup()
            if process.returncode:
                print_line(output.decode()[-3000:])
                return 1
            print_line(
                f"localnet finished in {time.perf_counter() - started:.0f} s; the engine answered "
                f"{asked['requests']} requests (the localnet's own checks included)"
            )
            for line in _localnet_refusals(os.path.join(state, "validator.sqlite")):
                print_line(line)
        return 0

    return asyncio.run(run())


def _localnet_refusals(path: str) -> list[str]:
    """Per round: answers, http_error answers and those answered 429 (single-turn rows carry
    the status, episode rows the refusal's type in their error)."""
    import sqlite3

    lines = []
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT r.number, x.status, x.http_status, COALESCE(x.error, '') FROM responses x "
            "JOIN rounds r ON r.id = x.round_id ORDER BY r.number"
        ).fetchall()
    by_round: dict[int, Counter[str]] = {}
    for number, status, http_status, error in rows:
        counts = by_round.setdefault(number, Counter())
        counts["answers"] += 1
        counts[status] += 1
        if http_status == 429 or any(f"{kind}:" in error for kind in REFUSED_429):
            counts["429"] += 1
    total = 0
    for number, counts in sorted(by_round.items()):
        total += counts["429"]
        lines.append(
            f"  round {number}: {counts['answers']} rows (tasks + episodes), "
            f"{counts['http_error']} http_error, {counts['429']} answered 429"
        )
    lines.append(f"  answers of 429 to the validator over {len(by_round)} rounds: {total}")
    return lines


async def _drive(
    args: argparse.Namespace,
    ports: dict[str, int],
    process: psutil.Process,
    signer: bt.Keypair,
    forger: bt.Keypair,
    miner_hotkey: str,
) -> None:
    if args.scenario == "split-headers":
        await _split_headers(args, ports, signer, forger, miner_hotkey)
        return
    if args.scenario == "interim-heads":
        await _interim_heads(args, ports, signer, miner_hotkey)
        return
    if args.scenario == "slow-heads":
        await _slow_heads(args, ports, signer, miner_hotkey)
        return
    if args.scenario == "round-rate":
        await _round_rate(args, signer, forger, miner_hotkey)
        return
    if args.scenario == "lockout":
        await _lockout(args, ports, signer, miner_hotkey)
        return
    print(f"miner process pinned to CPU {args.cpu}; driver on CPUs {sorted(os.sched_getaffinity(0))}")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (1 min) at start")

    samples, cpu_per_request = await _honest_latency(ports, process, signer, miner_hotkey, args.requests)
    count = len(samples["bare"])
    print(f"\nhonest requests, sequential, one keep-alive connection, n={count} each:")
    for kind in ("bare", "gated"):
        values = samples[kind]
        print(f"  {kind:<6} p50 {_ms(_percentile(values, 0.5))}  p99 {_ms(_percentile(values, 0.99))}")
    overhead_p50 = _percentile(samples["gated"], 0.5) - _percentile(samples["bare"], 0.5)
    overhead_p99 = _percentile(samples["gated"], 0.99) - _percentile(samples["bare"], 0.99)
    print(f"  auth overhead (gated - bare): p50 {_ms(overhead_p50)}  p99 {_ms(overhead_p99)}")
    print(f"  of which client-side signing: p50 {_ms(statistics.median(samples['sign']))}")
    cpu_overhead = cpu_per_request["gated"] - cpu_per_request["bare"]
    print(
        f"  miner CPU per request: bare {_ms(cpu_per_request['bare'])}, gated {_ms(cpu_per_request['gated'])}"
        f" -> gate costs {_ms(cpu_overhead)} of miner CPU (psutil; ~10 ms tick resolution, averaged)"
    )

    print(f"\nforged floods, {args.connections} pipelined connections x {args.seconds:g} s each:")
    body = _request().to_body()
    validator = signer.ss58_address
    floods = (
        (
            "bad signature, claims the validator, no peer budget",
            "gated_no_peer_budget",
            "forged_signature",
        ),
        ("bad signature, claims the validator, default policy", "gated", "forged_signature"),
        ("no auth headers", "gated", "no_headers"),
    )
    for label, app, kind in floods:
        build = _forged_request_builder(kind, body, validator, miner_hotkey)
        result = await _flood_measured(process, ports[app], build, args.seconds, args.connections)
        _report_flood(label, result)

    print("\nhonest requests (every 50 ms, from 127.0.0.2) during a forged flood, no peer budget:")
    build = _forged_request_builder("forged_signature", body, validator, miner_hotkey)
    flood = asyncio.create_task(
        _flood(ports["gated_no_peer_budget"], build, args.seconds, args.connections, window=8)
    )
    served, refused, latencies = await _honest_during_flood(
        ports["gated_no_peer_budget"], signer, miner_hotkey, args.seconds
    )
    await flood
    if latencies:
        print(
            f"  served {served}, refused {refused}; latency p50 {_ms(_percentile(latencies, 0.5))}"
            f"  p99 {_ms(_percentile(latencies, 0.99))}"
        )
    else:
        print(f"  served 0, refused {refused}")
    print(f"\nload average {os.getloadavg()[0]:.2f} (1 min) at end")


def _run_driver(args: argparse.Namespace) -> None:
    """Create throw-away wallets, start the miner process, drive it, stop it."""
    with tempfile.TemporaryDirectory(prefix="bench-transport-") as wallet_dir:
        wallets = {}
        for role in ("miner", "validator", "forger"):
            wallet = bt.Wallet(name=role, hotkey="default", path=wallet_dir)
            wallet.create_new_coldkey(use_password=False, suppress=True)
            wallet.create_new_hotkey(use_password=False, suppress=True)
            wallets[role] = wallet
        miner_hotkey = wallets["miner"].hotkey.ss58_address
        signer = wallets["validator"].hotkey
        command = [sys.executable, __file__, "--serve", miner_hotkey, signer.ss58_address]
        command += ["--cpu", str(args.cpu), "--scenario", args.scenario, "--file-limit", str(args.file_limit)]
        command += ["--hostile", str(args.hostile), "--honest", str(args.honest)]
        command += ["--stranger", wallets["forger"].hotkey.ss58_address]
        child = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            text=True,
        )
        others = set(os.sched_getaffinity(0)) - {args.cpu}
        if others:
            os.sched_setaffinity(0, others)  # keep the driver off the miner's CPU where possible
        try:
            assert child.stdout is not None
            first_line = child.stdout.readline()
            if not first_line:
                raise OSError("the miner process did not start")
            ports = json.loads(first_line)
            forger = wallets["forger"].hotkey
            asyncio.run(_drive(args, ports, psutil.Process(child.pid), signer, forger, miner_hotkey))
        finally:
            child.terminate()
            child.wait(timeout=10)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=2000, help="honest requests per endpoint")
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each flood")
    parser.add_argument("--connections", type=int, default=16, help="flood connections")
    parser.add_argument("--cpu", type=int, default=None, help="CPU to pin the miner process to")
    parser.add_argument(
        "--scenario",
        choices=SCENARIOS,
        default="gate",
        help="gate: auth costs and forged floods (default); split-headers: a repeated "
        "X-Bittensor-Hotkey header against the default policy, with the validator's requests beside it; "
        "interim-heads: the validator's client against miners that stream 100 Continue heads; "
        "slow-heads: connections trickling their request heads, with the validator's requests beside them",
    )
    parser.add_argument("--hostile", type=int, default=16, help="interim-heads: hostile miners")
    parser.add_argument("--honest", type=int, default=16, help="interim-heads: honest miners")
    parser.add_argument("--deadline", type=float, default=5.0, help="interim-heads: the query deadline (s)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="interim-heads (default 3), round-rate and localnet (5): rounds",
    )
    parser.add_argument("--slow-connections", type=int, default=2000, help="slow-heads: attacker connections")
    parser.add_argument("--attack-addresses", type=int, default=8, help="slow-heads: attacker addresses")
    parser.add_argument(
        "--file-limit", type=int, default=1024, help="slow-heads: the miner's open-file limit"
    )
    parser.add_argument("--stranger", default="", help=argparse.SUPPRESS)
    parser.add_argument(
        "--serve", nargs=2, metavar=("MINER_HOTKEY", "VALIDATOR_HOTKEY"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = 3 if args.scenario == "interim-heads" else 5
    if args.serve:
        return args
    allowed = sorted(os.sched_getaffinity(0))
    if args.cpu is None:
        args.cpu = allowed[0]
    if args.cpu not in allowed:
        parser.exit(2, f"error: --cpu {args.cpu} is not one of this process's CPUs {allowed}\n")
    if args.requests < 1 or args.seconds <= 0 or args.connections < 1:
        parser.exit(2, "error: --requests, --seconds and --connections must be positive\n")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.serve:
        os.sched_setaffinity(0, {args.cpu})
        miner_hotkey, validator_hotkey = args.serve
        if args.scenario in ("slow-heads", "lockout"):
            resource.setrlimit(resource.RLIMIT_NOFILE, (args.file_limit, args.file_limit))
        interim = args.scenario == "interim-heads"
        hostile, honest = (args.hostile, args.honest) if interim else (0, 0)
        stranger = args.stranger if args.scenario == "lockout" else ""
        asyncio.run(_serve(miner_hotkey, validator_hotkey, hostile=hostile, honest=honest, stranger=stranger))
        return 0
    if args.scenario == "localnet":
        return _localnet(args)
    try:
        _run_driver(args)
    except OSError as exc:
        print(f"error: {exc} (is {HONEST_SOURCE} usable as a loopback source address here?)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
