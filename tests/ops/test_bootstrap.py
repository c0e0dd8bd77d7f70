"""The localnet bootstrap, run for real against the devchain (the same script compose runs).

The real bittensor SDK sits on top of `subnet.devchain.DevChain`; wallets are created in a
temp dir. Each test starts from a fresh chain file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

bt = pytest.importorskip("bittensor")
devchain = pytest.importorskip("subnet.devchain", reason="the devchain has not landed")

from subnet.bootstrap import BootstrapError, BootstrapSettings, bootstrap, main  # noqa: E402

MINERS = ("miner1", "miner2")


def settings_for(tmp_path: Path, **overrides: Any) -> BootstrapSettings:
    values: dict[str, Any] = {
        "network": "dev",
        "devchain_path": tmp_path / "chain.sqlite",
        "wallet_path": tmp_path / "wallets",
        "miners": MINERS,
        "tempo": 20,
        "state_file": tmp_path / "state.json",
    }
    values.update(overrides)
    return BootstrapSettings(**values)


class Chain:
    """Read-back through the real SDK on the same devchain file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def __aenter__(self) -> Any:
        self._subtensor = bt.Subtensor("local", substrate=devchain.DevChain(self.path))
        return await self._subtensor.__aenter__()

    async def __aexit__(self, *exc: object) -> None:
        await self._subtensor.__aexit__(*exc)


def _wallet(tmp_path: Path, name: str) -> Any:
    return bt.Wallet(name, "default", path=str(tmp_path / "wallets"))


async def test_fresh_chain_gets_subnet_neurons_stake_and_settings(tmp_path: Path) -> None:
    lines: list[str] = []
    report = await bootstrap(settings_for(tmp_path), log=lines.append)

    assert report.netuid >= 1
    assert set(report.uids) == {"validator", *MINERS}
    assert len(set(report.uids.values())) == 3
    assert any(line.startswith("wallet owner: created") for line in lines)
    async with Chain(tmp_path / "chain.sqlite") as client:
        from bittensor import storage

        owner = _wallet(tmp_path, "owner")
        assert str(await client.query(storage.SubtensorModule.SubnetOwner, [report.netuid])) == (
            owner.coldkeypub.ss58_address
        )
        for label, uid in report.uids.items():
            wallet = _wallet(tmp_path, label)
            assert await client.neurons.uid(wallet.hotkey.ss58_address, report.netuid) == uid
        validator = _wallet(tmp_path, "validator")
        stake = await client.query(
            storage.SubtensorModule.TotalHotkeyAlpha, [validator.hotkey.ss58_address, report.netuid]
        )
        assert int(stake) == 100 * 10**9
        assert (await client.subnets.subnet(report.netuid)).tempo == 20
        assert await client.subnets.commit_reveal_enabled(report.netuid) is False
        for name in MINERS:
            balance = await client.balances.get(_wallet(tmp_path, name).coldkeypub.ss58_address)
            assert 900 < float(balance.tao) <= 1000  # funded to --fund, minus the burn


