"""Round isolation in time (issue 26): every miner's work in a round has a budget derived from the
round's parts, and the round job's timeout is derived from the same parts plus phrasing, so a
miner that stalls every step (or whose requests never end) leaves a completed, scored round, and
the other miners' scores are exactly what they are without it."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from subnet.chain import ChainClient
from subnet.config import (
    DbSettings,
    PhrasingSettings,
    QuerySettings,
    RoundSettings,
    ValidatorSettings,
)
from subnet.db import ResponseRecord, Round, TaskRecord, create_engine, sqlite_url, upgrade
from subnet.protocol import AssistantMessage, ChatCompletionRequest, ChatCompletionResponse, Choice
from subnet.transport import MinerTarget, QueryResult, QueryStatus
from subnet.validator.budget import RoundBudget
from subnet.validator.jobs import GuardedJob
from subnet.validator.judge import BfclJudge
from subnet.validator.node import Validator, ValidatorOptions
from subnet.validator.rounds import ChainView, RoundParams, RoundRunner
from subnet.validator.store import Store
from subnet.validator.task_source import LibraryTasks
from subnet.wallets import load_wallet
from tasks.episodes import EPISODE_CATEGORIES, Episode, generate_episodes
from tests.support.simulation import SimulatedSubnet, start_simulated_subnet, stop_simulated_miners

# -- the budget's arithmetic ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def episode_pool() -> list[Episode]:
    """Episodes of every category, as rounds draw them."""
    pool = generate_episodes(b"budget", 300)
    assert {episode.category for episode in pool} == set(EPISODE_CATEGORIES)
    return pool


def _validator_settings(**sections: Any) -> ValidatorSettings:
    return dataclasses.replace(ValidatorSettings(), **sections)


def test_the_defaults_outlast_a_miner_that_takes_every_episode_to_its_deadline() -> None:
    """The issue's figures: 4 episodes of up to 120 s, one after the other, are 480 s, where the
    round job's timeout was 360 s (max(3 x interval, 2 x query timeout + 300))."""
    defaults = ValidatorSettings()
    validator = Validator(
        defaults, wallet=None, chain=None, options=ValidatorOptions(install_signal_handlers=False)
    )
    (job,) = [spec for spec in validator.job_specs() if spec.name == "round"]
    serial_episodes = defaults.round.episodes * defaults.round.episode_deadline
    assert serial_episodes == 480.0
    assert job.timeout_s > serial_episodes + defaults.query.timeout
    assert job.timeout_s == validator.round_budget().job_s
    # A phrasing engine adds its stage: the tasks, then the episodes' turns, each under its deadline.
    phrased = _validator_settings(phrasing=PhrasingSettings(engine="openai", deadline=300.0))
    with_phrasing = Validator(phrased, wallet=None, chain=None)
    (phrased_job,) = [spec for spec in with_phrasing.job_specs() if spec.name == "round"]
    assert phrased_job.timeout_s >= job.timeout_s + 2 * 300.0


@settings(max_examples=200, deadline=None)
@given(
    query_timeout=st.floats(0.05, 600.0),
    episode_deadline=st.floats(0.05, 3600.0),
    n_tasks=st.integers(0, 64),
    n_episodes=st.integers(0, 16),
    engine=st.sampled_from(["templates", "openai", "transformers"]),
    phrasing_deadline=st.floats(1.0, 3600.0),
    draw_seed=st.integers(0, 2**32),
)
def test_the_round_job_always_outlasts_the_longest_miner_budget_plus_phrasing(
    episode_pool: list[Episode],
    query_timeout: float,
    episode_deadline: float,
    n_tasks: int,
    n_episodes: int,
    engine: str,
    phrasing_deadline: float,
    draw_seed: int,
) -> None:
    config = _validator_settings(
        round=RoundSettings(tasks=n_tasks, episodes=n_episodes, episode_deadline=episode_deadline),
        query=QuerySettings(timeout=query_timeout),
        phrasing=PhrasingSettings(engine=engine, deadline=phrasing_deadline),
    )
    validator = Validator(config, wallet=None, chain=None)
    budget = validator.round_budget()
    (job,) = [spec for spec in validator.job_specs() if spec.name == "round"]
    drawn = random.Random(draw_seed).sample(episode_pool, n_episodes)
    phrasing_s = 2 * phrasing_deadline if engine != "templates" else 0.0
    longest_miner = budget.miner_s(drawn, n_tasks=n_tasks)
    assert job.timeout_s > longest_miner + phrasing_s
    # ... and each miner's budget covers what its own parts may take.
    assert longest_miner > sum(min(episode_deadline, budget.episode_s(e)) for e in drawn)
    if n_tasks:
        assert longest_miner > query_timeout


