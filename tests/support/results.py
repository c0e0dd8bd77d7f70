"""What a validator's public round and weights steps returned, in order, for tests that run it whole,
and what a round stored for each miner.

The validator keeps nothing of the kind for them (the database keeps every round and weights
attempt); :func:`record_results` wraps the instance's ``run_round`` and ``set_weights``, which its
run loop and jobs call, and keeps their results. :func:`stored_round` reads one round's
``responses`` rows back: how many of each query status, and each hotkey's summary as the store
folds it into the standings (``summarise_round`` over the same rows).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db import ResponseRecord, create_engine
from subnet.validator.node import Validator
from subnet.validator.rounds import RoundReport
from subnet.validator.state import RoundSummary, ScoredResponse, summarise_round
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


@dataclass(frozen=True)
class StoredRound:
    #: Query status (``ok``, ``timeout``, ``too_large``, ...) -> how many of the round's rows have it.
    statuses: Counter[str]
    #: Hotkey -> its results in the round, as the standings take them.
    summaries: dict[str, RoundSummary]


async def stored_round(database: str | AsyncEngine, round_id: int) -> StoredRound:
    """The rows round ``round_id`` stored, read from ``database`` (a URL: the validator closes its
    own engine when it stops; or an open engine)."""
    engine = create_engine(database) if isinstance(database, str) else database
    try:
        async with engine.connect() as connection:
            rows = (
                await connection.execute(
                    select(
                        ResponseRecord.status,
                        ResponseRecord.hotkey,
                        ResponseRecord.uid,
                        ResponseRecord.category,
                        ResponseRecord.valid,
                        ResponseRecord.score,
                        ResponseRecord.error_type,
                    ).where(ResponseRecord.round_id == round_id)
                )
            ).all()
    finally:
        if engine is not database:
            await engine.dispose()
    return StoredRound(
        statuses=Counter(str(row.status) for row in rows),
        summaries=summarise_round(
            ScoredResponse(hotkey, uid, category, bool(valid), float(score), error_type)
            for _, hotkey, uid, category, valid, score, error_type in rows
        ),
    )
