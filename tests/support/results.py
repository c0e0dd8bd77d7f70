"""What a validator's public round and weights steps returned, in order, for tests that run it whole.

The validator keeps nothing of the kind for them (the database keeps every round and weights
attempt); :func:`record_results` wraps the instance's ``run_round`` and ``set_weights``, which its
run loop and jobs call, and keeps their results.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from subnet.validator.node import Validator
from subnet.validator.rounds import RoundReport
from subnet.validator.weights import WeightsAttempt, WeightsOutcome


@dataclass
class ValidatorResults:
    reports: list[RoundReport] = field(default_factory=list)
    # Attempts made (an attempt that was not due is no attempt: the database does not record it).
    weight_attempts: list[WeightsAttempt] = field(default_factory=list)


def record_results(validator: Validator) -> ValidatorResults:
    results = ValidatorResults()
    run_round, set_weights = validator.run_round, validator.set_weights

    async def recorded_round() -> RoundReport:
        report = await run_round()
        results.reports.append(report)
        return report

    async def recorded_weights(*, force: bool = False) -> WeightsAttempt | None:
        attempt = await set_weights(force=force)
        if attempt is not None and attempt.outcome is not WeightsOutcome.NOT_DUE:
            results.weight_attempts.append(attempt)
        return attempt

    validator.run_round = recorded_round  # type: ignore[method-assign]
    validator.set_weights = recorded_weights  # type: ignore[method-assign]
    return results
