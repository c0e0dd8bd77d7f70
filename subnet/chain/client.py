"""The chain client: async access to one subnet over the bittensor 11 SDK, with retries.

It builds ``bt.Subtensor(network_or_url, substrate=...)`` (the devchain substrate for
``--subtensor.network dev``) and uses the SDK's intents (``bt.ServeAxon``, ``bt.SetWeights``,
``bt.BurnedRegister``) rather than composing calls itself. Connection failures are retried
with bounded exponential backoff and jitter and are logged once per outage (one line when
the chain goes away, one when it is back).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import random
import re
import socket
import sqlite3
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import bittensor as bt
from bittensor import settings as bt_settings

from subnet import devchain as devchain_module
from subnet.chain.axon import public_address, same_axon
from subnet.chain.errors import (
    ChainError,
    ChainRejected,
    ChainUnavailable,
    NotRegistered,
    RegistrationRejected,
    ServeRejected,
    SubnetNotFound,
    WeightsRejected,
    WeightsTooSoon,
    describe,
    too_soon,
    translate,
)
from subnet.chain.types import Metagraph, WeightsResult, metagraph_from_sdk
from subnet.config import ChainRetrySettings, default_devchain_path, default_wallet_path
from subnet.devchain import StoreError

if TYPE_CHECKING:
    from subnet.config import DevchainSettings, MinerSettings, SubtensorSettings, ValidatorSettings

    Settings = MinerSettings | ValidatorSettings

# The package's name, not this module's: one logger for the chain client, the name operators
# (and the tests) filter on, whatever file inside the package the line comes from.
logger = logging.getLogger("subnet.chain")

T = TypeVar("T")

# What a failing connection raises through the SDK: its public transport errors, plus the
# standard ones a substrate implementation (the devchain, a socket) may let through.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    bt.RpcConnectionError,
    bt.ConnectionNotReady,
    ConnectionError,
    TimeoutError,
)
_NETWORK_ERRNOS = frozenset(
    {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, errno.EHOSTDOWN, errno.EADDRNOTAVAIL}
)

_TEMPO = ("SubtensorModule", "Tempo")
_AXONS = ("SubtensorModule", "Axons")
_LAST_EPOCH_BLOCK = ("SubtensorModule", "LastEpochBlock")
_WEIGHTS_RATE_LIMIT = ("SubtensorModule", "WeightsSetRateLimit")
_LAST_UPDATE = ("SubtensorModule", "LastUpdate")
_NETWORKS_ADDED = ("SubtensorModule", "NetworksAdded")

# The label bittensor uses for the devchain: resolve_endpoint needs a known network name
# or a ws:// URL; this one only names the chain (explorer links, the SDK's symbol cache).
DEVCHAIN_LABEL = "ws://devchain.invalid"

SubstrateFactory = Callable[[], Any]


def _rpc_substrate_factory(target: str) -> SubstrateFactory:
    """A fresh websocket substrate per (re)connection, with the SDK's default fallback pools."""

    def build() -> bt.RpcSubstrate:
        network, endpoint = bt_settings.resolve_endpoint(target)
        fallbacks = [url for url in bt_settings.default_fallback_endpoints(network) if url != endpoint]
        return bt.RpcSubstrate(
            endpoint,
            fallback_endpoints=fallbacks,
            archive_endpoints=bt_settings.default_archive_endpoints(network),
        )

    return build


def _devchain_substrate_factory(devchain: DevchainSettings) -> SubstrateFactory:
    def build() -> Any:

        if not devchain.path.exists():
            # A neuron opening a new, empty chain at a mistyped path would only report "not
            # registered" there (and leave the file behind): name the missing chain instead.
            raise ChainError(
                f"no devchain at {devchain.path}; check --devchain.path, or create one with `python "
                f"scripts/bootstrap_localnet.py --subtensor.network dev --devchain.path {devchain.path}` "
                "(or run `python -m subnet.localnet`)"
            )
        return devchain_module.DevChain(devchain.path, block_time=devchain.block_time)

    return build


