"""What the miner's gate refuses and why: every refusal with its HTTP status (`REFUSAL_STATUS`),
the `Refusal` a check raises, the permission rules a verified caller must pass, and the
`CallerIdentity` a served request carries to its handler."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from subnet.transport.policy import AuthPolicy, CallerInfo

__all__ = ["PERMISSION_RULES", "REFUSAL_STATUS", "CallerIdentity", "PermissionRule", "Refusal", "RefusalLog"]

# Every refusal the gate can give, with its HTTP status. These, `served` and `cancelled` are
# the values of the `outcome` metric label.
REFUSAL_STATUS: Mapping[str, int] = {
    "bad_json": 400,
    "invalid_request": 400,
    "duplicate_auth_header": 400,
    "incomplete_body": 400,
    "missing_auth": 401,
    "malformed_auth": 401,
    "wrong_receiver": 401,
    "stale_request": 401,
    "replayed_request": 401,
    "bad_signature": 401,
    "not_registered": 403,
    "no_validator_permit": 403,
    "insufficient_stake": 403,
    "blacklisted": 403,
    "not_whitelisted": 403,
    "body_timeout": 408,
    "body_too_large": 413,
    "rate_limited": 429,
    "caller_busy": 429,
    "peer_auth_failures": 429,
    "peer_busy": 429,
    "internal_error": 500,
    "engine_error": 502,  # the miner's model engine failed on this request (its template, a bug)
    "overloaded": 503,
    "shutting_down": 503,
    "handler_timeout": 504,
}


# What the miner's operator can do about a refusal, added to its log line.
REFUSAL_HINTS: Mapping[str, str] = {
    "handler_timeout": "the model is slower than --model.timeout: raise it (keeping it below the "
    "validators' --query.timeout) or lower --model.max_new_tokens",
    "overloaded": "the model or its engine could not take the request (see the lines above)",
    "missing_auth": "the caller did not sign its request",
    "not_registered": "the caller is not registered on this subnet",
    "no_validator_permit": "the caller has no validator permit",
    "insufficient_stake": "the caller has less stake than --blacklist.min_stake",
    "shutting_down": "the miner is stopping",
}


@dataclass
class RefusalLog:
    """Logs why requests are refused: one line per refusal type and ``every_s`` (a flood of bad
    requests cannot flood the log), with how many like it were not logged in between. Server
    faults (5xx: the model too slow or down) are warnings; a caller's mistakes are info."""

    logger: logging.Logger
    every_s: float = 10.0
    clock: Callable[[], float] = time.monotonic
    _last: dict[str, float] = field(default_factory=dict)
    _unlogged: dict[str, int] = field(default_factory=dict)

    def note(self, refusal: Refusal, peer: str, seconds: float) -> None:
        kind, now = refusal.error_type, self.clock()
        last = self._last.get(kind)
        if last is not None and now - last < self.every_s:
            self._unlogged[kind] = self._unlogged.get(kind, 0) + 1
            return
        self._last[kind] = now
        more = self._unlogged.pop(kind, 0)
        hint = REFUSAL_HINTS.get(kind)
        self.logger.log(
            logging.WARNING if refusal.status >= 500 else logging.INFO,
            "refused %d %s from %s after %.1f s: %s%s%s",
            refusal.status,
            kind,
            peer,
            seconds,
            refusal.message,
            f" ({hint})" if hint else "",
            f"; {more} more like it since the last such line" if more else "",
        )


class Refusal(Exception):
    """A request the gate will not serve; carries the error type (a key of REFUSAL_STATUS)."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message

    @property
    def status(self) -> int:
        return REFUSAL_STATUS[self.error_type]


@dataclass(frozen=True)
class CallerIdentity:
    """The authenticated caller of a served request, as the handler sees it."""

    hotkey: str
    uid: int
    stake: float
    validator_permit: bool
    nonce_ns: int
    peer: str


PermissionRule = Callable[[AuthPolicy, str, CallerInfo], Refusal | None]


def _registered_with_permit(policy: AuthPolicy, hotkey: str, caller: CallerInfo) -> Refusal | None:
    if policy.require_validator_permit and not caller.validator_permit:
        return Refusal("no_validator_permit", "caller has no validator permit on this subnet")
    return None


def _enough_stake(policy: AuthPolicy, hotkey: str, caller: CallerInfo) -> Refusal | None:
    if caller.stake < policy.min_stake:
        return Refusal("insufficient_stake", f"caller stake is below the minimum of {policy.min_stake:g}")
    return None


def _not_blacklisted(policy: AuthPolicy, hotkey: str, caller: CallerInfo) -> Refusal | None:
    if hotkey in policy.blacklist:
        return Refusal("blacklisted", "caller hotkey is blacklisted")
    return None


def _whitelisted_if_required(policy: AuthPolicy, hotkey: str, caller: CallerInfo) -> Refusal | None:
    if policy.whitelist is not None and hotkey not in policy.whitelist:
        return Refusal("not_whitelisted", "caller hotkey is not on the whitelist")
    return None


PERMISSION_RULES: tuple[PermissionRule, ...] = (
    _not_blacklisted,
    _whitelisted_if_required,
    _registered_with_permit,
    _enough_stake,
)
