"""Benchmark of one validator round: 256 simulated miners answering after 200 ms, 8 tasks each.

The miners (the transport's real signed miner app, "plausible" personality: a call
to the first offered tool after ``--delay`` seconds) run in a child process; the
validator runs here against a devchain subnet where they are registered and
served, on SQLite and on a throwaway PostgreSQL (skipped when the binaries are
missing). Printed per backend: the round's wall time, the time beyond the slowest
miner (wall time minus the longest single query), when the last request had been
handed to the transport (wall time, and validator CPU by then: with the farm's
queue absorbed into the latencies, beyond the slowest is about this moment plus a
short tail), the time from the last answer arriving to the round being scored,
validator CPU per response by stage (and its kernel share), the validator process's
peak RSS, and the farm's own CPU over the round (the two share the machine's cores;
--pin V:F gives each its own).

The validator runs on subnet.validator.node.event_loop_factory()'s loop (uvloop
where installed; --loop asyncio for asyncio's own); the farm, standing in for miners
on other machines, always runs on uvloop where installed.

CPU per stage: generate, variant and score are the wall time of the synchronous
code that does them (equal to its CPU on an idle machine; reading the process CPU
clock per response costs more than scoring on a busy VM); "query + store" is the
rest of the round's process CPU
(signing, HTTP, parsing, SQL, the SQLite driver's thread, the event loop itself):
the two interleave on one loop and cannot be told apart by a clock. The store's
wall time (batched inserts, mostly while slow miners are still answering) is
printed beside it. PostgreSQL's own server processes are not counted.

    .venv/bin/python bench/validator.py [--miners 256] [--tasks 8] [--delay 0.2]
        [--backends sqlite,postgres] [--rounds 1] [--loop uvloop|asyncio] [--pin 0:1] [--profile PATH]
        [--phrasing off|standin] [--phrasing-delay S] [--episodes N]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil
from prometheus_client import CollectorRegistry

# The test equipment (tests/support: simulated miners, a throwaway PostgreSQL) is imported from the
# repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from subnet.cli import OneLineParser, user_errors
from subnet.config import (
    ChainRetrySettings,
    DashboardSettings,
    DbSettings,
    DevchainSettings,
    MetricsSettings,
    PhrasingSettings,
    QuerySettings,
    RoundSettings,
    ScoringSettings,
    SubtensorSettings,
    ValidatorKeySettings,
    ValidatorSettings,
    WalletSettings,
    WeightsSettings,
    float_arg,
    int_arg,
)
from subnet.validator.rounds import RoundReport

MINER_URI = "//BenchMiner/{}"
BACKENDS = ("sqlite", "postgres")


def _backends(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in BACKENDS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected sqlite and/or postgres, got {text!r}")
    return names


# --- the child: a farm of simulated miners ------------------------------------------------------


async def serve_farm(args: argparse.Namespace) -> None:
    from subnet.devchain import dev_keypair
    from subnet.transport import DirectoryEntry
    from tests.support.simulation import AnswerKey, start_simulated_miner

    validators = [DirectoryEntry(uid=args.validator_uid, hotkey=args.validator_hotkey, stake=1000.0)]
    key = AnswerKey()
    miners = []
    for index in range(args.miners):
        miners.append(
            await start_simulated_miner(
                name=f"bench-{index}",
                personality="plausible",
                keypair=dev_keypair(MINER_URI.format(index)),
                validators=validators,
                key=key,
                params={"delay_s": args.delay},
            )
        )
    ports = {miner.hotkey: miner.port for miner in miners}
    # 256 servers' worth of long-lived objects: keep the collector's full passes off them.
    gc.freeze()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    profile = cProfile.Profile() if args.profile else None
    if profile is not None:
        profile.enable()  # from here on the farm only serves the rounds
    await asyncio.to_thread(Path(args.out).write_text, json.dumps(ports))
    await stop.wait()  # served until the parent terminates us
    if profile is not None:
        profile.disable()
        profile.dump_stats(args.profile)


# --- the parent: the validator ------------------------------------------------------------------


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def settings_for(root: Path, netuid: int, db_url: str, args: argparse.Namespace) -> ValidatorSettings:
    return ValidatorSettings(
        netuid=netuid,
        subtensor=SubtensorSettings(network="dev"),
        devchain=DevchainSettings(path=root / "devchain.sqlite", block_time=1.0),
        wallet=WalletSettings(name="validator", hotkey="default", path=root / "wallets"),
        chain=ChainRetrySettings(retries=1, backoff_base=0.05, backoff_max=0.1, timeout=30.0),
        db=DbSettings(url=db_url),
        scoring=ScoringSettings(alpha=0.1, min_samples=8),
        round=RoundSettings(tasks=args.tasks, interval=60.0, episodes=args.episodes, episode_deadline=120.0),
        # Every query of the round in flight at once: the round then lasts as long as its slowest miner.
        query=QuerySettings(timeout=30.0, concurrency=args.miners * args.tasks),
        weights=WeightsSettings(interval=None),
        validator=ValidatorKeySettings(secret_path=root / "validator.secret"),
        metrics=MetricsSettings(port=0),
        dashboard=DashboardSettings(port=0),
        phrasing=PhrasingSettings(engine="openai", url=args.phrasing_url, model="standin", concurrency=32)
        if args.phrasing_url
        else PhrasingSettings(),
    )


def start_standin(root: Path, delay: float) -> tuple[subprocess.Popen[bytes], str]:
    """The stand-in phrasing model (bench/phrasing_standin.py) in a process of its own."""
    url_file = root / "standin.url"
    standin = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("phrasing_standin.py")),
            f"--url-file={url_file}",
            f"--delay={delay}",
        ]
    )
    deadline = time.monotonic() + 60
    while not url_file.exists():
        if standin.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the stand-in phrasing model did not start")
        time.sleep(0.05)
    return standin, url_file.read_text().strip()


async def run_rounds(
    settings: ValidatorSettings, count: int, farm: psutil.Process, profile: cProfile.Profile | None
) -> list[tuple[RoundReport, Counter[str], float, float, float]]:
    from subnet.chain import ChainClient
    from subnet.validator.node import Validator, ValidatorOptions
    from subnet.wallets import load_wallet

    wallet = load_wallet(settings.wallet)
    chain = ChainClient.from_settings(settings, wallet)
    validator = Validator(
        settings, wallet=wallet, chain=chain, options=ValidatorOptions(install_signal_handlers=False)
    )
    await validator.start()
    try:
        await validator.sync_metagraph()
        results = []
        for _ in range(count):
            rss_before = psutil.Process().memory_info().rss / 2**20
            farm_before = _cpu_seconds(farm)
            own_before = os.times()
            if profile is not None:
                profile.enable()
            statuses_before = _responses_by_status(validator.registry)
            report = await validator.run_round()
            if profile is not None:
                profile.disable()
            own_after = os.times()
            system_s = own_after.system - own_before.system
            statuses = _responses_by_status(validator.registry) - statuses_before
            results.append((report, statuses, rss_before, _cpu_seconds(farm) - farm_before, system_s))
    finally:
        await validator.close()
        await chain.close()
    return results


def _responses_by_status(registry: CollectorRegistry) -> Counter[str]:
    """The validator's responses so far by query status, as /metrics shows them."""
    counts: Counter[str] = Counter()
    for metric in registry.collect():
        for sample in metric.samples:
            if sample.name == "subnet_validator_responses_total":
                counts[sample.labels["status"]] += int(sample.value)
    return counts


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def print_report(
    backend: str,
    report: RoundReport,
    statuses: Counter[str],
    rss_before: float,
    peak: float,
    farm_cpu: float,
    system_s: float,
    index: int = 1,
) -> None:
    responses = max(report.n_responses, 1)
    clock = report.clock.cpu
    query_and_store = max(0.0, report.cpu_s - sum(clock.values()))
    per_miner = report.n_responses // max(report.n_miners, 1)
    print(f"[{backend}] one round: {report.n_miners} miners x {per_miner} tasks")
    print(f"  responses           {report.n_responses}  ({dict(statuses)})")
    print(f"  wall time           {report.wall_s:.3f} s (queries {report.query_wall_s:.3f} s)")
    print(f"  slowest miner       {report.slowest_response_s:.3f} s")
    print(
        f"  beyond the slowest  {report.wall_s - report.slowest_response_s:.3f} s (wall time - longest query)"
    )
    print(
        f"  all requests sent   {report.all_sent_s:.3f} s after the start"
        f" ({report.all_sent_cpu_s:.3f} s of validator CPU by then)"
    )
    print(f"  after last answer   {report.after_last_answer_s:.3f} s (last answer in -> round scored)")
    if report.slowest_episodes_s:
        print(
            f"  episodes            slowest miner's own serial time {report.slowest_episodes_s:.3f} s;"
            f" the round took {report.wall_s - report.slowest_episodes_s:.3f} s beyond it"
        )
    cpu_ms = 1e3 * report.cpu_s / responses
    print(
        f"  validator CPU       {report.cpu_s:.3f} s of process CPU = {cpu_ms:.3f} ms per response"
        f" (kernel {1e3 * system_s / responses:.3f} ms of it)"
    )
    for stage in ("generate", "variant", "score"):
        print(f"    {stage:<15} {1e3 * clock[stage] / responses:8.3f} ms per response")
    print(
        f"    query + store   {1e3 * query_and_store / responses:8.3f} ms per response (the rest of the CPU)"
    )
    store_ms = 1e3 * report.clock.store_wall / responses
    print(f"    store (wall)    {store_ms:8.3f} ms per response, overlapping the queries")
    print(f"  RSS                 {rss_before:.0f} MB before the round, peak {peak:.0f} MB")
    if report.phrasing is not None and report.phrasing.engine != "templates":
        stats = report.phrasing
        when = "ahead, during the previous round" if index > 1 else "in the round: nothing was prepared yet"
        print(
            f"  phrasing            {stats.phrased} of {stats.slots} phrased in {stats.wall_s:.3f} s"
            f" ({when});"
            f" {stats.retried} retries, {stats.dropped} dropped, rejected {dict(stats.rejected)}"
        )
    farm_share = farm_cpu / max(report.wall_s, 1e-9)
    print(
        f"  miner farm CPU      {farm_cpu:.3f} s = {1e3 * farm_cpu / responses:.3f} ms per response"
        f" ({100 * farm_share:.0f}% of one core over the round)"
    )


