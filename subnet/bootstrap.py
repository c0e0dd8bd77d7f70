"""Bootstrap a local subnet on a fresh chain: the docker localnet or the devchain.

    python scripts/bootstrap_localnet.py --subtensor.network ws://127.0.0.1:9944 --netuid 2
    python scripts/bootstrap_localnet.py --subtensor.network dev --devchain.path chain.sqlite

The network defaults to ``dev`` (the devchain), as for the neurons and the localnet; the
development wallets go to ``wallets/`` in the user data directory unless ``--wallet.path``
says otherwise (never ``~/.bittensor/wallets`` by default: their keys are unencrypted).

In order, each step skipped when the chain already shows it done (so re-running is safe):
development wallets created (unencrypted, for local use only), wallets funded from the
`//Alice` development account, the subnet registered by the owner wallet and started,
commit-reveal turned off (a sealed localnet has no drand beacon to reveal with), the tempo
set, the validator and the miners registered, the validator staked. Everything goes through
the bittensor 11 SDK (intents where one fits, raw calls where the SDK's intent would add
what a local chain lacks), so the same script runs against a real subtensor localnet and the
devchain.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from subnet.cli import OneLineParser, UsageError, float_arg, int_arg, run_main, user_errors
from subnet.config.flags import add_flag
from subnet.config.settings import default_dev_wallet_path
from subnet.devchain import DevChain
from subnet.devchain.store import StoreError
from subnet.wallets import create_dev_wallet

PROG = "scripts/bootstrap_localnet.py"
DEV_NETWORK = "dev"
DEFAULT_SUDO_URI = "//Alice"
# Headroom left on each funded coldkey above what the bootstrap spends, for fees.
FEE_HEADROOM_TAO = 10.0
# Former spellings, refused in one line naming the flag now (the neurons' registry names).
RENAMED = {
    "--hotkey": "--wallet.hotkey",
    "--sudo-uri": "--devchain.sudo_uri",
    "--start-timeout": "--subnet.start_timeout",
    "--state-file": "--state.file",
    "--no-create-wallets": "--wallet.no_create",
}

T = TypeVar("T")


class BootstrapError(UsageError):
    """Something the user can fix (chain down, netuid mismatch, a refused extrinsic): one line, exit 2."""


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class BootstrapSettings:
    """What to set up, and on which chain."""

    network: str = DEV_NETWORK  # finney-style name, ws(s):// URL, or "dev" (the neurons' default too)
    devchain_path: Path | None = None
    # Unencrypted development keys: kept beside the devchain unless --wallet.path says otherwise,
    # never in the home folder's ~/.bittensor/wallets by default.
    wallet_path: Path = field(default_factory=default_dev_wallet_path)
    owner: str = "owner"
    validator: str = "validator"
    miners: tuple[str, ...] = ("miner1", "miner2")
    hotkey: str = "default"
    netuid: int | None = None  # the netuid the neurons are configured with; checked, not chosen
    sudo_uri: str = DEFAULT_SUDO_URI
    fund_tao: float = 1000.0
    stake_tao: float = 100.0
    tempo: int | None = None
    create_wallets: bool = True
    start_timeout_s: float = 300.0
    state_file: Path | None = None


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        renamed=RENAMED,
        description="Create, fund, register and stake a local subnet (idempotent).",
    )
    # The chain and wallet flags are the neurons' own (subnet.config's registry): same help, same checks.
    add_flag(
        parser,
        "subtensor.network",
        dest="network",
        default=DEV_NETWORK,
        note="Default: dev, as for the neurons and the localnet.",
    )
    add_flag(parser, "subtensor.chain_endpoint", dest="chain_endpoint")
    add_flag(parser, "devchain.path", dest="devchain_path", note="Default: the devchain's default.")
    add_flag(
        parser,
        "wallet.path",
        dest="wallet_path",
        default=None,
        note="Created there when missing; default: wallets/ in the user data directory, beside the "
        "devchain (give the neurons the same --wallet.path).",
    )
    parser.add_argument("--owner", default="owner", help="wallet that registers and owns the subnet")
    parser.add_argument("--validator", default="validator", help="validator wallet")
    parser.add_argument("--miners", nargs="*", default=["miner1", "miner2"], help="miner wallets")
    add_flag(parser, "wallet.hotkey", dest="hotkey", default="default", note="Inside every wallet.")
    add_flag(parser, "netuid", note="The neurons' netuid: the bootstrap stops if the chain assigns another.")
    parser.add_argument(
        "--devchain.sudo_uri",
        dest="sudo_uri",
        default=DEFAULT_SUDO_URI,
        help="funded development account (default //Alice)",
    )
    parser.add_argument(
        "--fund",
        dest="fund_tao",
        type=float_arg(0.0),
        default=1000.0,
        help="TAO a wallet is topped up to when it holds less than the remaining steps spend",
    )
    parser.add_argument(
        "--stake",
        dest="stake_tao",
        type=float_arg(0.0),
        default=100.0,
        help="TAO the validator stakes on its hotkey",
    )
    parser.add_argument(
        "--tempo", type=int_arg(1, 65535), default=None, help="subnet tempo in blocks (default: keep)"
    )
    parser.add_argument(
        "--wallet.no_create",
        dest="create_wallets",
        action="store_false",
        help="fail on a missing wallet instead of creating an unencrypted development one",
    )
    parser.add_argument(
        "--subnet.start_timeout",
        dest="start_timeout_s",
        type=float_arg(0.0, low_open=True),
        default=300.0,
        help="seconds to wait until the chain lets the new subnet start",
    )
    parser.add_argument(
        "--state.file", dest="state_file", type=Path, default=None, help="write the outcome here as JSON"
    )
    return parser


def public_network(network: str) -> str | None:
    """The public network `network` names or points at (finney, test, ...), None for a local one."""
    from bittensor import settings as bt_settings

    for name, endpoint in bt_settings.NETWORKS.items():
        if name != "local" and network in (name, endpoint):
            return name
    return None


def parse_settings(argv: Sequence[str] | None = None) -> BootstrapSettings:
    args = build_parser().parse_args(argv)
    target = args.chain_endpoint or args.network
    public = public_network(target)
    if public is not None:
        # Funding from //Alice and unencrypted keys only make sense on a chain of your own.
        build_parser().error(
            f"{target} is the public {public} network; the bootstrap is for local chains only"
        )
    if args.state_file is not None and args.state_file.is_dir():
        build_parser().error(f"--state.file {args.state_file} is a folder; give a file path")
    if args.fund_tao < args.stake_tao + FEE_HEADROOM_TAO:
        build_parser().error(f"--fund must cover --stake plus {FEE_HEADROOM_TAO:g} TAO of fees")
    names = [args.owner, args.validator, *args.miners]
    if len(set(names)) != len(names):
        build_parser().error("the owner, validator and miner wallets must all have different names")
    return BootstrapSettings(
        network=args.chain_endpoint or args.network,
        devchain_path=args.devchain_path,
        wallet_path=(args.wallet_path or default_dev_wallet_path()).expanduser(),
        owner=args.owner,
        validator=args.validator,
        miners=tuple(args.miners),
        hotkey=args.hotkey,
        netuid=args.netuid,
        sudo_uri=args.sudo_uri,
        fund_tao=args.fund_tao,
        stake_tao=args.stake_tao,
        tempo=args.tempo,
        create_wallets=args.create_wallets,
        start_timeout_s=args.start_timeout_s,
        state_file=args.state_file,
    )


# --------------------------------------------------------------------------- outcome


@dataclass
class BootstrapReport:
    """What the chain looks like afterwards, and which steps ran (the rest were already done)."""

    network: str
    netuid: int = -1
    uids: dict[str, int] = field(default_factory=dict)
    hotkeys: dict[str, str] = field(default_factory=dict)
    done: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


Log = Callable[[str], None]


def _print_log(line: str) -> None:
    print(f"bootstrap: {line}", flush=True)


# --------------------------------------------------------------------------- wallets


def ensure_wallet(wallet_path: Path, name: str, hotkey: str, *, create: bool) -> tuple[Any, bool]:
    """The wallet `name`/`hotkey`, created unencrypted (subnet.wallets) when missing and `create` is set.

    Returns (wallet, created). Existing keys are never overwritten.
    """
    import bittensor as bt

    wallet = bt.Wallet(name=name, hotkey=hotkey, path=str(wallet_path))
    if wallet.coldkeypub_file.exists_on_device() and wallet.hotkey_file.exists_on_device():
        return wallet, False
    if not create:
        raise BootstrapError(
            f"wallet {name}/{hotkey} not found in {wallet_path}; create it with "
            f"`python -m subnet.wallets create --wallet.name {name} --wallet.hotkey {hotkey} "
            f"--wallet.path {wallet_path}` or drop --wallet.no_create"
        )
    try:
        create_dev_wallet(name, hotkey, wallet_path)
    except (ValueError, OSError) as exc:
        raise BootstrapError(f"cannot create wallet {name}/{hotkey} in {wallet_path}: {exc}") from None
    return bt.Wallet(name=name, hotkey=hotkey, path=str(wallet_path)), True


# --------------------------------------------------------------------------- chain steps


async def _checked(label: str, submission: Awaitable[Any]) -> Any:
    """Await an extrinsic and turn a failure into one readable line."""
    from bittensor import BittensorError

    try:
        result = await submission
    except BittensorError as exc:
        raise BootstrapError(f"{label} failed: {exc}") from None
    if not getattr(result, "success", False):
        raise BootstrapError(f"{label} failed: {getattr(result, 'message', '') or 'refused by the chain'}")
    return result


def _key(key: Any) -> Any:
    """A map entry's key: the SDK hands single keys bare or as a one-element tuple."""
    return key[0] if isinstance(key, (tuple, list)) else key


