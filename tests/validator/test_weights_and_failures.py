"""The weight setter (when it is due, what it records, chain errors) and a round that fails midway."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from subnet.chain import ChainUnavailable, Neuron, WeightsResult, WeightsTooSoon
from subnet.db import create_engine
from subnet.validator.rounds import ChainView
from subnet.validator.state import WeightPolicy
from subnet.validator.store import NewTask, Store
from subnet.validator.weights import WeightSetter
from tests.validator.row_equipment import response_row


@dataclass
class FakeChain:
    current_block: int = 100
    tempo_blocks: int = 10
    fail_with: Exception | None = None
    calls: list[dict[int, float]] = field(default_factory=list)

    async def block(self) -> int:
        return self.current_block

    async def tempo(self) -> int:
        return self.tempo_blocks

    async def set_weights(self, weights: dict[int, float], version_key: int) -> WeightsResult:
        if self.fail_with is not None:
            raise self.fail_with
        self.calls.append(weights)
        uids = tuple(sorted(weights))
        return WeightsResult("direct", self.current_block, uids, tuple(weights[u] for u in uids), version_key)


def _neuron(uid: int, hotkey: str, *, permit: bool = False, last_update: int = 0) -> Neuron:
    return Neuron(uid, hotkey, "cold", 0.0, permit, "127.0.0.1", 1000 + uid, last_update, 0.0)


@pytest.fixture
async def store(migrated_sqlite: str) -> AsyncIterator[Store]:
    engine = create_engine(migrated_sqlite)
    store = Store(engine)
    round_id, task_ids = await store.create_round(
        number=1,
        netuid=1,
        block=1,
        block_hash="0x01",
        seed_commitment="c" * 64,
        generator_version="1",
        tasks=[NewTask(f"t{i}", "simple", "simple", "x", {}, []) for i in range(10)],
    )
    rows = [
        response_row(
            {
                "round_id": round_id,
                "task_id": task_id,
                "hotkey": hotkey,
                "uid": uid,
                "category": "simple",
                "status": "ok",
                "valid": score == 1.0,
                "score": score,
                "components": {},
            }
        )
        for task_id in task_ids.values()
        for hotkey, uid, score in (("good", 1, 1.0), ("fair", 2, 0.7), ("bad", 3, 0.1))
    ]
    await store.store_responses(rows)
    await store.mark_collected(round_id, 3)
    await store.apply_round(round_id, alpha=1.0)
    yield store
    await engine.dispose()


def _view(last_update: int = 0) -> ChainView:
    neurons = (
        _neuron(0, "me", permit=True, last_update=last_update),
        _neuron(1, "good"),
        _neuron(2, "fair"),
        _neuron(3, "bad"),
    )
    return ChainView(block=100, block_hash="0x01", neurons=neurons, own_hotkey="me")


async def test_due_once_per_interval_and_every_attempt_recorded(store: Store) -> None:
    chain = FakeChain()
    setter = WeightSetter(store=store, chain=chain, policy=WeightPolicy(min_samples=5), interval_blocks=None)
    assert (await setter.maybe_set(_view(last_update=95))).outcome == "not_due"
    first = await setter.maybe_set(_view(last_update=80))
    assert first.outcome == "ok" and set(first.weights) == {1, 2}
    assert first.weights[1] > first.weights[2]
    # The metagraph still shows the old last_update; our own success counts.
    assert (await setter.maybe_set(_view(last_update=80))).outcome == "not_due"
    chain.current_block = 115
    chain.fail_with = WeightsTooSoon("too soon", blocks_left=3)
    assert (await setter.maybe_set(_view(last_update=80))).outcome == "too_soon"
    chain.fail_with = ChainUnavailable("gone")
    assert (await setter.maybe_set(_view(last_update=80))).outcome == "chain_unavailable"
    outcomes = [submission.outcome for submission in await store.weight_submissions()]
    assert outcomes == ["ok", "too_soon", "chain_unavailable"]
    assert len(chain.calls) == 1


async def test_nobody_qualifies_means_no_weights_and_no_chain_call(store: Store) -> None:
    chain = FakeChain()
    setter = WeightSetter(store=store, chain=chain, policy=WeightPolicy(min_samples=500), interval_blocks=5)
    attempt = await setter.maybe_set(_view())
    assert attempt.outcome == "no_weights" and chain.calls == []


async def test_a_round_that_fails_is_discarded_at_once(store: Store) -> None:
    from subnet.db import RoundStatus
    from subnet.validator.judge import BfclJudge
    from subnet.validator.rounds import RoundParams, RoundRunner
    from subnet.validator.task_source import LibraryTasks

    class BrokenQuerier:
        async def query(self, target: object, request: object, **_options: object) -> object:
            raise RuntimeError("the transport broke")

    runner = RoundRunner(
        store=store,
        querier=BrokenQuerier(),  # type: ignore[arg-type]
        task_source=LibraryTasks(),
        judge=BfclJudge(),
        secret=b"s" * 32,
        params=RoundParams(netuid=1, n_tasks=4, alpha=0.5),
    )
    with pytest.raises(RuntimeError, match="transport broke"):
        await runner.run(_view())
    latest = (await store.rounds())[-1]
    assert latest.number == 2 and latest.status == RoundStatus.DISCARDED.value
    assert "transport broke" in latest.note


async def test_a_registered_miner_without_a_serving_axon_earns_no_weight(store: Store) -> None:
    """A stopped miner (a localnet's miner of an earlier run) keeps its average but is not paid."""
    chain = FakeChain()
    setter = WeightSetter(store=store, chain=chain, policy=WeightPolicy(min_samples=5), interval_blocks=None)
    unserved = Neuron(1, "good", "cold", 0.0, False, "0.0.0.0", 0, 0, 0.0)
    view = _view(last_update=80)
    view = ChainView(view.block, view.block_hash, (view.neurons[0], unserved, *view.neurons[2:]), "me")
    attempt = await setter.maybe_set(view)
    assert attempt.outcome == "ok" and set(attempt.weights) == {2}
