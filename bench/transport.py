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

This file holds the gate scenario, the miner process and the driver; the other scenarios are in
bench/transport_scenarios.py, what they share (requests, floods, percentiles) in
bench/transport_common.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import aiohttp
import bittensor as bt
import psutil
from aiohttp import web
from transport_common import (
    _BLOCK,
    HONEST_SOURCE,
    LOOPBACK,
    SCENARIOS,
    _canned_response,
    _cpu_seconds,
    _flood,
    _flood_measured,
    _forged_request_builder,
    _honest_during_flood,
    _ms,
    _never_met_miner,
    _percentile,
    _report_flood,
    _request,
)
from transport_scenarios import (
    _interim_heads,
    _localnet,
    _lockout,
    _round_rate,
    _slow_heads,
    _split_headers,
)

from subnet.cli import OneLineParser, user_errors
from subnet.protocol import (
    ChatCompletionRequest,
    ChatCompletionResponse,
)
from subnet.transport import (
    CHAT_PATH,
    CallerIdentity,
    DirectoryEntry,
    MetagraphDirectory,
    MinerServer,
    ServerPolicy,
    StaticDirectory,
    build_miner_app,
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
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    with user_errors(parser.prog):
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
