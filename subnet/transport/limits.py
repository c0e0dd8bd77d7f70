"""Bounded bookkeeping for the miner's gate: token buckets, concurrency slots, replay store.

Every structure here has a hard size bound, so that no sequence of requests, forged or not,
can grow the miner's memory without limit. All of it runs on one event loop (no locks).
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

Clock = Callable[[], float]


@dataclass
class TokenBucket:
    """Classic token bucket: `rate` tokens per second, at most `burst` stored."""

    rate: float
    burst: float
    tokens: float
    updated: float

    def refill(self, now: float) -> None:
        elapsed = now - self.updated
        if elapsed > 0:
            self.tokens = min(self.burst, self.tokens + elapsed * self.rate)
            self.updated = now


class KeyedTokenBuckets:
    """One token bucket per key, at most `max_keys` of them (least recently used evicted).

    Evicting a bucket forgets its debt; the bound trades that for fixed memory.
    """

    def __init__(self, rate: float, burst: float, max_keys: int, clock: Clock = time.monotonic) -> None:
        self._rate = rate
        self._burst = burst
        self._max_keys = max_keys
        self._clock = clock
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def _bucket(self, key: str) -> TokenBucket | None:
        bucket = self._buckets.get(key)
        if bucket is not None:
            self._buckets.move_to_end(key)
            bucket.refill(self._clock())
        return bucket

    def has_token(self, key: str) -> bool:
        """Whether `key` could spend a token now (does not spend it)."""
        bucket = self._bucket(key)
        return bucket is None or bucket.tokens >= 1.0

    def try_take(self, key: str) -> bool:
        """Spend one token of `key`'s bucket; False (and nothing spent) when it is empty."""
        bucket = self._bucket(key)
        if bucket is None:
            bucket = TokenBucket(self._rate, self._burst, self._burst, self._clock())
            self._buckets[key] = bucket
            if len(self._buckets) > self._max_keys:
                self._buckets.popitem(last=False)
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True

    def __len__(self) -> int:
        return len(self._buckets)


class KeyedSlots:
    """Counts concurrent holders per key, refusing beyond `per_key` (and beyond `max_keys` keys)."""

    def __init__(self, per_key: int, max_keys: int) -> None:
        self._per_key = per_key
        self._max_keys = max_keys
        self._held: dict[str, int] = {}

    def try_acquire(self, key: str) -> bool:
        held = self._held.get(key, 0)
        if held >= self._per_key or (held == 0 and len(self._held) >= self._max_keys):
            return False
        self._held[key] = held + 1
        return True

    def release(self, key: str) -> None:
        held = self._held.get(key, 0) - 1
        if held <= 0:
            self._held.pop(key, None)
        else:
            self._held[key] = held

    def held(self, key: str) -> int:
        return self._held.get(key, 0)

    def __len__(self) -> int:
        return len(self._held)


class Slots:
    """A plain counter of concurrent holders with a cap (non-blocking semaphore)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.held = 0

    def try_acquire(self) -> bool:
        if self.held >= self.capacity:
            return False
        self.held += 1
        return True

    def release(self) -> None:
        self.held -= 1


class ReplayCapacityExceeded(Exception):
    """A caller has more fresh nonces on record than the store keeps for one hotkey."""


@dataclass
class _CallerNonces:
    seen: set[int] = field(default_factory=set)
    expiries: deque[tuple[float, int]] = field(default_factory=deque)

    def prune(self, now: float) -> None:
        while self.expiries and self.expiries[0][0] <= now:
            self.seen.discard(self.expiries.popleft()[1])


class ReplayStore:
    """Accepted (hotkey, nonce) pairs, kept `retention` seconds; a `bt.http_auth.NonceStore`.

    Only nonces whose signature verified are stored (bt.http_auth.verify writes after the
    signature check), and the server lets only registered, permitted hotkeys reach the
    verification, so the number of hotkeys here is bounded by the metagraph. Per hotkey at
    most `max_per_caller` nonces are kept; beyond that the caller is refused
    (`ReplayCapacityExceeded`) rather than an entry evicted, since eviction would reopen a
    replay window. `seen()` lets the server refuse a replay before paying for a verification.
    """

    def __init__(self, retention: float, max_per_caller: int, clock: Clock = time.monotonic) -> None:
        self.retention = retention
        self._max_per_caller = max_per_caller
        self._clock = clock
        self._callers: dict[str, _CallerNonces] = {}
        self._next_sweep = clock() + retention

    def seen(self, hotkey: str, nonce_ns: int) -> bool:
        nonces = self._callers.get(hotkey)
        return nonces is not None and nonce_ns in nonces.seen

    def check_and_store(self, hotkey_ss58: str, nonce_ns: int) -> bool:
        now = self._clock()
        self._sweep(now)
        nonces = self._callers.get(hotkey_ss58)
        if nonces is None:
            nonces = self._callers[hotkey_ss58] = _CallerNonces()
        else:
            nonces.prune(now)
        if nonce_ns in nonces.seen:
            return False
        if len(nonces.seen) >= self._max_per_caller:
            raise ReplayCapacityExceeded(hotkey_ss58)
        nonces.seen.add(nonce_ns)
        nonces.expiries.append((now + self.retention, nonce_ns))
        return True

    def _sweep(self, now: float) -> None:
        # Hotkeys that stopped calling would otherwise keep their last nonces forever.
        if now < self._next_sweep:
            return
        self._next_sweep = now + self.retention
        for hotkey in list(self._callers):
            nonces = self._callers[hotkey]
            nonces.prune(now)
            if not nonces.seen:
                del self._callers[hotkey]

    def __len__(self) -> int:
        return sum(len(nonces.seen) for nonces in self._callers.values())
