"""The chain client's errors: one typed family whose messages are one readable line.

The SDK's errors become these (:func:`translate`); a neuron's ``main()`` shows them through
``subnet.config.user_errors``.
"""

from __future__ import annotations

import bittensor as bt

from subnet.config import UserError


class ChainError(UserError):
    """A chain operation failed; the message is one readable line saying what to do."""

    def __init__(self, message: str, *, code: str | None = None, name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code  # the SDK's ErrorCode value, when the SDK classified the failure
        self.name = name  # the chain's own error name (e.g. "SettingWeightsTooFast"), when known


class ChainUnavailable(ChainError):
    """The chain could not be reached after the configured retries."""


class SubnetNotFound(ChainError):
    """The netuid names no subnet on this network."""


class NotRegistered(ChainError):
    """The hotkey holds no uid on the subnet; the message carries the command to register it."""


class ChainRejected(ChainError):
    """The chain (or the SDK's preflight of it) refused an extrinsic."""


class WeightsTooSoon(ChainRejected):
    """Weights were set less than the subnet's rate limit ago."""

    def __init__(self, message: str, *, blocks_left: int) -> None:
        super().__init__(message, code="rate_limited")
        self.blocks_left = blocks_left


class WeightsRejected(ChainRejected):
    """The weights were refused (no permit, too little stake, too few weights, version key...)."""


class ServeRejected(ChainRejected):
    """Publishing the axon was refused (serving rate limit, bad address...)."""


class RegistrationRejected(ChainRejected):
    """Registration was refused (no balance, registration closed, subnet full...)."""


def describe(error: BaseException | None) -> str:
    """Any exception as one short line: its type and its text with the whitespace folded."""
    if error is None:
        return "no error"
    text = " ".join(str(error).split())
    if isinstance(error, TimeoutError) and not text:
        return "timed out"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def too_soon(blocks_left: int, netuid: int, since: int | None, limit: int | None) -> WeightsTooSoon:
    """The rate-limit refusal, with what is known of the last update and the limit."""
    detail = f"last set {since} blocks ago, rate limit {limit} blocks; " if since is not None else ""
    return WeightsTooSoon(
        f"too soon to set weights on netuid {netuid}: {detail}{blocks_left} blocks left",
        blocks_left=blocks_left,
    )


def translate(error: BaseException, what: str) -> ChainError:
    """An SDK error as this module's typed error, with a one-line message."""
    if isinstance(error, bt.ChainError):
        code = error.code.value
        text = f"{what} failed: {' '.join(error.message.split())}"
        remediation = error.remediation
        if remediation and code != "unknown":
            text += f" ({remediation})"
        if code == "subnet_not_exists":
            return SubnetNotFound(text, code=code, name=error.name)
        if code == "not_registered":
            return NotRegistered(text, code=code, name=error.name)
        return ChainRejected(text, code=code, name=error.name)
    if isinstance(error, bt.PolicyError):
        return ChainRejected(f"{what} refused by the SDK policy: {error}", code="policy_violation")
    return ChainError(f"{what} failed: {describe(error)}")
