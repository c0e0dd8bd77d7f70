"""A run in a reused state folder scores and pays only the miners it starts: the miners an earlier
run registered and this one does not start lose their axons (so the validator neither queries nor
pays them), and the leaderboard still shows any of them that holds weight."""

from __future__ import annotations

from pathlib import Path

import pytest

from subnet.devchain import rules
from subnet.localnet.leaderboard import ChainStanding
from subnet.localnet.run import NOT_STARTED, Localnet
from subnet.localnet.settings import parse_settings


async def _bootstrapped(state: Path, miners: int, lines: list[str]) -> Localnet:
    localnet = Localnet(
        parse_settings(["--state.dir", str(state), "--miners", str(miners)]), out=lines.append
    )
    localnet.prepare_state()
    await localnet.open_devchain()
    await localnet.bootstrap()
    return localnet


def _serve(localnet: Localnet, hotkey: str, port: int) -> None:
    localnet._devchain.write_sync(
        lambda ctx: rules.serve_axon(
            ctx, hotkey, localnet.netuid, ip=2130706433, port=port, ip_type=4, protocol=4, version=1
        )
    )


def _ports(localnet: Localnet) -> list[int]:
    graph = localnet._devchain.metagraph(localnet.netuid)
    return [int(axon["port"]) for axon in graph["axons"]]


async def test_miners_of_an_earlier_run_lose_their_axons_and_show_when_paid(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first: list[str] = []
    earlier = await _bootstrapped(state, 3, first)
    try:
        for index, miner in enumerate(earlier.miners):
            _serve(earlier, miner.hotkey, 9000 + index)
        await earlier.retire_absent_miners()
        assert earlier.absent == [] and not any("not started" in line for line in first)
        hotkeys = {miner.label: miner.hotkey for miner in earlier.miners}
    finally:
        await earlier.close()

    lines: list[str] = []
    later = await _bootstrapped(state, 1, lines)
    try:
        assert [miner.label for miner in later.miners] == ["miner1"]
        await later.retire_absent_miners()
        assert [(miner.label, miner.uid) for miner in later.absent] == [("miner2", 3), ("miner3", 4)]
        assert all(miner.hotkey == hotkeys[miner.label] for miner in later.absent)
        ports = _ports(later)
        assert ports[2] == 9000 and ports[3] == 0 and ports[4] == 0  # miner1 keeps its axon
        notice = [line for line in lines if line.startswith("not started this run")]
        assert notice and "miner2 (uid 3), miner3 (uid 4)" in notice[0] and "--reset" in notice[0]

        # The leaderboard shows every uid that holds weight, a miner not started too.
        from subnet.db import upgrade

        await upgrade(later.db_url)
        shown: list[str] = []
        import builtins

        original = builtins.print
        builtins.print = lambda *args, **_kw: shown.append(" ".join(str(a) for a in args))  # type: ignore[assignment]
        try:
            await later.print_leaderboard(ChainStanding(100, 90, {2: 0.6, 3: 0.4}, {2: 0.6, 3: 0.4, 4: 0.0}))
        finally:
            builtins.print = original
        table = "\n".join(shown)
        assert "miner1" in table and "miner2" in table and NOT_STARTED in table
        assert "miner3" not in table  # no weight, no incentive: not this run's business
    finally:
        await later.close()


async def test_a_long_wait_for_the_miners_says_what_it_waits_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from subnet.localnet import run as localnet_run

    monkeypatch.setattr(localnet_run, "WAIT_REPORT_S", 0.01)
    lines: list[str] = []
    localnet = Localnet(parse_settings(["--state.dir", str(tmp_path / "state")]), out=lines.append)
    waiting = {"miner2", "miner1"}
    reporter = asyncio.create_task(localnet._report_wait(waiting, "come up (loading the model)"))
    await asyncio.sleep(0.05)
    waiting.clear()
    await asyncio.sleep(0.05)
    reporter.cancel()
    assert lines and lines[0].startswith("waiting for miner1, miner2 to come up (loading the model) (")
    assert all("miner1" in line for line in lines)  # nothing said once nothing is awaited


def test_endpoint_miners_are_stopped_with_the_demo_miners(tmp_path: Path) -> None:
    """Before the epoch is settled every miner of the run stops, engineN ones too (they used to
    run on until the very end, after the leaderboard)."""
    from types import SimpleNamespace

    from subnet.localnet.leaderboard import MinerInfo

    localnet = Localnet(parse_settings(["--state.dir", str(tmp_path / "state")]), out=print)
    localnet.miners = [
        MinerInfo("miner1", "5A", 2, "json"),
        MinerInfo("engine1", "5B", 3, "auto", "off", "u"),
    ]
    children = [SimpleNamespace(name=name) for name in ("demo model", "miner1", "engine1", "validator")]
    localnet.supervisor.children = children  # type: ignore[assignment]
    assert [child.name for child in localnet.miner_children()] == ["miner1", "engine1"]
