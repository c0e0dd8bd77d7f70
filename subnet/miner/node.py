"""The miner process: registration check, model start-up, the authenticated server, the axon on
chain, the metagraph kept fresh, and a graceful stop.

Start-up order is chosen so a miner never answers before it can: the registration check comes
first (cheap, fails fast with the command that fixes it), then the model loads, then the server
starts with a metagraph already in its directory, and only then is the axon published. Stopping
(SIGINT/SIGTERM) reverses it: the server refuses new requests and gives those in flight up to
``DRAIN_TIMEOUT_S`` to finish, then cuts them off; the model then gets ``MODEL_CLOSE_TIMEOUT_S`` to
hand back its running generations before they are abandoned. A stop therefore takes at most about
``STOP_BOUND_S`` however loaded the model is (a generation in the model's thread ends at its
next decoding step).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import signal
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from subnet.chain import ChainClient, ChainError
from subnet.config import ConfigError
from subnet.metrics import Reading, new_registry, register_readings
from subnet.miner.backends import build_backend
from subnet.miner.base import Backend, ModelOptions
from subnet.miner.service import MinerModel
from subnet.transport import (
    GATE_KEY,
    AuthPolicy,
    MetagraphDirectory,
    MinerServer,
    ServerPolicy,
    build_miner_app,
)

if TYPE_CHECKING:
    from subnet.chain import ChainClient
    from subnet.config import MinerSettings
    from subnet.transport import MetagraphDirectory, MinerServer, ServerPolicy

log = logging.getLogger("miner")

# How often the callers' directory is refreshed from the chain.
METAGRAPH_REFRESH_S = 60.0
# How long in-flight requests may take to finish when the miner stops.
DRAIN_TIMEOUT_S = 10.0
# After the drain: how long the model may take to finish the generations it is running.
MODEL_CLOSE_TIMEOUT_S = 3.0
# What the transport gives handlers still running after the drain (MinerServer's shutdown_timeout).
_HANDLER_CANCEL_S = 1.0
# How long a stop waits for the metagraph refresher to end once told to. It ends at once unless
# something under it swallowed the cancellation (Python 3.11's asyncio.wait_for does, when the call
# it wraps finishes in the same step); then it ends at its next check, abandoned if that is later.
REFRESHER_STOP_S = 1.0
# The longest a stop takes (docs/miner.md, "Stopping").
STOP_BOUND_S = REFRESHER_STOP_S + DRAIN_TIMEOUT_S + _HANDLER_CANCEL_S + MODEL_CLOSE_TIMEOUT_S
# What a dev-network miner bound to every interface publishes: the devchain is local.
DEV_PUBLISHED_IP = "127.0.0.1"


def server_policy(settings: MinerSettings) -> ServerPolicy:
    """The transport's policy from the miner's flags (see docs/transport.md)."""

    return ServerPolicy(
        auth=AuthPolicy(
            max_age_s=settings.auth.max_age,
            allowed_skew_s=settings.auth.allowed_skew,
            min_stake=settings.blacklist.min_stake,
            # On the local devchain nobody has earned a permit yet; everywhere else it is required.
            require_validator_permit=not settings.subtensor.is_dev,
            blacklist=frozenset(settings.blacklist.hotkeys),
            whitelist=frozenset(settings.whitelist.hotkeys) or None,
        ),
        max_body_bytes=settings.limits.max_body_bytes,
        max_in_flight=settings.limits.max_in_flight,
        per_caller_max_in_flight=settings.limits.per_caller_concurrency,
        per_caller_rate=settings.limits.per_caller_rate,
        per_caller_burst=settings.limits.per_caller_burst,
        # The handler gives up a little after the model's own deadline, still before the
        # validators' (see --model.timeout).
        handler_timeout_s=settings.model.timeout + 2.0,
        head_timeout_s=settings.limits.head_timeout,
        per_ip_max_connections=settings.limits.per_ip_connections,
        max_connections=settings.limits.max_connections,
        validator_addresses=frozenset(settings.limits.validator_addresses),
    )


def _directory_age(directory: MetagraphDirectory) -> Reading:
    # Growing past the refresh interval: the chain is unreachable and callers are checked against
    # an old metagraph (new validators refused, deregistered ones still served).
    return Reading(
        "subnet_miner_directory_age_seconds",
        "Seconds since the callers' directory was refreshed from the chain",
        lambda: directory.age_s,
    )


def _cannot_listen(host: str, port: int, error: OSError) -> Exception:

    reason = error.strerror or str(error)
    return ConfigError(
        f"cannot listen on {host}:{port} ({reason}); pick another --axon.port, stop the process that "
        "holds it, or give an --axon.ip this machine has"
    )


def _check_can_listen(host: str, port: int) -> None:
    """Raise a one-line ConfigError when ``host:port`` cannot be bound (in use, foreign address)."""
    family = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # As the server binds: SO_REUSEADDR lets a port in TIME_WAIT pass, not one being listened on.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise _cannot_listen(host, port, error) from None


@dataclass(frozen=True)
class Serving:
    """Where a started miner listens and what it published."""

    uid: int
    bound_host: str
    published_ip: str
    published_port: int


class MinerNode:
    """One miner: a chain client, a model backend and the authenticated server around them."""

    def __init__(
        self,
        settings: MinerSettings,
        *,
        chain: ChainClient,
        backend: Backend | None = None,
        refresh_s: float = METAGRAPH_REFRESH_S,
        drain_s: float = DRAIN_TIMEOUT_S,
        model_close_s: float = MODEL_CLOSE_TIMEOUT_S,
    ) -> None:
        self.settings = settings
        self.chain = chain
        self.backend = backend or build_backend(ModelOptions.from_settings(settings.model))
        self.refresh_s = refresh_s
        self.drain_s = drain_s
        self.model_close_s = model_close_s
        self.directory: MetagraphDirectory | None = None
        self.server: MinerServer | None = None
        self.serving: Serving | None = None
        self._refresher: asyncio.Task[None] | None = None
        self._refreshing = False
        self._backend_started = False

    async def start(self) -> Serving:
        """Check registration, load the model, serve, publish the axon. Raises the chain's
        `NotRegistered` (a one-line user error) before loading anything."""

        settings = self.settings
        published_ip = settings.axon.published_ip or (DEV_PUBLISHED_IP if settings.subtensor.is_dev else None)
        if published_ip is None:
            raise ConfigError(
                f"--axon.ip {settings.axon.ip} means every interface; pass the address validators "
                "should use with --axon.external_ip"
            )
        # Before the model loads (minutes for a large one): a port in use fails now, in one line.
        _check_can_listen(settings.axon.ip, settings.axon.port)
        uid = await self.chain.ensure_registered()
        await self.backend.start()
        self._backend_started = True
        self.directory = MetagraphDirectory(await self.chain.metagraph())
        registry = new_registry()
        register_readings(registry, [*self.backend.readings(), _directory_age(self.directory)])
        app = build_miner_app(
            hotkey_ss58=self.chain.hotkey,
            directory=self.directory,
            policy=server_policy(settings),
            handler=MinerModel(self.backend).handle,
            registry=registry,
        )
        server = MinerServer(app, host=settings.axon.ip, port=settings.axon.port)
        try:
            await server.start()
        except OSError as error:  # taken between the check above and now
            raise _cannot_listen(settings.axon.ip, settings.axon.port, error) from None
        self.server = server
        bound_port = self.server.port
        published_port = settings.axon.external_port or bound_port
        changed = await self.chain.serve_axon(published_ip, published_port)
        self.serving = Serving(uid, settings.axon.ip, published_ip, published_port)
        self._refreshing = True
        self._refresher = asyncio.create_task(self._refresh_metagraph(), name="miner-metagraph-refresh")
        log.info(
            "serving %s on %s:%d (axon %s:%d %s) for netuid %d as uid %d",
            self.backend.describe(),
            settings.axon.ip,
            bound_port,
            published_ip,
            published_port,
            "published" if changed else "already on chain",
            settings.netuid,
            uid,
        )
        return self.serving

    async def _refresh_metagraph(self) -> None:
        # The flag as well as the cancellation: a cancellation swallowed under the chain call would
        # otherwise keep this loop (and a stop waiting for it) going for ever.
        while self._refreshing:
            await asyncio.sleep(self.refresh_s)
            if not self._refreshing:
                return
            try:
                graph = await self.chain.metagraph()
            except ChainError as error:
                # The chain client logs outages once; keep serving with the last snapshot.
                log.debug("metagraph refresh failed, keeping the previous one: %s", error)
                continue
            if self.directory is not None and self._refreshing:
                self.directory.replace(graph)

    async def stop(self) -> None:
        """Drain the server, stop refreshing, free the model, each within its deadline (the
        module's docstring). Safe to call more than once."""
        started = time.monotonic()
        self._refreshing = False
        if self._refresher is not None:
            refresher, self._refresher = self._refresher, None
            refresher.cancel()
            done, pending = await asyncio.wait({refresher}, timeout=REFRESHER_STOP_S)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    log.warning("the metagraph refresher had stopped on an error: %s", task.exception())
            if pending:
                log.warning(
                    "the metagraph refresher was still running %.0f s after it was stopped; left to "
                    "end at its next check",
                    REFRESHER_STOP_S,
                )
        if self.server is not None:
            gate = self.server.app.get(GATE_KEY)
            in_flight = gate.active if gate is not None else 0
            if in_flight:
                log.info(
                    "stopping: %d requests in flight get up to %.0f s to finish", in_flight, self.drain_s
                )
            drained = await self.server.stop(drain_timeout=self.drain_s)
            if not drained:
                log.warning("requests still running after %.0f s were cut off (stopping)", self.drain_s)
            self.server = None
        if self._backend_started:
            self._backend_started = False
            try:
                async with asyncio.timeout(self.model_close_s):
                    await self.backend.close()
            except TimeoutError:
                # The running generations are failed and abandoned; the model's thread stops at its
                # next decoding step.
                log.warning(
                    "the model was still generating %.0f s after the drain; its generations were cut off",
                    self.model_close_s,
                )
        log.debug("stop took %.1f s", time.monotonic() - started)


async def run_miner(settings: MinerSettings, *, wallet: Any, stop: asyncio.Event | None = None) -> None:
    """Run a miner until SIGINT/SIGTERM (or until `stop` is set)."""

    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    chain = ChainClient.from_settings(settings, wallet)
    node: MinerNode | None = None
    try:
        node = MinerNode(settings, chain=chain)
        await node.start()
        await stop.wait()
        log.info("stopping: draining requests")
    finally:
        if node is not None:
            await node.stop()
        await chain.close()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
    log.info("stopped")