async def test_rerun_skips_everything_and_moves_no_money(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    first = await bootstrap(settings, log=lambda _line: None)

    async def balances() -> dict[str, float]:
        async with Chain(tmp_path / "chain.sqlite") as client:
            return {
                name: float((await client.balances.get(_wallet(tmp_path, name).coldkeypub.ss58_address)).tao)
                for name in ("owner", "validator", *MINERS)
            }

    before = await balances()
    second = await bootstrap(settings, log=lambda _line: None)
    assert second.netuid == first.netuid and second.uids == first.uids
    assert second.done == []
    assert {"register subnet", "start subnet", "register validator", "stake validator", "fund owner"} <= set(
        second.skipped
    )
    assert await balances() == before
    state = (tmp_path / "state.json").read_text()
    assert f'"netuid": {first.netuid}' in state


async def test_rerun_repairs_commit_reveal_and_tempo(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    report = await bootstrap(settings, log=lambda _line: None)
    chain = devchain.DevChain(tmp_path / "chain.sqlite")
    chain.set_hyperparameter(report.netuid, "commit_reveal_weights_enabled", True)
    chain.set_hyperparameter(report.netuid, "tempo", 99)
    await chain.close()

    again = await bootstrap(settings, log=lambda _line: None)
    assert {"commit-reveal off", "set tempo"} <= set(again.done)
    async with Chain(tmp_path / "chain.sqlite") as client:
        assert await client.subnets.commit_reveal_enabled(report.netuid) is False
        assert (await client.subnets.subnet(report.netuid)).tempo == 20


async def test_netuid_mismatch_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(BootstrapError, match=r"re-run with --netuid 1 .*NETUID=1"):
        await bootstrap(settings_for(tmp_path, netuid=7), log=lambda _line: None)


async def test_missing_wallet_without_create_names_the_command(tmp_path: Path) -> None:
    with pytest.raises(BootstrapError, match=r"python -m subnet\.wallets create --wallet\.name owner"):
        await bootstrap(settings_for(tmp_path, create_wallets=False), log=lambda _line: None)


def test_command_line_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "--subtensor.network",
        "dev",
        "--devchain.path",
        str(tmp_path / "chain.sqlite"),
        "--wallet.path",
        str(tmp_path / "wallets"),
        "--miners",
        *MINERS,
        "--tempo",
        "20",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "bootstrap: ready on dev: netuid 1; validator uid 1, miner1 uid 2, miner2 uid 3" in out


def test_chain_down_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unused_tcp_port: int
) -> None:
    argv = ["--subtensor.network", f"ws://127.0.0.1:{unused_tcp_port}", "--wallet.path", str(tmp_path)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bootstrap: error: cannot reach the chain")


@pytest.mark.parametrize(
    "argv",
    [
        ["--fund", "50", "--stake", "100"],
        ["--tempo", "0"],
        ["--validator", "same", "--owner", "same"],
        ["--no-such-flag"],
        ["--subtensor.network", "finney"],
        ["--subtensor.chain_endpoint", "wss://test.finney.opentensor.ai:443"],
    ],
)
def test_bad_flags_are_one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


class _Result:
    def __init__(self, success: bool, message: str = "") -> None:
        self.success, self.message = success, message


class _OwnerRefusedClient:
    """Just enough client for `set_hyperparameter`: the owner is refused, sudo is accepted.

    The devchain lets the owner set everything, so this is the one path it cannot show: on a
    real localnet, tempo below the owner's range needs root (//Alice wraps it in Sudo.sudo).
    """

    def __init__(self) -> None:
        self.submitted: list[tuple[Any, Any]] = []

    async def submit_call(self, call: Any, signer: Any) -> _Result:
        self.submitted.append((call, signer))
        if call.module == "Sudo":
            return _Result(True)
        return _Result(False, "BadOrigin: the owner may not set this value")

    async def compose(self, call: Any) -> Any:
        return ("composed", call)


async def test_root_only_setting_falls_back_to_sudo(tmp_path: Path) -> None:
    from subnet.bootstrap import Bootstrapper

    client = _OwnerRefusedClient()
    lines: list[str] = []
    owner, sudo = object(), object()
    await Bootstrapper(client, settings_for(tmp_path), log=lines.append).set_hyperparameter(
        owner, sudo, 2, "tempo", 20
    )
    (first, first_signer), (second, second_signer) = client.submitted
    assert (first.module, first.function, first.params) == (
        "AdminUtils",
        "sudo_set_tempo",
        {"netuid": 2, "tempo": 20},
    )
    assert first_signer is owner
    assert (second.module, second.function) == ("Sudo", "sudo")
    assert second.params["call"] == ("composed", first) and second_signer is sudo
    assert any("retrying as sudo" in line for line in lines)
