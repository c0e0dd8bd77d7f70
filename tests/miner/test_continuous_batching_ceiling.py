"""The arithmetic of ``bench/miner.py --profile-steps`` (bench/miner_steps.py): step costs
interpolated between the measured ones, and the throughput a schedule allows, on made-up costs
with known answers."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def bench(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("miner_steps")


class _FlatCosts:
    """Every step costs 1 s whatever its width, every prefill 0.5 s."""

    def step(self, batch: int, context: float) -> float:
        return 1.0

    def prefill(self, tokens: int) -> float:
        return 0.5


def test_interpolation_is_piecewise_linear_and_extends_past_both_ends(bench: ModuleType) -> None:
    points = [(1.0, 10.0), (2.0, 20.0), (4.0, 30.0)]
    assert bench._interpolate(points, 3.0) == pytest.approx(25.0)
    assert bench._interpolate(points, 2.0) == pytest.approx(20.0)
    assert bench._interpolate(points, 8.0) == pytest.approx(50.0)
    assert bench._interpolate(points, 0.5) == pytest.approx(5.0)
    assert bench._interpolate([(300.0, 7.0)], 900.0) == 7.0


def test_the_step_model_reads_the_measured_table(bench: ModuleType) -> None:
    costs = [
        bench.StepCost(batch, context, engine, 0.0, 0.0, 0.0)
        for batch, context, engine in [(1, 300, 0.05), (8, 300, 0.10), (1, 900, 0.07), (8, 900, 0.16)]
    ]
    model = bench.StepModel(costs, {100: 0.3, 300: 0.9})
    assert model.step(1, 600) == pytest.approx(0.06)
    assert model.step(8, 300) == pytest.approx(0.10)
    assert model.step(4, 300) == pytest.approx(0.05 + 3 / 7 * 0.05)
    assert model.step(16, 300) == pytest.approx(0.10)  # no wider batch than measured
    assert model.prefill(200) == pytest.approx(0.6)


def test_schedules_count_prefills_once_and_steps_by_the_batch(bench: ModuleType) -> None:
    served = [
        bench.Served(prompt=100, prefilled=100, answer=answer, prefill_seconds=0.5) for answer in (3, 5)
    ]
    costs = _FlatCosts()
    # One at a time: each prefill, then a step per token after the first (prefill writes it).
    assert bench.unbatched_seconds(costs, served) == pytest.approx(0.5 + 2 + 0.5 + 4)
    # Together: both prefills, then 4 steps (the longer answer's), the first two carrying both.
    assert bench.scheduled_seconds(costs, served, 2, 2) == pytest.approx(1.0 + 4)
    # One row at a time in the batch is the unbatched schedule.
    assert bench.scheduled_seconds(costs, served, 1, 2) == pytest.approx(
        bench.unbatched_seconds(costs, served)
    )
    # Chunks of one request never overlap either.
    assert bench.scheduled_seconds(costs, served, 2, 1) == pytest.approx(7.0)
    # An endless stream of full batches of 2: each token step shared by 2 rows.
    assert bench.full_batch_seconds(costs, served, 2) == pytest.approx(1.0 + (2 + 4) / 2)