class ChainClient:
    """Async access to one subnet on one chain, signed with one wallet's hotkey (and coldkey to pay).

    Build it with :meth:`from_settings` (no I/O) and use it as ``async with client:`` or
    call :meth:`close` when done; the connection opens on first use.
    """

    def __init__(
        self,
        *,
        netuid: int,
        network: str,
        substrate_factory: SubstrateFactory,
        wallet: Any,
        retry: ChainRetrySettings | None = None,
        register_hint: str | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        backend_errors: tuple[type[Exception], ...] = (),
        backend_transient: tuple[type[Exception], ...] = (),
    ) -> None:
        self.netuid = netuid
        self.network = network
        self.wallet = wallet
        self.retry = retry or ChainRetrySettings()
        self._substrate_factory = substrate_factory
        self._register_hint = register_hint
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._substrate: Any = None
        self._client: bt.Client | None = None
        self._connect_lock = asyncio.Lock()
        self._outage_started: float | None = None
        self._outage_failures = 0
        # Errors of a non-RPC substrate (the devchain's file problems) that are the user's to fix,
        # and those that pass (a busy SQLite file); both are outside the SDK's own error types.
        self._backend_errors = backend_errors
        self._transient = TRANSIENT_ERRORS + backend_transient

    @classmethod
    def from_settings(
        cls, settings: Settings, wallet: Any, *, substrate: Any | None = None, **kwargs: Any
    ) -> ChainClient:
        """A client for ``settings.netuid`` on ``settings.subtensor``; does no I/O.

        ``substrate`` replaces the chain backend (a test double); otherwise the network
        picks it: the SQLite devchain for ``dev``, the SDK's websocket substrate otherwise.
        """
        subtensor: SubtensorSettings = settings.subtensor
        factory: SubstrateFactory
        if subtensor.is_dev and substrate is None:
            kwargs.setdefault("backend_errors", (StoreError,))
            kwargs.setdefault("backend_transient", (sqlite3.OperationalError,))
        if substrate is not None:
            factory = lambda: substrate  # noqa: E731
            network = DEVCHAIN_LABEL if subtensor.is_dev else subtensor.target
        elif subtensor.is_dev:
            factory = _devchain_substrate_factory(settings.devchain)
            network = DEVCHAIN_LABEL
        else:
            factory = _rpc_substrate_factory(subtensor.target)
            network = subtensor.target
        return cls(
            netuid=settings.netuid,
            network=network,
            substrate_factory=factory,
            wallet=wallet,
            retry=settings.chain,
            register_hint=_register_hint(settings),
            **kwargs,
        )

    # lifecycle ------------------------------------------------------------------------------

    async def __aenter__(self) -> ChainClient:
        await self._call("connect", lambda _client: _noop())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        client, self._client, self._substrate = self._client, None, None
        if client is not None:
            try:
                await client.close()
            except Exception as error:  # closing a broken connection must not hide the real error
                logger.debug("closing the chain connection failed: %s", error)

    async def _connected(self) -> bt.Client:
        async with self._connect_lock:
            if self._client is None:
                substrate = self._substrate_factory()
                client = await bt.Subtensor(self.network, substrate=substrate)
                self._substrate, self._client = substrate, client
            return self._client

    # the retry loop ---------------------------------------------------------------------------

    def _backoff(self, failures: int) -> float:
        """Exponential backoff with 'equal jitter': half fixed, half random, capped."""
        ceiling = min(self.retry.backoff_max, self.retry.backoff_base * (2 ** (failures - 1)))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    async def _call(
        self, what: str, operation: Callable[[bt.Client], Awaitable[T]], *, bounded: bool = True
    ) -> T:
        """Run ``operation`` on a connected client, retrying connection failures with backoff.

        ``bounded=False`` lifts ``--chain.timeout`` from the operation itself (not from
        connecting): a submission waits for finalization under the SDK's own limits, and
        cutting it short could submit the same extrinsic twice.
        """
        attempts = self.retry.retries + 1
        last_error: BaseException | None = None
        for attempt in range(1, attempts + 1):
            try:
                async with asyncio.timeout(self.retry.timeout):
                    client = await self._connected()
                async with asyncio.timeout(self.retry.timeout if bounded else None):
                    result = await operation(client)
            except Exception as error:
                if not self._is_transient(error):
                    self._raise_typed(error, what)
                last_error = error
                self._note_failure(what, error)
                await self.close()  # a fresh connection on the next try
                if attempt < attempts:
                    delay = self._backoff(attempt)
                    logger.debug(
                        "chain %s failed (%s); try %d/%d in %.2fs", what, error, attempt, attempts, delay
                    )
                    await self._sleep(delay)
                continue
            self._note_success()
            return result
        raise ChainUnavailable(
            f"chain at {self._where()} unreachable ({describe(last_error)}) after {attempts} tries; "
            "check that it is up and --subtensor.network / --subtensor.chain_endpoint"
        ) from last_error

    def _is_transient(self, error: BaseException) -> bool:
        if isinstance(error, self._transient):
            return True
        # Unreachable networks and failed lookups arrive as plain OSErrors; a missing or
        # unreadable wallet file is an OSError too, and must not pass for an outage.
        return (type(error) is OSError and error.errno in _NETWORK_ERRNOS) or isinstance(
            error, socket.gaierror
        )

    def _raise_typed(self, error: Exception, what: str) -> NoReturn:
        if isinstance(error, bt.BittensorError):
            self._note_success()  # the chain answered, if only to say no
            raise translate(error, what) from error
        if isinstance(error, ChainError):
            self._note_success()
            raise error
        if isinstance(error, self._backend_errors):
            raise ChainError(f"{what} failed on {self._where()}: {describe(error)}") from error
        raise error

    def _where(self) -> str:
        return "devchain" if self.network == DEVCHAIN_LABEL else self.network

    def _note_failure(self, what: str, error: BaseException) -> None:
        self._outage_failures += 1
        if self._outage_started is None:
            self._outage_started = time.monotonic()
            logger.warning(
                "chain at %s unreachable (%s during %s); retrying with backoff, up to %d tries per call",
                self._where(),
                describe(error),
                what,
                self.retry.retries + 1,
            )

    def _note_success(self) -> None:
        if self._outage_started is not None:
            logger.warning(
                "chain at %s reachable again after %.1fs (%d failed tries)",
                self._where(),
                time.monotonic() - self._outage_started,
                self._outage_failures,
            )
        self._outage_started = None
        self._outage_failures = 0

    # identity ---------------------------------------------------------------------------------

    @property
    def hotkey(self) -> str:
        """The ss58 address of the wallet's hotkey (read from its public file, never unlocked here)."""
        return str(bt.resolve_signer(self.wallet, "hotkey").ss58_address)

    @property
    def coldkey(self) -> str:
        return str(bt.resolve_signer(self.wallet, "coldkey").ss58_address)

    # reads ------------------------------------------------------------------------------------

    async def block(self) -> int:
        return await self._call("block", lambda client: client.block())

    async def block_hash(self, block: int | None = None) -> str:
        async def read(_client: bt.Client) -> str:
            return str(await self._substrate.block_hash(block))

        return await self._call("block_hash", read)

    async def tempo(self) -> int:
        async def read(client: bt.Client) -> int:
            value = await client.query(_TEMPO, [self.netuid])
            if value is None:
                raise self._no_subnet()
            return int(value)

        return await self._call("tempo", read)

    async def blocks_until_next_epoch(self) -> int:
        async def read(client: bt.Client) -> int:
            try:
                left = await client.epochs.blocks_until_next_epoch(self.netuid)
            except bt.ChainError as error:
                # Chains without the next_epoch_start_block runtime API (older runtimes, the
                # devchain): the same figure from storage, LastEpochBlock + tempo, at one block.
                logger.debug("next_epoch_start_block unavailable (%s); using LastEpochBlock + Tempo", error)
                left = await _blocks_until_next_epoch_from_storage(client, self.netuid)
            if left is None:
                raise ChainError(f"subnet {self.netuid} on {self._where()} has tempo 0: it runs no epochs")
            return int(left)

        return await self._call("blocks_until_next_epoch", read)

    async def metagraph(self) -> Metagraph:
        async def read(client: bt.Client) -> Metagraph:
            graph = await client.subnets.metagraph(self.netuid, commitments=False)
            if graph is None:
                raise self._no_subnet()
            return metagraph_from_sdk(graph)

        return await self._call("metagraph", read)

    async def own_uid(self) -> int | None:
        hotkey = self.hotkey
        return await self._call("own_uid", lambda client: client.neurons.uid(hotkey, self.netuid))

    async def ensure_registered(self) -> int:
        """Our uid; :class:`NotRegistered` (with the command to register) when there is none, or
        :class:`SubnetNotFound` when the netuid names no subnet (a mistyped --netuid: registering
        there is not the way out)."""
        uid = await self.own_uid()
        if uid is None:
            if not await self.subnet_exists():
                raise self._no_subnet()
            raise self._not_registered()
        return uid

    async def subnet_exists(self) -> bool:
        """Whether the netuid names a subnet on this network (the chain's NetworksAdded)."""
        return bool(
            await self._call("subnet exists", lambda client: client.query(_NETWORKS_ADDED, [self.netuid]))
        )

    async def weights_wait(self, uid: int) -> tuple[int, int | None, int]:
        """(rate limit, blocks since our last weights or None if never, blocks left), at one block.

        Mirrors the chain's rule: a uid whose LastUpdate is 0 has never set weights and may.
        """

        async def read(client: bt.Client) -> tuple[int, int | None, int]:
            view = await client.at()
            limit_raw, last_raw = await asyncio.gather(
                view.query(_WEIGHTS_RATE_LIMIT, [self.netuid]), view.query(_LAST_UPDATE, [self.netuid])
            )
            limit = int(limit_raw or 0)
            last = int(last_raw[uid]) if isinstance(last_raw, list | tuple) and uid < len(last_raw) else 0
            if last <= 0:
                return limit, None, 0
            since = int(view.block) - last
            return limit, since, max(0, limit - since)

        return await self._call("weights rate limit", read)

    async def commit_reveal_enabled(self) -> bool:
        return bool(
            await self._call(
                "commit_reveal_enabled", lambda client: client.subnets.commit_reveal_enabled(self.netuid)
            )
        )

    # writes -----------------------------------------------------------------------------------

    async def serve_axon(self, ip: str, port: int) -> bool:
        """Publish ``ip:port`` for our hotkey; False when the chain already has exactly that."""
        address = public_address(ip)
        if not 0 < port < 65536:
            raise ChainError(f"cannot publish port {port}: expected 1..65535")
        await self.ensure_registered()
        hotkey = self.hotkey

        async def current(client: bt.Client) -> Any:
            return await client.query(_AXONS, [self.netuid, hotkey])

        published = await self._call("read axon", current)
        if same_axon(published, address, port):
            logger.info("axon %s:%d already published for uid of %s; nothing to do", address, port, hotkey)
            return False
        intent = bt.ServeAxon(netuid=self.netuid, ip=str(address), port=port)
        await self._execute("serve_axon", intent, ServeRejected)
        logger.info("published axon %s:%d on netuid %d", address, port, self.netuid)
        return True

    async def set_weights(self, weights: dict[int, float], version_key: int) -> WeightsResult:
        """Set weights from ``{uid: weight}`` (relative values; the SDK clips, normalises, quantises).

        Refuses with :class:`WeightsTooSoon` (``blocks_left``) before signing anything when the
        subnet's weights rate limit has not passed since our last update.
        """
        cleaned = {int(uid): float(weight) for uid, weight in weights.items() if float(weight) > 0}
        if not cleaned:
            raise WeightsRejected("no positive weights to set; every weight is zero or negative")
        uid = await self.ensure_registered()
        limit, since, left = await self.weights_wait(uid)
        if left > 0:
            raise too_soon(left, self.netuid, since, limit)
        block = await self.block()
        intent = bt.SetWeights(netuid=self.netuid, weights=cleaned, version_key=version_key)
        try:
            result = await self._execute("set_weights", intent, WeightsRejected)
        except WeightsTooSoon as error:
            if error.blocks_left > 0:
                raise
            # The chain said "too fast" without a count: work it out from the same reads.
            limit, since, left = await self.weights_wait(uid)
            raise too_soon(max(1, left), self.netuid, since, limit) from error
        reveal_round = result.data.get("reveal_round")
        uids = tuple(sorted(cleaned))
        return WeightsResult(
            path="commit_reveal" if reveal_round is not None else "direct",
            block=block,
            uids=uids,
            weights=tuple(cleaned[u] for u in uids),
            version_key=version_key,
            extrinsic_id=result.extrinsic_id,
            reveal_round=int(reveal_round) if reveal_round is not None else None,
            message=result.message,
        )

    async def register(self) -> int:
        """Register our hotkey by burning the registration cost from the coldkey; our uid.

        Already registered: returns the existing uid without paying again.
        """
        uid = await self.own_uid()
        if uid is not None:
            return uid
        intent = bt.BurnedRegister(netuid=self.netuid, hotkey_ss58=self.hotkey)
        try:
            await self._execute("register", intent, RegistrationRejected)
        except RegistrationRejected as error:
            if self.network == DEVCHAIN_LABEL and error.code == "insufficient_balance":
                raise RegistrationRejected(
                    f"{error.message}; on the devchain: `python -m subnet.devchain fund {self.coldkey} 10`",
                    code=error.code,
                    name=error.name,
                ) from error
            raise
        uid = await self.own_uid()
        if uid is None:
            raise RegistrationRejected(
                f"registration of {self.hotkey} on netuid {self.netuid} was accepted but no uid appeared"
            )
        logger.info("registered %s on netuid %d as uid %d", self.hotkey, self.netuid, uid)
        return uid

    async def _execute(self, what: str, intent: Any, rejected: type[ChainRejected]) -> Any:
        async def submit(client: bt.Client) -> Any:
            return await client.execute(intent, self.wallet)

        try:
            result = await self._call(what, submit, bounded=False)
        except ChainRejected as error:
            raise _specialise(error, rejected, self) from error
        if not result.success:
            translated = translate(result.error or bt.ChainError(result.message or f"{what} failed"), what)
            raise _specialise(translated, rejected, self)
        return result

    # messages -----------------------------------------------------------------------------------

    def _no_subnet(self) -> SubnetNotFound:
        return SubnetNotFound(
            f"subnet {self.netuid} does not exist on {self._where()}; check --netuid and --subtensor.network"
        )

    def _not_registered(self) -> NotRegistered:
        hint = self._register_hint or f"btcli subnets register --netuid {self.netuid}"
        return NotRegistered(
            f"hotkey {self.hotkey} is not registered on netuid {self.netuid} ({self._where()}); "
            f"register it with `{hint}`",
            code="not_registered",
        )


