"""Setting weights: once per epoch, from the moving averages, every attempt recorded.

Due when at least ``interval`` blocks (the subnet's tempo unless
``--weights.interval`` says otherwise) have passed since this validator's last
update on chain. A failed attempt (chain away, rate limit) is recorded and the
next run of the job tries again, so weights are set soon after the chain
comes back.

Only miners serving an axon now earn weight: a registered hotkey whose axon is gone (a miner
that stopped serving, or a localnet miner of an earlier run that this run does not start) keeps
its stored moving average but is paid nothing until it serves again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from subnet.validator.rounds import ChainView, queryable_miners
from subnet.validator.state import WeightPolicy, compute_weights, why_no_weights
from subnet.validator.store import Store

log = logging.getLogger(__name__)

# Bumped when the meaning of our weights changes; miners and the chain see it with each set.
WEIGHTS_VERSION_KEY = 1


class WeightsOutcome(StrEnum):
    """How a weights attempt ended. The values are what the database's weight_submissions rows
    and the ``subnet_validator_weights_attempts`` metric's ``outcome`` label hold."""

    OK = "ok"  # the chain took the weights
    REJECTED = "rejected"
    NO_WEIGHTS = "no_weights"  # no miner had earned a weight yet
    TOO_SOON = "too_soon"  # the chain's weights rate limit
    CHAIN_UNAVAILABLE = "chain_unavailable"
    NOT_REGISTERED = "not_registered"
    ERROR = "error"
    NOT_DUE = "not_due"  # not attempted: the interval has not passed (never recorded)


def _error_name(exc: BaseException) -> str:
    return type(exc).__name__


def outcome_of(exc: BaseException) -> WeightsOutcome:
    """The recorded outcome for a chain error, by the nearest known class in its MRO."""
    for cls in type(exc).__mro__:
        if cls.__name__ in OUTCOME_OF_ERROR:
            return OUTCOME_OF_ERROR[cls.__name__]
    return WeightsOutcome.ERROR


# Exception class name -> outcome recorded; anything else is an error.
OUTCOME_OF_ERROR = {
    "WeightsTooSoon": WeightsOutcome.TOO_SOON,
    "ChainUnavailable": WeightsOutcome.CHAIN_UNAVAILABLE,
    "NotRegistered": WeightsOutcome.NOT_REGISTERED,
    "WeightsRejected": WeightsOutcome.REJECTED,
    "ChainRejected": WeightsOutcome.REJECTED,
    "ConnectionError": WeightsOutcome.CHAIN_UNAVAILABLE,
    "TimeoutError": WeightsOutcome.CHAIN_UNAVAILABLE,
    "OSError": WeightsOutcome.CHAIN_UNAVAILABLE,
}


@dataclass(frozen=True)
class WeightsAttempt:
    outcome: WeightsOutcome
    weights: dict[int, float]
    message: str = ""
    blocks_left: int | None = None  # too_soon: how many blocks the chain's rate limit still wants


class WeightSetter:
    def __init__(
        self,
        *,
        store: Store,
        chain: Any,
        policy: WeightPolicy,
        interval_blocks: int | None,
        version_key: int = WEIGHTS_VERSION_KEY,
    ) -> None:
        self.store = store
        self.chain = chain
        self.policy = policy
        self.interval_blocks = interval_blocks
        self.version_key = version_key
        # The metagraph's last_update lags by up to a sync interval; our own success does not.
        self.last_set_block = 0

    async def _due(self, view: ChainView) -> tuple[bool, int, str]:
        block = int(await self.chain.block())
        interval = self.interval_blocks or int(await self.chain.tempo())
        own = next((n for n in view.neurons if n.hotkey == view.own_hotkey), None)
        last_update = int(getattr(own, "last_update", 0) or 0) if own is not None else 0
        last_update = max(last_update, self.last_set_block)
        since = block - last_update
        return since >= interval, block, f"{since} blocks since last update, interval {interval}"

    async def maybe_set(self, view: ChainView, *, force: bool = False) -> WeightsAttempt:
        block: int | None = None
        try:
            due, block, why = await self._due(view)
            if not due and not force:
                log.debug("weights not due: %s", why)
                return WeightsAttempt(WeightsOutcome.NOT_DUE, {}, why)
        except Exception as exc:
            return await self._record(view, block, {}, outcome_of(exc), str(exc))

        standings = await self.store.standings()
        uid_of_hotkey = view.uid_of_hotkey()
        serving = {neuron.hotkey for neuron in queryable_miners(view)}
        # Validators and registered miners without a serving axon: nothing to pay for.
        excluded = view.validator_hotkeys() | frozenset(set(uid_of_hotkey) - serving)
        weights = compute_weights(standings, uid_of_hotkey, self.policy, excluded_hotkeys=excluded)
        if not weights:
            why = why_no_weights(standings, uid_of_hotkey, self.policy, excluded_hotkeys=excluded)
            return await self._record(view, block, {}, WeightsOutcome.NO_WEIGHTS, f"no weight set: {why}")
        try:
            result = await self.chain.set_weights(weights, self.version_key)
        except Exception as exc:
            outcome = outcome_of(exc)
            attempt = await self._record(view, block, weights, outcome, f"{_error_name(exc)}: {exc}")
            left = getattr(exc, "blocks_left", None)
            return replace(attempt, blocks_left=int(left)) if isinstance(left, int) and left > 0 else attempt
        success = bool(getattr(result, "success", True))
        message = str(getattr(result, "message", "") or "")
        if success and block is not None:
            self.last_set_block = int(getattr(result, "block", block) or block)
        outcome = WeightsOutcome.OK if success else WeightsOutcome.REJECTED
        return await self._record(view, block, weights, outcome, message)

    async def _record(
        self,
        view: ChainView,
        block: int | None,
        weights: dict[int, float],
        outcome: WeightsOutcome,
        message: str,
    ) -> WeightsAttempt:
        uid_to_hotkey = {uid: hotkey for hotkey, uid in view.uid_of_hotkey().items()}
        await self.store.record_weights(
            block=block,
            weights=weights,
            hotkeys=[uid_to_hotkey.get(uid, "") for uid in weights],
            version_key=self.version_key,
            outcome=outcome.value,
            message=message,
        )
        level = logging.INFO if outcome is WeightsOutcome.OK else logging.WARNING
        log.log(
            level, "weights %s for %d uids%s", outcome.value, len(weights), f": {message}" if message else ""
        )
        return WeightsAttempt(outcome, weights, message)