def test_an_agent_step_is_one_request_and_a_multi_turn_episode_is_capped_by_its_steps(
    episode_pool: list[Episode],
) -> None:
    budget = RoundBudget(query_timeout_s=3.0, episode_deadline_s=100.0, tool_call_s=0.5)
    agent = next(episode for episode in episode_pool if episode.category == "agent_step")
    assert budget.episode_s(agent) == 3.0
    multi = next(episode for episode in episode_pool if episode.category == "multi_turn_base")
    capped = dataclasses.replace(multi, step_cap=1)
    per_step = 3.0 + 16 * 0.5  # the request, and the tools of up to MAX_CALLS_PER_STEP calls
    assert budget.episode_s(capped) == min(100.0, len(capped.turns) * per_step)
    assert budget.episode_s(multi) == 100.0  # eight steps a turn: the deadline comes first
    assert budget.episode_s(None) == 100.0


# -- a stalling miner in a real round -------------------------------------------------------------

QUERY_TIMEOUT = 1.0
# The deadline leaves an honest episode room on a loaded machine (the "slow" miner answers each
# step in 0.3 s: at 2.0 s a busy test worker pushed its longer episodes past the deadline), while
# the staller, whose every step takes 0.9 s and who calls on to the step cap, still meets it.
ROUND = RoundSettings(tasks=2, interval=1.0, episodes=2, episode_deadline=3.5)
HONEST = ("right", "slow", "plausible")
FIXED_BLOCK_HASH = "0x" + "5a" * 32


@pytest.fixture
async def stall_subnet(tmp_path: Path) -> Any:
    subnet = await start_simulated_subnet(tmp_path, (*HONEST, "stall"), query_timeout=QUERY_TIMEOUT)
    subnet.settings = dataclasses.replace(subnet.settings, round=ROUND)
    try:
        yield subnet
    finally:
        await stop_simulated_miners(list(subnet.miners.values()))
        await subnet.devchain.close()


async def _round_as_the_job_runs_it(
    subnet: SimulatedSubnet, database: Path, left_out: frozenset[str] = frozenset()
) -> tuple[GuardedJob, list[Any], list[Any]]:
    """One round run by the round job (its timeout included) on its own database, against the
    same chain view (block hash fixed, so the same seed), with the miners ``left_out`` not in it."""
    config = dataclasses.replace(subnet.settings, db=DbSettings(url=sqlite_url(database)))
    wallet = load_wallet(config.wallet)
    validator = Validator(
        config,
        wallet=wallet,
        chain=ChainClient.from_settings(config, wallet),
        options=ValidatorOptions(observer=subnet.key.observe, install_signal_handlers=False),
    )
    await validator.start()
    try:
        view = await validator.sync_metagraph()
        validator.view = dataclasses.replace(
            view,
            block_hash=FIXED_BLOCK_HASH,
            neurons=tuple(neuron for neuron in view.neurons if neuron.hotkey not in left_out),
        )
        (spec,) = [spec for spec in validator.job_specs() if spec.name == "round"]
        job = GuardedJob(spec)
        await job.run_once()
    finally:
        await validator.close()
    engine = create_engine(config.db.url)
    try:
        async with engine.connect() as connection:
            rounds = (await connection.execute(select(Round.number, Round.status, Round.note))).all()
            rows = (
                await connection.execute(
                    select(
                        ResponseRecord.hotkey,
                        TaskRecord.task_key,
                        ResponseRecord.category,
                        ResponseRecord.status,
                        ResponseRecord.valid,
                        ResponseRecord.score,
                        ResponseRecord.latency_s,
                    ).join(TaskRecord, TaskRecord.id == ResponseRecord.task_id)
                )
            ).all()
    finally:
        await engine.dispose()
    return job, rounds, rows


async def test_a_miner_stalling_every_step_leaves_a_scored_round_and_the_others_unchanged(
    stall_subnet: SimulatedSubnet, tmp_path: Path
) -> None:
    staller = stall_subnet.miners["stall"].hotkey
    stall_s = float(stall_subnet.miners["stall"].context.params["stall_s"])
    assert QUERY_TIMEOUT - 0.2 <= stall_s < QUERY_TIMEOUT  # just under the query timeout

    job, rounds, rows = await _round_as_the_job_runs_it(stall_subnet, tmp_path / "with.sqlite")
    assert job.stats.timeouts == 0 and job.stats.failures == 0, job.stats
    assert [(number, status) for number, status, _ in rounds] == [(1, "scored")], rounds
    stalled = [row for row in rows if row.hotkey == staller]
    assert len(stalled) == ROUND.tasks + ROUND.episodes
    # It really stalled: its multi-turn episodes ran to their deadline (a step cap is 8 steps).
    multi = [row for row in stalled if row.category.startswith("multi_turn")]
    assert all(row.status == "timeout" and row.latency_s >= ROUND.episode_deadline for row in multi), multi
    assert all(not row.valid for row in stalled)

    _, clean_rounds, clean_rows = await _round_as_the_job_runs_it(
        stall_subnet, tmp_path / "without.sqlite", left_out=frozenset({staller})
    )
    assert [(number, status) for number, status, _ in clean_rounds] == [(1, "scored")]

    def honest(found: list[Any]) -> dict[tuple[str, str], tuple[str, bool, float]]:
        return {
            (row.hotkey, row.task_key): (row.status, row.valid, row.score)
            for row in found
            if row.hotkey != staller
        }

    assert len(honest(rows)) == len(HONEST) * (ROUND.tasks + ROUND.episodes)
    assert honest(rows) == honest(clean_rows)


