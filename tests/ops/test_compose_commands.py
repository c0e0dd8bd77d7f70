"""The compose stack's own commands, run outside Docker: the devchain stands in for the subtensor
localnet container, a throwaway PostgreSQL for the postgres service, loopback for the compose
network. The bootstrap and the migration run once, the two demo miners start and become healthy
(the compose healthcheck's /health), and the validator's command (plus --rounds 1) runs one round:
weights must be set, on the running miners. A round where the demo miners score nothing sets none (as
it should); the validator then runs again, at most three rounds in all. This is what `docker compose
up` does, short of Docker.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bittensor as bt
import pytest

from subnet.devchain import DevChain
from subnet.devchain.chain import dev_keypair
from tests.support.postgres import PostgresCluster, PostgresUnavailable, create_database, start_cluster


def _compose_helpers() -> Any:
    """tests/ops/test_compose.py's reading of the compose file (tests/ is not a package)."""
    path = Path(__file__).with_name("test_compose.py")
    spec = importlib.util.spec_from_file_location("compose_helpers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_helpers = _compose_helpers()
command_of, flag_value, load_compose = _helpers.command_of, _helpers.flag_value, _helpers.load_compose

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
CHAIN_URL = "ws://chain:9944"
BLOCK_TIME = "0.25"  # the localnet image's fast blocks
# A hang fails the test; the round's own length depends on the machine's load (figures in
# docs/testnet.md).
ROUND_BOUND_S = 540.0
# Rounds the validator may play before weights must be on chain (see the loop in the test).
ROUNDS_AT_MOST = 3


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def pg_cluster() -> Iterator[PostgresCluster]:
    try:
        cluster = start_cluster()
    except PostgresUnavailable as exc:
        pytest.skip(f"no throwaway PostgreSQL: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


def _outside_docker(command: list[str], places: dict[str, str], devchain: Path) -> list[str]:
    """A compose command as it runs here: the same program and flags, the devchain for the chain,
    the container paths and addresses replaced by this machine's."""
    argv = [places.get(part, part) for part in command]
    if argv[0] == "python":
        argv[0] = sys.executable
    if "--subtensor.network" in argv:
        argv[argv.index("--subtensor.network") + 1] = "dev"
        argv += ["--devchain.path", str(devchain)]
        if argv[1] != "scripts/bootstrap_localnet.py":
            argv += ["--devchain.block_time", BLOCK_TIME]
    return argv


def _set(argv: list[str], flag: str, value: str) -> None:
    argv[argv.index(flag) + 1] = value


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=3):
            return True
    except OSError:
        return False


async def test_the_compose_commands_set_weights_on_the_running_miners(
    pg_cluster: PostgresCluster, tmp_path: Path
) -> None:
    compose = load_compose()
    database = create_database(pg_cluster, "compose")
    devchain = tmp_path / "chain.sqlite"
    places = {
        "/wallets": str(tmp_path / "wallets"),
        "/data/validator.secret": str(tmp_path / "validator.secret"),
        flag_value(command_of(compose, "validator"), "--db.url"): database,
        "0.0.0.0": "127.0.0.1",
    }
    env = {**os.environ, **compose["x-neuron"]["environment"], "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = str(REPO)
    # Two model processes on a small machine: one thread each (the localnet does the same).
    env.setdefault("OMP_NUM_THREADS", "1")
    logs = tmp_path / "logs"
    logs.mkdir()
    started: list[subprocess.Popen[bytes]] = []

    def start(name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        with (logs / f"{name}.log").open("wb") as log:
            process = subprocess.Popen(argv, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        started.append(process)
        return process

    def tail(name: str) -> str:
        return "\n".join((logs / f"{name}.log").read_text(errors="replace").splitlines()[-15:])

    # The chain service: fast blocks, as the localnet image's "True" gives, and its subnet 1
    # ("apex") taken, so that the compose netuid (2) is the one the bootstrap gets.
    chain = DevChain(devchain, block_time=float(BLOCK_TIME))
    alice = dev_keypair("//Alice").ss58_address
    chain.create_subnet(alice, alice, netuid=1, name="apex")
    await chain.close()
    began = time.monotonic()
    try:
        for one_shot in ("bootstrap", "migrate"):
            argv = _outside_docker(command_of(compose, one_shot), places, devchain)
            code = await asyncio.to_thread(start(one_shot, argv).wait, 120)
            assert code == 0, f"{one_shot} failed:\n{tail(one_shot)}"

        ports: dict[str, int] = {}
        for miner in ("miner-1", "miner-2"):
            argv = _outside_docker(command_of(compose, miner), places, devchain)
            ports[miner] = _free_port()
            for flag in ("--axon.port", "--axon.external_port"):
                _set(argv, flag, str(ports[miner]))
            _set(argv, "--axon.external_ip", "127.0.0.1")
            _set(argv, "--model.max_new_tokens", "24")  # compose's 48: the same wiring, half the model time
            start(miner, argv)
        # The validator's depends_on: both miners healthy (compose's healthcheck probes /health).
        deadline = time.monotonic() + 180
        while not all(_healthy(port) for port in ports.values()):
            for process, name in zip(started[2:], ports, strict=True):
                assert process.poll() is None, f"{name} exited:\n{tail(name)}"
            assert time.monotonic() < deadline, "the miners did not become healthy in 180 s"
            await asyncio.sleep(1.0)

        # A smaller round than compose's (6 tasks, 2 episodes, weights after 8 answers): the wiring
        # is what is tested here, and the demo miners' answers are most of the time.
        for played in range(1, ROUNDS_AT_MOST + 1):
            argv = _outside_docker(command_of(compose, "validator"), places, devchain)
            _set(argv, "--dashboard.port", str(_free_port()))
            _set(argv, "--round.tasks", "3")
            _set(argv, "--round.episodes", "1")
            _set(argv, "--scoring.min_samples", "4")
            argv += ["--rounds", "1", "--metrics.port", str(_free_port())]
            name = f"validator-{played}"
            code = await asyncio.to_thread(start(name, argv).wait, ROUND_BOUND_S)
            assert code == 0, f"the validator failed:\n{tail(name)}"
            weighted, miner_uids = await _weights_on_chain(compose, devchain, places["/wallets"])
            if weighted:
                break
            # The one reason a round may set no weight here: the 135M demo model scored nothing on
            # its few tasks (it solves about a quarter of them), which the floor 0 turns away. The
            # validator's next run plays a round of other tasks on the same stored standings.
            log = (logs / f"{name}.log").read_text(errors="replace")
            nothing_scored = "below the floor 0.00 (--weights.floor): best 0.000" in log
            assert nothing_scored, f"no weights on chain; the validator's log ends:\n{tail(name)}"
    finally:
        for process in reversed(started):
            if process.poll() is None:
                process.terminate()
        for process in started:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
    print(f"compose commands: bootstrap to weights in {time.monotonic() - began:.0f} s, {played} round(s)")
    assert weighted, f"no weights after {played} rounds; the validator's log ends:\n{tail(name)}"
    assert weighted <= miner_uids, (weighted, miner_uids)
    assert "weights ok" in (logs / f"{name}.log").read_text(errors="replace")


async def _weights_on_chain(
    compose: dict[str, Any], devchain: Path, wallets: str
) -> tuple[set[int], set[int]]:
    """The uids the validator's weights row on the chain gives weight to, and the two miners' uids."""
    chain = DevChain(devchain)
    try:
        netuid = int(flag_value(command_of(compose, "validator"), "--netuid"))
        graph = chain.metagraph(netuid)
        assert graph is not None
        uid_of = dict(zip(graph["hotkeys"], range(len(graph["hotkeys"])), strict=True))
        validator_uid = uid_of[bt.Wallet("validator", "default", path=wallets).hotkeypub.ss58_address]
        miner_uids = {
            uid_of[bt.Wallet(name, "default", path=wallets).hotkeypub.ss58_address]
            for name in ("miner1", "miner2")
        }
        row = await chain.query("SubtensorModule", "Weights", [netuid, validator_uid])
    finally:
        await chain.close()
    return {int(uid) for uid, value in (row or []) if int(value) > 0}, miner_uids
