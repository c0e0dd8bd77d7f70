"""Who may call a miner, and how much: the directory of callers and the server's policy.

The transport does not talk to the chain. The miner wires its chain client's metagraph into a
`MetagraphDirectory` (refreshed with `replace()` whenever a new snapshot arrives) and its
settings into a `ServerPolicy`; the server only reads them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from subnet.config.settings import LimitsSettings
from subnet.protocol import MAX_REQUEST_BODY_BYTES
from subnet.transport.addresses import peer_key


class CallerInfo(Protocol):
    """What the server needs to know about a registered hotkey (the chain's Neuron fits)."""

    @property
    def uid(self) -> int: ...

    @property
    def hotkey(self) -> str: ...

    @property
    def stake(self) -> float: ...

    @property
    def validator_permit(self) -> bool: ...


class CallerDirectory(Protocol):
    """Looks up a hotkey on the subnet; None when it is not registered."""

    def lookup(self, hotkey: str) -> CallerInfo | None: ...

    def validator_addresses(self) -> frozenset[str]:
        """The addresses (as `peer_key` writes them) of the axons that permit holders published."""
        ...


def published_validator_addresses(callers: Iterable[CallerInfo]) -> frozenset[str]:
    """`peer_key` of every axon address a validator-permit holder published (chain Neurons
    carry `axon_ip`; callers without one, or serving nowhere, add nothing)."""
    return frozenset(
        peer_key(ip)
        for caller in callers
        if caller.validator_permit and (ip := str(getattr(caller, "axon_ip", "") or "")) not in _NOWHERE
    )


_NOWHERE = frozenset({"", "0.0.0.0", "::", "0"})


class HotkeyIndex(Protocol):
    """A metagraph snapshot as the chain client returns it (`Metagraph.by_hotkey`)."""

    def by_hotkey(self, hotkey: str) -> CallerInfo | None: ...


@dataclass(frozen=True)
class DirectoryEntry:
    """A plain `CallerInfo`, for static directories (tests, benchmarks, local development)."""

    uid: int
    hotkey: str
    stake: float = 0.0
    validator_permit: bool = True
    axon_ip: str = ""


class StaticDirectory:
    """A fixed set of callers; also usable as a snapshot for `MetagraphDirectory`."""

    def __init__(self, callers: Iterable[CallerInfo] = ()) -> None:
        self._by_hotkey: dict[str, CallerInfo] = {caller.hotkey: caller for caller in callers}
        self._validator_addresses = published_validator_addresses(self._by_hotkey.values())

    def validator_addresses(self) -> frozenset[str]:
        return self._validator_addresses

    def by_hotkey(self, hotkey: str) -> CallerInfo | None:
        return self._by_hotkey.get(hotkey)

    def lookup(self, hotkey: str) -> CallerInfo | None:
        return self._by_hotkey.get(hotkey)

    def __iter__(self) -> Iterator[CallerInfo]:
        return iter(self._by_hotkey.values())

    def __len__(self) -> int:
        return len(self._by_hotkey)


class MetagraphDirectory:
    """Holds the latest metagraph snapshot; whoever owns the chain client calls `replace()`.

    A snapshot that can be iterated (the chain's `Metagraph` yields its neurons) is indexed by
    hotkey once per `replace()`, so each request's lookup is one dict access rather than a
    scan of the metagraph: lookups run for every request, forged ones included. Replacing
    swaps one reference, so readers on the event loop see the old or the new snapshot whole.
    Before the first snapshot every lookup answers None (nobody is registered yet), which
    refuses all callers: a miner must not serve before it knows who the validators are.
    """

    def __init__(self, snapshot: HotkeyIndex | Iterable[CallerInfo] | None = None) -> None:
        self._lookup: Callable[[str], CallerInfo | None] = _nobody
        self._validator_addresses: frozenset[str] = frozenset()
        self._replaced_at: float | None = None
        if snapshot is not None:
            self.replace(snapshot)

    def replace(self, snapshot: HotkeyIndex | Iterable[CallerInfo]) -> None:
        """Swap in a new snapshot (a chain `Metagraph`, a `StaticDirectory`, a list of callers)."""
        if isinstance(snapshot, Iterable):
            index: dict[str, CallerInfo] = {caller.hotkey: caller for caller in snapshot}
            self._lookup = index.get
            self._validator_addresses = published_validator_addresses(index.values())
        else:
            self._lookup = snapshot.by_hotkey
            self._validator_addresses = frozenset()
        self._replaced_at = time.monotonic()

    def lookup(self, hotkey: str) -> CallerInfo | None:
        return self._lookup(hotkey)

    def validator_addresses(self) -> frozenset[str]:
        return self._validator_addresses

    @property
    def age_s(self) -> float | None:
        """Seconds since the last `replace()`, None before the first snapshot."""
        return None if self._replaced_at is None else time.monotonic() - self._replaced_at


def _nobody(hotkey: str) -> CallerInfo | None:
    return None


@dataclass(frozen=True)
class AuthPolicy:
    """Authentication and permission rules for callers of the miner endpoint.

    A caller must be registered, hold a validator permit (unless `require_validator_permit`
    is off, e.g. on a development chain), have at least `min_stake` TAO, not be on
    `blacklist`, and, when `whitelist` is given, be on it. All conditions must hold.
    """

    max_age_s: float = 10.0
    allowed_skew_s: float = 2.0
    min_stake: float = 0.0
    require_validator_permit: bool = True
    blacklist: frozenset[str] = frozenset()
    whitelist: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.max_age_s <= 0 or self.allowed_skew_s < 0:
            raise ValueError("max_age_s must be > 0 and allowed_skew_s >= 0")
        if self.min_stake < 0:
            raise ValueError("min_stake must be >= 0")


@dataclass(frozen=True)
class ServerPolicy:
    """Limits of the miner's HTTP server. See docs/transport.md for how each one is keyed.

    Pre-authentication limits key on the peer address (an IPv6 address counts by its /64):
    `max_pending_bodies` and `per_ip_max_pending_bodies` bound body reads that have not yet
    been verified, `per_ip_failed_auth_rate`/`_burst` bound how many signature verifications
    a peer may fail before it is refused without one (None switches it off, e.g. behind a
    reverse proxy where every peer shares one address). Post-authentication limits key on
    the verified hotkey: a forger cannot spend another caller's budget.
    """

    auth: AuthPolicy = field(default_factory=AuthPolicy)
    max_body_bytes: int = MAX_REQUEST_BODY_BYTES
    body_read_timeout_s: float = 5.0
    handler_timeout_s: float = 120.0
    max_in_flight: int = 64
    # One default, the miner's flags' (derived there from a validator's round).
    per_caller_max_in_flight: int = LimitsSettings.per_caller_concurrency
    per_caller_rate: float = LimitsSettings.per_caller_rate
    per_caller_burst: float = LimitsSettings.per_caller_burst
    max_pending_bodies: int = 512
    per_ip_max_pending_bodies: int = 64
    per_ip_failed_auth_rate: float | None = 20.0
    per_ip_failed_auth_burst: float = 100.0
    max_tracked_peers: int = 65_536
    replay_max_per_caller: int = 100_000
    # Connections (subnet/transport/connections.py): a request head must arrive within
    # head_timeout_s of the connection opening (or of the previous answer); at most
    # per_ip_max_connections open per address that is not a validator's, at most
    # max_connections in all (None: the open-file limit less a margin), of which
    # validator_reserved_share is kept for validators' addresses.
    head_timeout_s: float = 5.0
    per_ip_max_connections: int = 32
    max_connections: int | None = None
    validator_reserved_share: float = 0.25
    # Source addresses (as `peer_key` writes them) the operator names as validators': their
    # connections use the reserved share from the first one, as published axons' do.
    validator_addresses: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        positive = {
            "max_body_bytes": self.max_body_bytes,
            "body_read_timeout_s": self.body_read_timeout_s,
            "handler_timeout_s": self.handler_timeout_s,
            "max_in_flight": self.max_in_flight,
            "per_caller_max_in_flight": self.per_caller_max_in_flight,
            "per_caller_rate": self.per_caller_rate,
            "per_caller_burst": self.per_caller_burst,
            "max_pending_bodies": self.max_pending_bodies,
            "per_ip_max_pending_bodies": self.per_ip_max_pending_bodies,
            "per_ip_failed_auth_burst": self.per_ip_failed_auth_burst,
            "max_tracked_peers": self.max_tracked_peers,
            "replay_max_per_caller": self.replay_max_per_caller,
            "head_timeout_s": self.head_timeout_s,
            "per_ip_max_connections": self.per_ip_max_connections,
            "max_connections": 1 if self.max_connections is None else self.max_connections,
        }
        bad = [name for name, value in positive.items() if value <= 0]
        if self.per_ip_failed_auth_rate is not None and self.per_ip_failed_auth_rate <= 0:
            bad.append("per_ip_failed_auth_rate")
        if bad:
            raise ValueError(f"ServerPolicy fields must be positive: {', '.join(bad)}")
        object.__setattr__(self, "validator_addresses", frozenset(map(peer_key, self.validator_addresses)))
        if not 0.0 <= self.validator_reserved_share < 1.0:
            raise ValueError("ServerPolicy.validator_reserved_share must be in [0, 1)")