# -- a miner whose requests never end: the budget cuts them --------------------------------------


@dataclasses.dataclass(frozen=True)
class _Neuron:
    uid: int
    hotkey: str
    axon_ip: str = "127.0.0.1"
    axon_port: int = 9000
    validator_permit: bool = False
    is_serving: bool = True


class _StuckAfter:
    """Answers every request at once with a text (no call), except that the ``stuck`` hotkey's
    requests after its first ``answered`` never end (a transport that ignores its timeout)."""

    def __init__(self, stuck: str, answered: int) -> None:
        self.stuck, self.answered = stuck, answered
        self.seen: dict[str, int] = {}

    async def query(
        self, target: MinerTarget, request: ChatCompletionRequest, *, parse_after: Any = None
    ) -> QueryResult:
        count = self.seen[target.hotkey] = self.seen.get(target.hotkey, 0) + 1
        if target.hotkey == self.stuck and count > self.answered:
            await asyncio.Event().wait()
        completion = ChatCompletionResponse(
            id="x", model="m", choices=[Choice(message=AssistantMessage(content="I cannot help with that."))]
        )
        return QueryResult(status=QueryStatus.OK, latency_s=0.001, completion=completion, http_status=200)


class _TightBudget(RoundBudget):
    """Less time per miner than its episodes' deadlines: only the budget can end its work."""

    def miner_s(self, episodes: Any = None, n_tasks: int | None = None) -> float:
        return 0.5


@pytest.fixture
def two_databases(tmp_path: Path) -> Iterator[tuple[str, str]]:
    yield sqlite_url(tmp_path / "a.sqlite"), sqlite_url(tmp_path / "b.sqlite")


async def _run_round(url: str, neurons: tuple[_Neuron, ...], stuck: str) -> tuple[Any, list[Any], str]:
    await upgrade(url)
    engine = create_engine(url)
    try:
        runner = RoundRunner(
            store=Store(engine),
            querier=_StuckAfter(stuck, answered=1),
            task_source=LibraryTasks(),
            judge=BfclJudge(),
            secret=b"s" * 32,
            params=RoundParams(
                netuid=1,
                n_tasks=3,
                alpha=0.5,
                n_episodes=2,
                budget=_TightBudget(query_timeout_s=30.0, episode_deadline_s=30.0),
            ),
        )
        view = ChainView(block=7, block_hash="0x" + "cd" * 32, neurons=neurons, own_hotkey="validator")
        report = await asyncio.wait_for(runner.run(view), 20.0)  # a generous bound: a hang fails the test
        async with engine.connect() as connection:
            rows = (
                await connection.execute(
                    select(
                        ResponseRecord.hotkey,
                        TaskRecord.task_key,
                        ResponseRecord.status,
                        ResponseRecord.error,
                        ResponseRecord.valid,
                        ResponseRecord.score,
                    ).join(TaskRecord, TaskRecord.id == ResponseRecord.task_id)
                )
            ).all()
            status = (await connection.execute(select(Round.status))).scalar_one()
    finally:
        await engine.dispose()
    return report, rows, status


async def test_a_miner_whose_requests_never_end_is_cut_at_its_budget_and_keeps_what_it_answered(
    two_databases: tuple[str, str],
) -> None:
    neurons = tuple(_Neuron(uid, f"hk-{uid}", axon_port=9000 + uid) for uid in range(1, 4))
    stuck = "hk-2"
    report, rows, status = await _run_round(two_databases[0], neurons, stuck)
    assert status == "scored"
    assert report.n_responses == 3 * (3 + 2)
    mine = [row for row in rows if row.hotkey == stuck]
    answered = [row for row in mine if row.status == "ok"]
    cut = [row for row in mine if row.status == "timeout"]
    assert len(answered) == 1 and len(cut) == 4, mine
    assert all("time budget" in row.error and not row.valid and row.score == 0.0 for row in cut)

    _, clean_rows, clean_status = await _run_round(
        two_databases[1], tuple(n for n in neurons if n.hotkey != stuck), stuck
    )
    assert clean_status == "scored"

    def others(found: list[Any]) -> dict[tuple[str, str], tuple[str, bool, float]]:
        return {
            (row.hotkey, row.task_key): (row.status, row.valid, row.score)
            for row in found
            if row.hotkey != stuck
        }

    assert others(rows) == others(clean_rows) and len(others(rows)) == 2 * (3 + 2)