async def bench(args: argparse.Namespace) -> None:
    from subnet.db import sqlite_url, upgrade
    from subnet.devchain import DevChain, dev_keypair
    from subnet.wallets import create_dev_wallet
    from tests.support.simulation import build_dev_subnet, serve_on_devchain

    root = Path(tempfile.mkdtemp(prefix="bench-validator-"))
    created = create_dev_wallet("validator", "default", root / "wallets")
    devchain = DevChain(root / "devchain.sqlite", block_time=1.0)
    hotkeys = [dev_keypair(MINER_URI.format(index)).ss58_address for index in range(args.miners)]
    subnet = build_dev_subnet(
        devchain,
        validator_hotkey=created.hotkey_ss58,
        validator_coldkey=created.coldkey_ss58,
        miner_hotkeys=hotkeys,
    )
    ports_file = root / "ports.json"
    farm = subprocess.Popen(  # noqa: ASYNC220 (started once, before anything is timed)
        [
            sys.executable,
            __file__,
            "farm",
            f"--miners={args.miners}",
            f"--delay={args.delay}",
            f"--validator-hotkey={created.hotkey_ss58}",
            f"--validator-uid={subnet.validator_uid}",
            f"--out={ports_file}",
            *([f"--profile={args.profile}.farm"] if args.profile else []),
        ]
    )
    pinned = _pin(args.pin, farm.pid)
    standin = None
    if args.phrasing == "standin":
        standin, args.phrasing_url = start_standin(root, args.phrasing_delay)
        print(
            f"phrasing: stand-in model at {args.phrasing_url} ({args.phrasing_delay * 1e3:.0f} ms per answer)"
        )
    try:
        deadline = time.monotonic() + 120
        while not ports_file.exists():
            if farm.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the miner farm did not start")
            await asyncio.sleep(0.1)
        for hotkey, port in json.loads(ports_file.read_text()).items():
            serve_on_devchain(devchain, subnet.netuid, hotkey, "127.0.0.1", int(port))
        print(
            f"{args.miners} simulated miners answering after {args.delay * 1e3:.0f} ms;"
            f" {os.cpu_count()} CPUs; {pinned}; validator loop {type(asyncio.get_running_loop()).__module__}"
        )

        for backend in args.backends:
            if backend == "sqlite":
                url = sqlite_url(root / "validator.sqlite")
                cluster = None
            else:
                from tests.support.postgres import PostgresUnavailable, create_database, start_cluster

                try:
                    cluster = start_cluster()
                except PostgresUnavailable as exc:
                    print(f"[postgres] skipped: {exc}")
                    continue
                url = create_database(cluster, "bench")
                await upgrade(url)
            try:
                profile = cProfile.Profile() if args.profile else None
                results = await run_rounds(
                    settings_for(root, subnet.netuid, url, args),
                    args.rounds,
                    psutil.Process(farm.pid),
                    profile,
                )
                if profile is not None:
                    profile.dump_stats(f"{args.profile}.{backend}")
                    print(f"[{backend}] profile of the rounds written to {args.profile}.{backend}")
                for index, (report, statuses, rss_before, farm_cpu, system_s) in enumerate(results, start=1):
                    label = backend if args.rounds == 1 else f"{backend}, round {index}"
                    print_report(
                        label, report, statuses, rss_before, peak_rss_mb(), farm_cpu, system_s, index
                    )
            finally:
                if cluster is not None:
                    cluster.stop()
    finally:
        farm.terminate()
        farm.wait(timeout=30)
        if standin is not None:
            standin.terminate()
            standin.wait(timeout=30)
        await devchain.close()