async def _done(value: T) -> T:
    return value


class Bootstrapper:
    """The bootstrap's steps against one connected SDK client (`bt.Client`)."""

    def __init__(self, client: Any, settings: BootstrapSettings, log: Log = _print_log) -> None:
        self.client = client
        self.settings = settings
        self.log = log
        self.report = BootstrapReport(network=settings.network)

    def _did(self, step: str, detail: str) -> None:
        self.report.done.append(step)
        self.log(f"{step}: {detail}")

    def _skip(self, step: str, detail: str) -> None:
        self.report.skipped.append(step)
        self.log(f"{step}: already done ({detail})")

    # -- money

    async def fund(self, label: str, coldkey_ss58: str, need_tao: float, sudo: Any) -> None:
        """Top `coldkey_ss58` up to --fund (at least `need_tao`) when it holds less than `need_tao`.

        `need_tao` is what the steps still to run will spend from this coldkey, fees included,
        so a re-run after everything is done transfers nothing.
        """
        from bittensor import Transfer

        balance = float((await self.client.balances.get(coldkey_ss58)).tao)
        step = f"fund {label}"
        if balance >= need_tao:
            self._skip(step, f"balance {balance:.2f} TAO covers {need_tao:.2f}")
            return
        amount = max(self.settings.fund_tao, need_tao) - balance
        await _checked(step, self.client.execute(Transfer(dest_ss58=coldkey_ss58, amount_tao=amount), sudo))
        self._did(step, f"sent {amount:.2f} TAO from {self.settings.sudo_uri}")

    # -- the subnet

    async def owned_subnet(self, owner_coldkey: str) -> int | None:
        """The lowest netuid owned by `owner_coldkey`, or None."""
        from bittensor import storage

        added = await self.client.query_map(storage.SubtensorModule.NetworksAdded)
        for netuid in sorted(int(_key(key)) for key, is_added in added if is_added):
            owner = await self.client.query(storage.SubtensorModule.SubnetOwner, [netuid])
            if owner is not None and str(owner) == owner_coldkey:
                return netuid
        return None

    async def register_subnet(self, owner: Any) -> int:
        from bittensor import RegisterSubnet

        owner_coldkey = owner.coldkeypub.ss58_address
        netuid = await self.owned_subnet(owner_coldkey)
        if netuid is not None:
            self._skip("register subnet", f"netuid {netuid} is owned by {self.settings.owner}")
        else:
            await _checked(
                "register subnet",
                self.client.execute(RegisterSubnet(hotkey_ss58=owner.hotkey.ss58_address), owner),
            )
            netuid = await self.owned_subnet(owner_coldkey)
            if netuid is None:
                raise BootstrapError("register subnet: the chain accepted it but no subnet lists the owner")
            self._did("register subnet", f"netuid {netuid}")
        expected = self.settings.netuid
        if expected is not None and expected != netuid:
            raise BootstrapError(
                f"the chain gave this subnet netuid {netuid}, but the neurons are configured for "
                f"{expected}; re-run with --netuid {netuid} "
                f"(docker compose: NETUID={netuid} docker compose up)"
            )
        self.report.netuid = netuid
        return netuid

    async def _started_at(self, netuid: int) -> int | None:
        """The block the subnet started at; None when not started or the chain does not say."""
        from bittensor import BittensorError, storage

        try:
            first = await self.client.query(storage.SubtensorModule.FirstEmissionBlockNumber, [netuid])
        except BittensorError:
            return None  # a chain that does not keep the item (the devchain); start_call will tell
        return int(first) if first else None

    async def start_subnet(self, owner: Any, netuid: int) -> None:
        from bittensor import StartCall

        started = await self._started_at(netuid)
        if started is not None:
            self._skip("start subnet", f"started at block {started}")
            return
        schedule = await self.client.subnets.subnet_start_schedule(netuid)
        earliest = int(schedule["earliest_start_block"])
        deadline = time.monotonic() + self.settings.start_timeout_s
        block = await self.client.block()
        if block < earliest:
            self.log(f"start subnet: waiting for block {earliest} (now {block})")
        while block < earliest:
            if time.monotonic() > deadline:
                raise BootstrapError(
                    f"start subnet: block {earliest} not reached within {self.settings.start_timeout_s:g} s "
                    f"(chain at {block}); is the chain producing blocks? raise --subnet.start_timeout"
                )
            await asyncio.sleep(0.5)
            block = await self.client.block()
        result = await self.client.execute(StartCall(netuid=netuid), owner)
        if not result.success and "AlreadySet" in (result.message or ""):
            # FirstEmissionBlockNumberAlreadySet: started before, on a chain we could not ask.
            self._skip("start subnet", "the chain says it already started")
            return
        await _checked("start subnet", _done(result))
        self._did("start subnet", f"netuid {netuid} active")

    async def set_hyperparameter(self, owner: Any, sudo: Any, netuid: int, name: str, value: Any) -> None:
        """Set a subnet hyperparameter: as the owner where the chain allows it, else as sudo.

        The raw AdminUtils call rather than the SetHyperparameter intent: the intent also
        enforces the owner's range client-side (tempo 360..50400), while a local testnet wants
        values only root may set (tempo 20), which the localnet's sudo key (//Alice) can.
        """
        from bittensor import BittensorError, calls
        from bittensor.intents import OWNER_HYPERPARAMETERS

        method, is_bool = OWNER_HYPERPARAMETERS[name]
        call = getattr(calls.AdminUtils, method)(netuid, bool(value) if is_bool else int(value))
        try:
            as_owner = await self.client.submit_call(call, owner)
            refusal = "" if as_owner.success else (as_owner.message or "refused")
        except BittensorError as exc:
            refusal = str(exc) or type(exc).__name__
        if not refusal:
            return
        self.log(f"set {name}: refused for the owner ({refusal.splitlines()[0]}); retrying as sudo")
        inner = await self.client.compose(call)
        await _checked(f"set {name} (as sudo)", self.client.submit_call(calls.Sudo.sudo(call=inner), sudo))

    async def configure(self, owner: Any, sudo: Any, netuid: int) -> None:
        step = "commit-reveal off"
        if await self.client.subnets.commit_reveal_enabled(netuid):
            await self.set_hyperparameter(owner, sudo, netuid, "commit_reveal_weights_enabled", False)
            if await self.client.subnets.commit_reveal_enabled(netuid):
                raise BootstrapError(f"{step}: the chain accepted the call but commit-reveal is still on")
            self._did(step, f"netuid {netuid}")
        else:
            self._skip(step, "disabled")
        tempo = self.settings.tempo
        if tempo is None:
            return
        before = int((await self.client.subnets.subnet(netuid)).tempo)
        if before == tempo:
            self._skip("set tempo", f"tempo {tempo}")
            return
        await self.set_hyperparameter(owner, sudo, netuid, "tempo", tempo)
        after = int((await self.client.subnets.subnet(netuid)).tempo)
        if after != tempo:
            raise BootstrapError(
                f"set tempo: the chain accepted the call but the tempo is {after}, not {tempo}"
            )
        self._did("set tempo", f"{before} -> {tempo} blocks")

    # -- neurons

    async def register_neuron(self, label: str, wallet: Any, netuid: int) -> int:
        from bittensor import calls

        hotkey = wallet.hotkey.ss58_address
        self.report.hotkeys[label] = hotkey
        uid = await self.client.neurons.uid(hotkey, netuid)
        step = f"register {label}"
        if uid is not None:
            self._skip(step, f"uid {uid}")
        else:
            # The raw call, not the BurnedRegister intent: the intent insists on MEV-shielded
            # submission (which needs the chain's shield keys); a local chain has no mempool
            # worth protecting, and the call registered is the same.
            call = calls.SubtensorModule.burned_register(netuid=netuid, hotkey=hotkey)
            await _checked(step, self.client.submit_call(call, wallet))
            uid = await self.client.neurons.uid(hotkey, netuid)
            if uid is None:
                raise BootstrapError(f"{step}: the chain accepted it but {hotkey} has no uid on {netuid}")
            self._did(step, f"uid {uid}")
        self.report.uids[label] = int(uid)
        return int(uid)

    async def _hotkey_alpha(self, hotkey: str, netuid: int) -> Any:
        from bittensor import storage

        raw = await self.client.query(storage.SubtensorModule.TotalHotkeyAlpha, [hotkey, netuid])
        return self.client.balance(int(raw or 0), netuid)

    async def stake(self, wallet: Any, netuid: int) -> None:
        from bittensor import AddStake

        hotkey = wallet.hotkey.ss58_address
        # Any stake behind the validator's hotkey counts: re-running must not stake again.
        current = await self._hotkey_alpha(hotkey, netuid)
        if current.rao > 0:
            self._skip("stake validator", f"{current} on its hotkey")
            return
        intent = AddStake(
            hotkey_ss58=hotkey, netuid=netuid, amount_tao=self.settings.stake_tao, slippage_protection=False
        )
        await _checked("stake validator", self.client.execute(intent, wallet))
        after = await self._hotkey_alpha(hotkey, netuid)
        if after.rao <= 0:
            raise BootstrapError("stake validator: the chain accepted it but the hotkey holds no stake")
        self._did("stake validator", f"{self.settings.stake_tao:g} TAO -> {after}")

    # -- everything

    async def run(self, wallets: dict[str, Any], sudo: Any) -> BootstrapReport:
        s = self.settings
        owner, validator = wallets[s.owner], wallets[s.validator]
        owner_need = FEE_HEADROOM_TAO
        if await self.owned_subnet(owner.coldkeypub.ss58_address) is None:
            owner_need += float((await self.client.subnets.subnet_registration_cost()).tao)
        await self.fund(s.owner, owner.coldkeypub.ss58_address, owner_need, sudo)
        netuid = await self.register_subnet(owner)
        await self.start_subnet(owner, netuid)
        await self.configure(owner, sudo, netuid)

        burn = float((await self.client.subnets.burn(netuid)).tao)
        neurons = {"validator": validator, **{name: wallets[name] for name in s.miners}}
        for label, wallet in neurons.items():
            need = FEE_HEADROOM_TAO
            if await self.client.neurons.uid(wallet.hotkey.ss58_address, netuid) is None:
                need += burn
            if (
                wallet is validator
                and (await self._hotkey_alpha(wallet.hotkey.ss58_address, netuid)).rao == 0
            ):
                need += s.stake_tao
            name = s.validator if wallet is validator else label
            await self.fund(name, wallet.coldkeypub.ss58_address, need, sudo)
        for label, wallet in neurons.items():
            await self.register_neuron(label, wallet, netuid)
        await self.stake(validator, netuid)
        return self.report


