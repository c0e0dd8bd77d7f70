"""A validator that runs for months keeps nothing in memory per round or weights attempt (the
database keeps them); the weight outcomes keep the values its database rows and metrics have
always held."""

from __future__ import annotations

from collections.abc import Sized
from types import SimpleNamespace
from typing import Any

import pytest

from subnet.config import ValidatorSettings
from subnet.validator.node import Validator, ValidatorOptions
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


def _held(validator: Validator) -> dict[str, int]:
    """How many entries each container the validator holds has."""
    return {name: len(value) for name, value in vars(validator).items() if isinstance(value, Sized)}


async def test_rounds_and_weight_attempts_leave_nothing_behind_in_the_validator(
    validator: Validator,
) -> None:
    await validator.run_round()
    await validator.set_weights()
    held = _held(validator)
    for _ in range(200):
        report = await validator.run_round()
        attempt = await validator.set_weights()
    assert report.number == 201 and attempt is not None and attempt.outcome == "chain_unavailable"
    assert _held(validator) == held


async def test_a_bounded_run_whose_weights_were_taken_forces_no_more(validator: Validator) -> None:
    view = validator.view

    async def sync_metagraph() -> ChainView | None:
        return view

    async def prune() -> int:
        return 0

    validator.sync_metagraph = sync_metagraph  # type: ignore[method-assign,assignment]
    validator.prune = prune  # type: ignore[method-assign]
    setter = validator._weights
    assert isinstance(setter, ScriptedSetter)
    await validator._run_rounds(70)
    # The first attempt was accepted (the 69 after it were not): the run ends without forcing another.
    assert setter.calls == 70 and setter.forced == 0


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