def main() -> None:
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    farm = sub.add_parser("farm", help="(internal) serve the simulated miners")
    farm.add_argument("--miners", type=int, required=True)
    farm.add_argument("--delay", type=float, required=True)
    farm.add_argument("--validator-hotkey", required=True)
    farm.add_argument("--validator-uid", type=int, required=True)
    farm.add_argument("--out", required=True)
    farm.add_argument("--profile")
    parser.add_argument("--miners", type=int_arg(1), default=256)
    parser.add_argument("--tasks", type=int_arg(1), default=8)
    parser.add_argument("--delay", type=float_arg(0.0), default=0.2)
    parser.add_argument(
        "--episodes",
        type=int_arg(0),
        default=0,
        help="multi-turn episodes per miner (each step one request answered after --delay; the farm"
        " makes one call per turn, then answers in words)",
    )
    parser.add_argument(
        "--backends", type=_backends, default=list(BACKENDS), help="sqlite,postgres or one of them"
    )
    parser.add_argument(
        "--rounds",
        type=int_arg(1),
        default=1,
        help="rounds per backend (later ones reuse kept-alive connections)",
    )
    parser.add_argument(
        "--phrasing",
        choices=("off", "standin"),
        default="off",
        help="standin: the round's requests are phrased by the stand-in model (bench/phrasing_standin.py)"
        " in its own process; round 1 phrases in the round, later rounds use the set phrased ahead",
    )
    parser.add_argument(
        "--phrasing-delay", type=float_arg(0.0), default=0.0, help="seconds the stand-in takes per answer"
    )
    parser.add_argument(
        "--loop",
        choices=("uvloop", "asyncio"),
        default="uvloop",
        help="the validator's event loop: uvloop (subnet.validator.node.event_loop_factory, the default"
        " where installed) or asyncio's own; the farm always runs on uvloop where installed",
    )
    parser.add_argument(
        "--pin",
        default="",
        metavar="V:F",
        help="pin the validator to CPUs V and the miner farm to CPUs F (e.g. 0:1), so that each has a core",
    )
    parser.add_argument(
        "--profile",
        metavar="PATH",
        help="write cProfile stats of the rounds to PATH.<backend> and of the miner farm to PATH.farm",
    )
    with user_errors(parser.prog):
        args = parser.parse_args()
    args.phrasing_url = None
    from subnet.validator.node import event_loop_factory

    # The farm stands in for miners on other machines: the faster it serves, the more the
    # figures measure the validator. The validator's loop is the one production would use.
    farm_side = args.command == "farm"
    loop_factory = event_loop_factory() if farm_side or args.loop == "uvloop" else None
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(serve_farm(args) if farm_side else bench(args))


def _pin(spec: str, farm_pid: int) -> str:
    """Pin the validator and the farm to CPU sets given as "VALIDATOR:FARM" (e.g. "0:1")."""
    if not spec:
        return "processes not pinned"
    validator_cpus, _, farm_cpus = spec.partition(":")
    try:
        own = {int(cpu) for cpu in validator_cpus.split(",")}
        farm = {int(cpu) for cpu in farm_cpus.split(",")}
        os.sched_setaffinity(0, own)
        os.sched_setaffinity(farm_pid, farm)
    except (ValueError, OSError) as exc:
        raise SystemExit(f"--pin {spec!r}: {exc}") from None
    return f"validator pinned to CPU {sorted(own)}, miner farm to CPU {sorted(farm)}"


if __name__ == "__main__":
    main()
