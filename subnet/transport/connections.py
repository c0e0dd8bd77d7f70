"""Which TCP connections the miner accepts: caps per source address and in total, below the
process's open-file limit, with a share kept for validators.

Every open connection holds a file descriptor. Without a cap, connections that trickle their
request head (or say nothing) hold descriptors until the process runs out, and then the event
loop cannot accept anyone, validators included. So the miner counts connections as they are
accepted: a source address (an IPv6 /64 counts as one, as in `peer_key`) may hold at most
`per_peer`; all together at most `capacity`, set below the file limit; and of that capacity a
`reserved` part is open only to validators' addresses. A validator's address is known from
the metagraph (the axon a permit holder published) or learned when a request from it passed
authentication as a permitted caller. A connection refused here is reset at once, before
aiohttp sees it. The request head has a deadline of its own (`ServerPolicy.head_timeout_s`,
aiohttp's idle timer), so a slow connection holds its place only seconds.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import Any

from aiohttp import web

from subnet.transport.addresses import peer_key

log = logging.getLogger(__name__)

# Descriptors kept for the miner's own files (model shards, logs, its engine's connections).
FILE_MARGIN = 128
# Below this open-file limit the operator is told how to raise it.
LOW_FILE_LIMIT = 4096
# How many learned validator addresses are remembered (least recently seen forgotten first).
MAX_LEARNED_ADDRESSES = 4096


def open_file_limit() -> int:
    """The process's soft limit on open files (RLIMIT_NOFILE)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def accept_backlog(file_limit: int | None = None, wanted: int = 1024) -> int:
    """The listening socket's backlog. asyncio accepts up to this many connections at once, each
    a descriptor before the admission can refuse it, so it is kept to an eighth of the limit."""
    limit = open_file_limit() if file_limit is None else file_limit
    return max(16, min(wanted, limit // 8))


def connection_capacity(max_connections: int | None, file_limit: int | None = None) -> int:
    """Connections the miner may hold: `max_connections`, and never more than the file limit
    less `FILE_MARGIN` and one accept burst (`accept_backlog`); at least 16."""
    limit = open_file_limit() if file_limit is None else file_limit
    below_limit = max(16, limit - FILE_MARGIN - accept_backlog(limit))
    return below_limit if max_connections is None else min(max_connections, below_limit)


def warn_if_file_limit_is_low(capacity: int, file_limit: int | None = None) -> bool:
    """Log, once at start, that a low open-file limit caps the miner's connections."""
    limit = open_file_limit() if file_limit is None else file_limit
    if limit >= LOW_FILE_LIMIT:
        return False
    log.warning(
        "the open-file limit is %d, so the miner holds at most %d connections; raise it with "
        "`ulimit -n 65536` before starting the miner (LimitNOFILE=65536 in a systemd unit, "
        "--ulimit nofile=65536:65536 for docker)",
        limit,
        capacity,
    )
    return True


class ConnectionAdmission:
    """Counts open connections by source address and decides whether a new one is accepted."""

    def __init__(
        self,
        *,
        capacity: int,
        per_peer: int,
        reserved: int,
        declared_validators: Callable[[], Collection[str]] = frozenset,
    ) -> None:
        if capacity < 1 or per_peer < 1 or not 0 <= reserved < capacity:
            raise ValueError("need capacity >= 1, per_peer >= 1 and 0 <= reserved < capacity")
        self.capacity = capacity
        self.per_peer = per_peer
        self.reserved = reserved
        self._declared = declared_validators
        self._learned: OrderedDict[str, None] = OrderedDict()
        self._open: dict[str, int] = {}
        self.total = 0
        self.public = 0  # connections held by addresses not known as validators'
        self.refused = 0

    def is_validator(self, peer: str) -> bool:
        return peer in self._learned or peer in self._declared()

    def learn_validator(self, peer: str) -> None:
        """`peer` just made a request that authenticated as a permitted caller."""
        if peer in self._learned:
            self._learned.move_to_end(peer)
            return
        self._learned[peer] = None
        if len(self._learned) > MAX_LEARNED_ADDRESSES:
            self._learned.popitem(last=False)

    def admit(self, peer: str) -> bool:
        """Count a new connection from `peer`; False (nothing counted) when it must be refused."""
        held = self._open.get(peer, 0)
        if self.total >= self.capacity:
            return self._refuse()
        validator = self.is_validator(peer)
        if not validator and (held >= self.per_peer or self.public >= self.capacity - self.reserved):
            return self._refuse()
        self._open[peer] = held + 1
        self.total += 1
        if not validator:
            self.public += 1
        return True

    def release(self, peer: str, *, was_validator: bool) -> None:
        held = self._open.get(peer, 0) - 1
        if held <= 0:
            self._open.pop(peer, None)
        else:
            self._open[peer] = held
        self.total -= 1
        if not was_validator:
            self.public -= 1

    def held(self, peer: str) -> int:
        return self._open.get(peer, 0)

    def _refuse(self) -> bool:
        self.refused += 1
        return False


class AdmittedConnection(asyncio.Protocol):
    """Stands in front of aiohttp's connection handler: counts the connection, or resets it.

    aiohttp's handler is built only for an admitted connection; every transport callback is
    passed to it unchanged.
    """

    __slots__ = ("_admission", "_factory", "_inner", "_peer", "_peer_of", "_validator")

    def __init__(
        self,
        factory: Callable[[], asyncio.Protocol],
        admission: ConnectionAdmission,
        peer_of: Callable[[Any], str],
    ) -> None:
        self._factory = factory
        self._admission = admission
        self._peer_of = peer_of
        self._inner: asyncio.Protocol | None = None
        self._peer = ""
        self._validator = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = self._peer_of(transport.get_extra_info("peername"))
        if not self._admission.admit(peer):
            assert isinstance(transport, asyncio.Transport)
            transport.abort()  # reset: the descriptor is freed now, not after a close handshake
            return
        self._peer = peer
        # Counted as it was admitted: an address learned meanwhile does not move the count.
        self._validator = self._admission.is_validator(peer)
        self._inner = self._factory()
        self._inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        inner, self._inner = self._inner, None
        if inner is None:
            return
        self._admission.release(self._peer, was_validator=self._validator)
        inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._inner is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._inner is not None else None

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()


class AdmittingSite(web.TCPSite):
    """aiohttp's TCP site, with every connection passed through the gate's admission first."""

    def __init__(self, runner: web.AppRunner, admission: ConnectionAdmission, **options: Any) -> None:
        super().__init__(runner, **options)
        self._admission = admission

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with its runner, as TCPSite.start does
        handler_factory = self._runner.server
        assert handler_factory is not None
        admission = self._admission
        self._server = await asyncio.get_running_loop().create_server(
            lambda: AdmittedConnection(handler_factory, admission, _peer_of),
            self._host,
            self._port,
            backlog=self._backlog,
            reuse_address=self._reuse_address,
            reuse_port=self._reuse_port,
        )
        sockets = self._server.sockets
        self._bound_port = sockets[0].getsockname()[1] if sockets else self._port


def _peer_of(peername: Any) -> str:
    host = peername[0] if isinstance(peername, tuple) and peername else None
    return peer_key(host if isinstance(host, str) else None)
