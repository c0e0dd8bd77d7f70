"""Separate OS processes sharing one devchain file: concurrent writers and a writer killed mid-transaction."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from subnet.devchain import RAO_PER_TAO, DevChain, dev_keypair, rules

ALICE = "//Alice"

# Each worker registers its own hotkey through the real SDK (BurnedRegister, the MEV-shielded path),
# paid by Alice's coldkey, after every worker is ready (a file barrier), so the writes truly overlap.
_REGISTER_WORKER = textwrap.dedent(
    """
    import asyncio, sys, time
    from pathlib import Path
    import bittensor as bt
    from subnet.devchain import DevChain, dev_keypair

    path, netuid, name, barrier = sys.argv[1], int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])

    async def main() -> None:
        chain = DevChain(path)
        hotkey = dev_keypair("//" + name).ss58_address
        async with bt.Subtensor("local", substrate=chain) as client:
            (barrier / (name + ".ready")).touch()
            while not (barrier / "go").exists():
                time.sleep(0.01)
            result = await client.execute(
                bt.BurnedRegister(netuid=netuid, hotkey_ss58=hotkey), dev_keypair("//Alice")
            )
            uid = await client.read("uid", hotkey_ss58=hotkey, netuid=netuid)
        print(result.success, uid, result.message)

    asyncio.run(main())
    """
)

# Opens a write transaction, makes a registration inside it, signals, then hangs until killed.
_CRASH_WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from subnet.devchain import DevChain, dev_keypair
    from subnet.devchain import rules

    path, netuid, marker = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    chain = DevChain(path)
    alice = dev_keypair("//Alice").ss58_address

    def half_done(ctx):
        for i in range(3):
            rules.burned_register(ctx, alice, netuid, dev_keypair("//Doomed%d" % i).ss58_address)
        rules.credit(ctx, alice, 10**15)
        marker.touch()
        time.sleep(60)

    chain.write_sync(half_done)
    """
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _free(chain: DevChain, address: str) -> int:
    """The account's free balance in rao, read from the chain's file as every extrinsic reads it."""
    return chain.read_sync(lambda ctx: rules.balance(ctx, address))


def _subnet(chain: DevChain) -> int:
    alice = dev_keypair(ALICE).ss58_address
    return chain.create_subnet(alice, dev_keypair("//AliceOwnerHotkey").ss58_address, immunity_period=0)


def test_concurrent_registrations_from_separate_processes_get_distinct_uids(
    chain: DevChain, chain_path: Path, tmp_path: Path
) -> None:
    netuid = _subnet(chain)
    alice = dev_keypair(ALICE).ss58_address
    before = _free(chain, alice)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    names = ["Worker1", "Worker2", "Worker3"]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _REGISTER_WORKER, str(chain_path), str(netuid), name, str(barrier)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for name in names
    ]
    try:
        _wait_for(lambda: all((barrier / f"{n}.ready").exists() for n in names), 60, "workers to be ready")
        (barrier / "go").touch()
        outputs = [w.communicate(timeout=60) for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
    results = [out.split() for out, _err in outputs]
    assert all(w.returncode == 0 for w in workers), [err for _out, err in outputs]
    assert [r[0] for r in results] == ["True"] * len(names), outputs
    uids = sorted(int(r[1]) for r in results)
    assert uids == [1, 2, 3]  # distinct, after the owner's uid 0
    graph = chain.metagraph(netuid)
    assert graph is not None and graph["num_uids"] == 4
    assert sorted(graph["hotkeys"][1:]) == sorted(dev_keypair("//" + n).ss58_address for n in names)
    assert _free(chain, alice) == before - len(names) * RAO_PER_TAO  # every burn paid exactly once


def test_a_writer_killed_mid_transaction_leaves_the_file_consistent(
    chain: DevChain, chain_path: Path, tmp_path: Path
) -> None:
    netuid = _subnet(chain)
    alice = dev_keypair(ALICE).ss58_address
    before_balance = _free(chain, alice)
    before_graph = chain.metagraph(netuid)
    marker = tmp_path / "inside-transaction"
    worker = subprocess.Popen(
        [sys.executable, "-c", _CRASH_WORKER, str(chain_path), str(netuid), str(marker)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    try:
        _wait_for(marker.exists, 60, "the worker to be inside its write transaction")
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert worker.returncode == -signal.SIGKILL

    with sqlite3.connect(chain_path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    reopened = DevChain(chain_path)
    assert _free(reopened, alice) == before_balance  # neither the burns nor the credit landed
    after_graph = reopened.metagraph(netuid)
    assert after_graph is not None and before_graph is not None
    assert after_graph["hotkeys"] == before_graph["hotkeys"]
    # The write lock died with the process: the next writer goes straight through.
    assert reopened.register(netuid, dev_keypair("//Survivor").ss58_address, alice) == 1