async def _blocks_until_next_epoch_from_storage(client: bt.Client, netuid: int) -> int | None:
    view = await client.at()
    tempo, last_epoch = await asyncio.gather(
        view.query(_TEMPO, [netuid]), view.query(_LAST_EPOCH_BLOCK, [netuid])
    )
    if not tempo:
        return None
    return max(0, int(last_epoch or 0) + int(tempo) - int(view.block))


async def _noop() -> None:
    return None


# --- helpers ------------------------------------------------------------------------------------


def _register_hint(settings: Settings) -> str:
    wallet = settings.wallet
    if settings.subtensor.is_dev:
        extra = "" if wallet.path == default_wallet_path() else f" --wallet.path {wallet.path}"
        if settings.devchain.path != default_devchain_path():
            extra += f" --devchain.path {settings.devchain.path}"
        return (
            f"python -m subnet.chain register --netuid {settings.netuid} --subtensor.network dev "
            f"--wallet.name {wallet.name} --wallet.hotkey {wallet.hotkey}{extra}"
        )
    network = settings.subtensor.target
    return (
        f"btcli subnets register --netuid {settings.netuid} -w {wallet.name} -H {wallet.hotkey} -n {network}"
    )


_RETRY_IN = re.compile(r"retry in ~?(\d+) blocks", re.IGNORECASE)


def _specialise(error: ChainError, rejected: type[ChainRejected], client: ChainClient) -> ChainError:
    """Re-type a generic rejection as the operation's own (weights, serve, register)."""
    if isinstance(error, NotRegistered):
        return client._not_registered()
    if rejected is WeightsRejected and error.code == "rate_limited":
        match = _RETRY_IN.search(error.message)
        # 0 means "unknown"; set_weights fills in the count from the rate limit.
        return too_soon(int(match.group(1)) if match else 0, client.netuid, None, None)
    if type(error) is ChainRejected:
        return rejected(error.message, code=error.code, name=error.name)
    return error