# --------------------------------------------------------------------------- connecting


def _devchain(settings: BootstrapSettings) -> Any:
    """The devchain (subnet.devchain.DevChain) to hand to `bt.Subtensor(..., substrate=...)`."""

    return DevChain(settings.devchain_path)


async def connect(settings: BootstrapSettings) -> Any:
    """A connected `bt.Client` for the settings' chain; BootstrapError when it cannot be reached."""
    import bittensor as bt

    if settings.network == DEV_NETWORK:
        # The network name only labels explorer links when a substrate is given.
        client = bt.Subtensor("local", substrate=_devchain(settings))
    else:
        try:
            client = bt.Subtensor(settings.network, fallback_endpoints=[], archive_endpoints=[])
        except ValueError as exc:
            raise BootstrapError(str(exc)) from None

    async def opened() -> Any:
        return await client  # awaiting a bt.Subtensor connects it and returns the async client

    try:
        async with asyncio.timeout(60):
            connected = await opened()
        await connected.block()
    except StoreError as exc:  # the devchain file is damaged or someone else's
        raise BootstrapError(str(exc)) from None
    except (TimeoutError, OSError, bt.BittensorError) as exc:
        raise BootstrapError(
            f"cannot reach the chain at {settings.network}: {str(exc) or type(exc).__name__}; "
            "is it running (docker compose ps chain)?"
        ) from None
    return connected


