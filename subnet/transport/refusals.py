"""What the miner's gate refuses and why: every refusal with its HTTP status (`REFUSAL_STATUS`),
the `Refusal` a check raises, the permission rules a verified caller must pass, and the
`CallerIdentity` a served request carries to its handler."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from subnet.transport.policy import AuthPolicy, CallerInfo

__all__ = ["PERMISSION_RULES", "REFUSAL_STATUS", "CallerIdentity", "PermissionRule", "Refusal"]

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
