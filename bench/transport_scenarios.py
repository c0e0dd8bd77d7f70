"""The scenarios of bench/transport.py beyond the gate (``--scenario``): split headers, interim
heads, slow heads, a validator's round rate, the open-file lockout and the localnet's answers of
429. Run them through bench/transport.py; this module only holds them."""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import aiohttp
import bittensor as bt
from aiohttp import web
from transport_common import (
    HONEST_SOURCE,
    LOOPBACK,
    REFUSED_429,
    TREE,
    _after,
    _flood,
    _forged_request_builder,
    _honest_during_flood,
    _miner_policy,
    _ms,
    _never_met_miner,
    _percentile,
    _request,
    _watch_loop,
)

from subnet.transport import (
    CHAT_PATH,
    ClientTimeouts,
    MinerClient,
    MinerServer,
    MinerTarget,
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