async def bootstrap(
    settings: BootstrapSettings, log: Log = _print_log, client: Any = None
) -> BootstrapReport:
    """Run every step against `client` (or a client connected from the settings)."""
    from bittensor import BittensorError
    from bittensor.keyfiles import Keypair

    wallets: dict[str, Any] = {}
    for name in (settings.owner, settings.validator, *settings.miners):
        wallet, created = ensure_wallet(
            settings.wallet_path, name, settings.hotkey, create=settings.create_wallets
        )
        wallets[name] = wallet
        if created:
            log(f"wallet {name}: created (unencrypted development keys) in {settings.wallet_path}")
    try:
        sudo = Keypair.create_from_uri(settings.sudo_uri)
    except Exception as exc:  # the URI is the user's text; the keypair library says why it is bad
        raise BootstrapError(
            f"--devchain.sudo_uri {settings.sudo_uri!r} is not a usable key URI: {exc}"
        ) from None
    owned_client = client is None
    client = client if client is not None else await connect(settings)
    try:
        report = await Bootstrapper(client, settings, log).run(wallets, sudo)
    except BittensorError as exc:  # a read or submission the chain refused, in its own words
        raise BootstrapError(f"the chain refused a step: {exc}") from None
    finally:
        if owned_client:
            await client.close()
    if settings.state_file is not None:
        try:
            settings.state_file.parent.mkdir(parents=True, exist_ok=True)
            settings.state_file.write_text(json.dumps(asdict(report), indent=2, default=str) + "\n")
        except OSError as exc:
            raise BootstrapError(
                f"the chain is set up, but --state.file {settings.state_file} cannot be written: "
                f"{exc.strerror or exc}"
            ) from None
    return report


def main(argv: Sequence[str] | None = None) -> int:
    with user_errors("bootstrap"):  # a bad flag stops here, before any step: exit 2
        settings = parse_settings(argv)
    try:
        status = run_main("bootstrap", lambda: _announce(settings, asyncio.run(bootstrap(settings))))
    except KeyboardInterrupt:
        print("bootstrap: interrupted; re-run to finish (finished steps are skipped)", file=sys.stderr)
        return 130
    return status


def _announce(settings: BootstrapSettings, report: BootstrapReport) -> None:
    uids = ", ".join(f"{name} uid {uid}" for name, uid in report.uids.items())
    print(f"bootstrap: ready on {settings.network}: netuid {report.netuid}; {uids}", flush=True)
    where = settings.wallet_path
    print(f"bootstrap: wallets in {where} (give the neurons --wallet.path {where})", flush=True)


if __name__ == "__main__":
    sys.exit(main())
