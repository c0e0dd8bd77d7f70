"""A validator that runs for months keeps a bounded memory of its rounds and weight attempts;
the weight outcomes keep the values its database rows and metrics have always held."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from subnet.config import ValidatorSettings
from subnet.validator.node import RECENT_KEPT, Validator, ValidatorOptions
from subnet.validator.rounds import ChainView
from subnet.validator.weights import WeightsAttempt, WeightsOutcome


class CountingRunner:
    """Stands in for the RoundRunner: every round is numbered and instant."""

    def __init__(self) -> None:
        self.rounds = 0

    async def run(self, view: ChainView) -> Any:
        self.rounds += 1
        return SimpleNamespace(number=self.rounds, phrasing=None, n_miners=1)


class ScriptedSetter:
    """Stands in for the WeightSetter: the chain takes the first attempt, then is away."""

    def __init__(self) -> None:
        self.calls = 0
        self.forced = 0

    async def maybe_set(self, view: ChainView, *, force: bool = False) -> WeightsAttempt:
        self.calls += 1
        self.forced += force
        outcome = WeightsOutcome.OK if self.calls == 1 else WeightsOutcome.CHAIN_UNAVAILABLE
        return WeightsAttempt(outcome, {1: 1.0})


@pytest.fixture
def validator() -> Validator:
    node = Validator(
        ValidatorSettings(),
        wallet=None,
        chain=None,
        options=ValidatorOptions(install_signal_handlers=False),
    )
    node._runner = CountingRunner()  # type: ignore[assignment]
    node._weights = ScriptedSetter()  # type: ignore[assignment]
    node.view = ChainView(block=1, block_hash="0x01", neurons=(), own_hotkey="me")
    return node


async def test_reports_and_weight_attempts_keep_only_the_recent_ones(validator: Validator) -> None:
    for _ in range(3 * RECENT_KEPT):
        await validator.run_round()
        await validator.set_weights()
    assert len(validator.reports) == RECENT_KEPT
    assert [report.number for report in validator.reports] == list(
        range(2 * RECENT_KEPT + 1, 3 * RECENT_KEPT + 1)
    )
    assert len(validator.weight_attempts) == RECENT_KEPT
    assert validator.weight_attempts[-1].outcome == "chain_unavailable"


async def test_a_bounded_run_remembers_weights_set_longer_ago_than_it_keeps(validator: Validator) -> None:
    view = validator.view

    async def sync_metagraph() -> ChainView | None:
        return view

    async def prune() -> int:
        return 0

    validator.sync_metagraph = sync_metagraph  # type: ignore[method-assign,assignment]
    validator.prune = prune  # type: ignore[method-assign]
    setter = validator._weights
    assert isinstance(setter, ScriptedSetter)
    await validator._run_rounds(RECENT_KEPT + 5)
    assert all(attempt.outcome != "ok" for attempt in validator.weight_attempts)
    # The first attempt was accepted: the run ends without forcing another one.
    assert setter.calls == RECENT_KEPT + 5 and setter.forced == 0


def test_weight_outcomes_keep_their_stored_values() -> None:
    assert {outcome.name: outcome.value for outcome in WeightsOutcome} == {
        "OK": "ok",
        "REJECTED": "rejected",
        "NO_WEIGHTS": "no_weights",
        "TOO_SOON": "too_soon",
        "CHAIN_UNAVAILABLE": "chain_unavailable",
        "NOT_REGISTERED": "not_registered",
        "ERROR": "error",
        "NOT_DUE": "not_due",
    }
    assert WeightsOutcome.OK == "ok" and f"{WeightsOutcome.TOO_SOON}" == "too_soon"
