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
from typing import Any, cast

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


class Ticket:
    """One admitted connection, as the admission counts it."""

    __slots__ = ("abort", "authenticated", "key", "peer", "released", "validator")

    def __init__(self, peer: str, validator: bool, abort: Callable[[], None], key: object) -> None:
        self.peer = peer
        self.key = key  # what the server knows the connection by (its asyncio transport)
        self.validator = validator  # counted outside the public share
        self.authenticated = False  # a request on it passed authentication as a permitted caller
        self.released = False
        self.abort = abort


class ConnectionAdmission:
    """Counts open connections by source address and decides whether a new one is accepted.

    A connection from an address not known as a validator's counts in the public share until a
    request on it authenticates; then it is the validator's. A connection that has not
    authenticated cannot keep its place against a newcomer: when the public share (or the
    total) is full, a newcomer from an address that holds fewer such connections takes the place
    of the oldest one of the address that holds the most. So strangers' connections, however
    many, cannot lock out a validator the miner has not met yet (its address holds none or a
    few), while the strangers only displace each other.
    """

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
        self._by_key: dict[object, Ticket] = {}
        # Connections that have not authenticated, by address, oldest first; and the addresses
        # by how many such connections they hold (to find the heaviest without a scan).
        self._unproven: dict[str, OrderedDict[Ticket, None]] = {}
        self._peers_by_count: dict[int, set[str]] = {}
        self._heaviest = 0
        self.total = 0
        self.public = 0  # connections held by addresses not known as validators'
        self.refused = 0
        self.evicted = 0

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

    def admit(self, peer: str, abort: Callable[[], None] = lambda: None, key: object = None) -> Ticket | None:
        """Count a new connection from `peer`, known by `key` (`abort` ends it, should its place
        be taken); None (nothing counted) when it must be refused."""
        held = self._open.get(peer, 0)
        validator = self.is_validator(peer)
        public_full = not validator and self.public >= self.capacity - self.reserved
        if (not validator and held >= self.per_peer) or (
            (self.total >= self.capacity or public_full) and not self._make_room(peer, validator)
        ):
            self.refused += 1
            return None
        ticket = Ticket(peer, validator, abort, key)
        if key is not None:
            self._by_key[key] = ticket
        self._open[peer] = held + 1
        self.total += 1
        if not validator:
            self.public += 1
            self._add_unproven(ticket)
        return ticket

    def ticket(self, key: object) -> Ticket | None:
        """The open connection known by `key`, None when it is not (or no longer) counted."""
        return self._by_key.get(key)

    def authenticated(self, ticket: Ticket) -> None:
        """A request on this connection authenticated: it is a validator's from now on."""
        if ticket.authenticated or ticket.released:
            return
        ticket.authenticated = True
        if not ticket.validator:
            ticket.validator = True
            self.public -= 1
            self._drop_unproven(ticket)

    def release(self, ticket: Ticket) -> None:
        """The connection closed (or its place was taken); counted once whatever calls it."""
        if ticket.released:
            return
        ticket.released = True
        if ticket.key is not None:
            self._by_key.pop(ticket.key, None)
        held = self._open.get(ticket.peer, 0) - 1
        if held <= 0:
            self._open.pop(ticket.peer, None)
        else:
            self._open[ticket.peer] = held
        self.total -= 1
        if not ticket.validator:
            self.public -= 1
            self._drop_unproven(ticket)

    def held(self, peer: str) -> int:
        return self._open.get(peer, 0)

    def unproven(self, peer: str) -> int:
        """Connections of `peer` that have not authenticated and count in the public share."""
        return len(self._unproven.get(peer, ()))

    def _make_room(self, peer: str, validator: bool) -> bool:
        """End the oldest unauthenticated connection of the address holding the most of them,
        when that address holds more than `peer` would after this connection (a validator's
        newcomer takes any such place). False when no connection may give way."""
        while self._heaviest > 0 and not self._peers_by_count.get(self._heaviest):
            self._heaviest -= 1
        if self._heaviest == 0:
            return False
        if not validator and self._heaviest <= self.unproven(peer) + 1:
            return False
        victim_peer = next(iter(self._peers_by_count[self._heaviest]))
        victim = next(iter(self._unproven[victim_peer]))
        self.release(victim)
        self.evicted += 1
        victim.abort()
        return True

    def _add_unproven(self, ticket: Ticket) -> None:
        connections = self._unproven.setdefault(ticket.peer, OrderedDict())
        self._move(ticket.peer, len(connections), len(connections) + 1)
        connections[ticket] = None

    def _drop_unproven(self, ticket: Ticket) -> None:
        connections = self._unproven.get(ticket.peer)
        if connections is None or ticket not in connections:
            return
        del connections[ticket]
        self._move(ticket.peer, len(connections) + 1, len(connections))
        if not connections:
            del self._unproven[ticket.peer]

    def _move(self, peer: str, before: int, after: int) -> None:
        if before:
            peers = self._peers_by_count[before]
            peers.discard(peer)
            if not peers:
                del self._peers_by_count[before]
        if after:
            self._peers_by_count.setdefault(after, set()).add(peer)
            self._heaviest = max(self._heaviest, after)


class AdmittedConnection(asyncio.Protocol):
    """Stands in front of aiohttp's connection handler: counts the connection, or resets it.

    aiohttp's handler is built only for an admitted connection; every transport callback is
    passed to it unchanged.
    """

    __slots__ = ("_admission", "_factory", "_inner", "_peer_of", "_ticket")

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
        self._ticket: Ticket | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A cast, not an isinstance check: uvloop's transports (the validator's loop where installed)
        # have every method used here but are no asyncio.Transport subclass.
        transport = cast(asyncio.Transport, transport)
        peer = self._peer_of(transport.get_extra_info("peername"))
        # abort(): a reset, so the descriptor is freed now, not after a close handshake.
        ticket = self._admission.admit(peer, transport.abort, key=transport)
        if ticket is None:
            transport.abort()
            return
        self._ticket = ticket
        self._inner = self._factory()
        self._inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        inner, self._inner = self._inner, None
        if inner is None:
            return
        ticket = self._ticket
        assert ticket is not None
        self._admission.release(ticket)
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
        # TCPSite.start's last step: its `port` and `name` read the port bound (port 0: the kernel's)
        self._bound_port = sockets[0].getsockname()[1] if sockets else self._port


def _peer_of(peername: Any) -> str:
    host = peername[0] if isinstance(peername, tuple) and peername else None
    return peer_key(host if isinstance(host, str) else None)
