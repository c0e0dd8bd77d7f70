"""Progress (finished rounds from the database, lines from the validator's log) and the leaderboard,
against a real SQLite database migrated with the project's Alembic history."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db import (
    CategoryScore,
    ResponseRecord,
    Round,
    RoundStatus,
    ScoreState,
    TaskRecord,
    WeightSubmission,
    create_engine,
    session_factory,
    sqlite_url,
    upgrade,
)
from subnet.localnet.leaderboard import (
    LEGEND,
    MinerInfo,
    Row,
    chain_standing,
    database_rows,
    last_weights,
    normalised_row,
    render,
    short_hotkey,
    with_chain,
)
from subnet.localnet.progress import (
    LogFollower,
    RoundWatcher,
    answers_in_flight,
    last_round_number,
    progress_line,
)
from subnet.localnet.run import Localnet
from subnet.localnet.settings import parse_settings
from tests.support.postgres import PostgresCluster, PostgresUnavailable, create_database, start_cluster

ALICE = "5" + "A" * 47
BOB = "5" + "B" * 47
MINERS = [MinerInfo("miner1", ALICE, 2, "hermes"), MinerInfo("miner2", BOB, 3, "json")]
T0 = datetime(2026, 1, 1, tzinfo=UTC)


_database_names = itertools.count()


@pytest.fixture(scope="module")
def pg_cluster() -> Iterator[PostgresCluster]:
    try:
        cluster = start_cluster()
    except PostgresUnavailable as exc:
        pytest.skip(f"no throwaway PostgreSQL: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest_asyncio.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """A database migrated the way the localnet does it, on SQLite and on PostgreSQL."""
    if request.param == "postgres":
        cluster = request.getfixturevalue("pg_cluster")
        url = create_database(cluster, f"localnet_{next(_database_names)}")
    else:
        url = sqlite_url(tmp_path / "validator.sqlite")
    localnet = Localnet(parse_settings(["--state.dir", str(tmp_path / "state"), "--db.url", url]), out=print)
    await localnet.prepare_database()
    if request.param == "sqlite":
        await upgrade(url)  # the validator does this itself for SQLite; the localnet leaves it alone
    engine = create_engine(url)
    yield engine
    await engine.dispose()


async def _add_round(
    engine: AsyncEngine,
    number: int,
    status: str,
    answers: dict[str, list[tuple[str, bool, float]]] | dict[str, list[tuple[str, bool, float, str | None]]],
) -> None:
    """A round with one task per answer; answers: hotkey -> [(category, valid, score[, error type])]."""
    async with session_factory(engine).begin() as session:
        round_ = Round(
            number=number,
            netuid=1,
            block=100 * number,
            block_hash="0x0",
            seed_commitment="c",
            status=status,
            n_tasks=max(len(a) for a in answers.values()),
            started_at=T0,
            finished_at=T0 + timedelta(seconds=42),
        )
        session.add(round_)
        await session.flush()
        for hotkey, rows in answers.items():
            for index, (category, valid, score, *error_type) in enumerate(rows):
                task = TaskRecord(
                    round_id=round_.id,
                    task_key=f"{hotkey}-{index}",
                    category=category,
                    scoring_category=category,
                    payload={},
                    expected=[],
                )
                session.add(task)
                await session.flush()
                session.add(
                    ResponseRecord(
                        round_id=round_.id,
                        task_id=task.id,
                        hotkey=hotkey,
                        uid=2,
                        category=category,
                        status="ok" if score >= 0 else "timeout",
                        latency_s=1.0 + index,
                        valid=valid,
                        score=max(score, 0.0),
                        error_type=error_type[0] if error_type else None,
                    )
                )


async def test_round_watcher_reports_each_finished_round_once(engine: AsyncEngine) -> None:
    assert await last_round_number(engine) == 0
    watcher = RoundWatcher(engine, {ALICE: "miner1", BOB: "miner2"}, after_number=0)
    assert await watcher.poll() == []
    await _add_round(
        engine,
        1,
        RoundStatus.SCORED.value,
        {ALICE: [("simple", True, 1.0), ("irrelevance", False, 0.0)], BOB: [("simple", False, 0.5)]},
    )
    # An answer from a hotkey this run does not run (a miner of an earlier run) is not counted.
    stranger = "5" + "C" * 47
    await _add_round(
        engine,
        2,
        RoundStatus.RUNNING.value,
        {ALICE: [("simple", True, 1.0)], stranger: [("simple", True, 1.0)]},
    )
    (first,) = await watcher.poll()
    assert first.number == 1 and first.seconds == 42
    assert first.miners == {"miner1": (0.5, 1, 2), "miner2": (0.5, 0, 1)}
    assert first.describe() == (
        "round 1 scored in 42 s, 2 tasks: miner1 0.50 (1/2 valid), miner2 0.50 (0/1 valid)"
    )
    assert await watcher.poll() == []
    assert await last_round_number(engine) == 2
    assert await answers_in_flight(engine, [ALICE, BOB]) == (2, 1)


async def test_a_round_with_episodes_reports_them_and_scores_as_the_validator(engine: AsyncEngine) -> None:
    await _add_round(
        engine,
        1,
        RoundStatus.SCORED.value,
        {
            # One task right, one episode passed and one failed: tasks and episodes weigh half each.
            ALICE: [("simple", True, 1.0), ("multi_turn_base", True, 1.0), ("agent_step", False, 0.0)],
            # A forbidden action in an episode: the whole round scores 0.
            BOB: [("simple", True, 1.0), ("multi_turn_base", False, 0.0, "multi_turn:unsafe")],
        },
    )
    (result,) = await RoundWatcher(engine, {ALICE: "miner1", BOB: "miner2"}, 0).poll()
    assert result.n_episodes == 2  # the most any miner played (every miner's are stored)
    assert result.miners == {"miner1": (0.75, 2, 3), "miner2": (0.0, 1, 2)}
    assert result.episodes == {"miner1": (1, 2), "miner2": (0, 1)}
    assert result.describe() == (
        "round 1 scored in 42 s, 1 task + 2 episodes: "
        "miner1 0.75 (2/3 valid, episodes 1/2), miner2 0.00 (1/2 valid, episodes 0/1)"
    )


async def test_a_discarded_round_is_reported_as_such(engine: AsyncEngine) -> None:
    await _add_round(engine, 1, RoundStatus.DISCARDED.value, {ALICE: [("simple", False, 0.0)]})
    (result,) = await RoundWatcher(engine, {}, 0).poll()
    assert result.describe() == "round 1 discarded in 42 s"


async def test_watcher_on_a_database_without_tables(tmp_path: Path) -> None:
    engine = create_engine(sqlite_url(tmp_path / "empty.sqlite"))
    try:
        assert await RoundWatcher(engine, {}, 0).poll() == []
        assert await answers_in_flight(engine, [ALICE]) is None
        assert await last_round_number(engine) == 0
    finally:
        await engine.dispose()


async def test_database_rows_and_last_weights(engine: AsyncEngine) -> None:
    await _add_round(
        engine,
        1,
        RoundStatus.SCORED.value,
        {ALICE: [("simple", True, 1.0), ("irrelevance", True, 1.0), ("parallel", False, -1.0)]},
    )
    async with session_factory(engine).begin() as session:
        session.add(
            ScoreState(
                hotkey=ALICE,
                uid=2,
                moving_average=0.42,
                rounds_scored=1,
                responses_total=3,
                responses_valid=2,
            )
        )
        session.add(CategoryScore(hotkey=ALICE, category="simple", total=1, valid=1, score_sum=1.0))
        session.add(CategoryScore(hotkey=ALICE, category="irrelevance", total=2, valid=1, score_sum=1.0))
        session.add(
            WeightSubmission(
                block=10,
                uids=[2],
                weights=[1.0],
                hotkeys=[ALICE],
                outcome="no_weights",
                message="no hotkey qualifies yet",
            )
        )
        session.add(WeightSubmission(block=30, uids=[2], weights=[1.0], hotkeys=[ALICE], outcome="ok"))
    first, second = await database_rows(engine, MINERS)
    assert (first.score, first.rounds, first.valid, first.total) == (0.42, 1, 2, 3)
    assert first.categories == {"simple": (1, 1), "irrelevance": (1, 2)}
    assert first.latency_s == 1.5  # median of the answered ones (1.0, 2.0); the timeout is left out
    assert second.score is None and second.total == 0 and second.latency_s is None
    accepted, outcomes = await last_weights(engine)
    assert accepted is not None and accepted.block == 30
    assert outcomes == ["no_weights: no hotkey qualifies yet", "ok"]
    none_after, _ = await last_weights(engine, since_id=accepted.id)
    assert none_after is None


def test_chain_standing_and_table() -> None:
    assert normalised_row([(2, 65535), (3, 21845)]) == {2: 0.75, 3: 0.25}
    assert normalised_row([]) == {}
    graph = {"block": 250, "last_step": 240, "incentives": [0, 0, 49151, 16384, 0]}
    chain = chain_standing(graph, [(2, 65535), (3, 21845)])
    assert chain.last_epoch_block == 240 and chain.incentives[2] == pytest.approx(0.75, abs=1e-4)
    rows = with_chain(
        [
            Row(MINERS[1], score=0.1, valid=1, total=6, categories={"irrelevance": (1, 1)}),
            Row(
                MINERS[0],
                score=0.5,
                valid=3,
                total=6,
                categories={"simple": (2, 2), "irrelevance": (1, 1)},
                latency_s=3.25,
            ),
        ],
        chain,
    )
    assert [row.miner.label for row in rows] == ["miner1", "miner2"]  # best score first
    assert rows[0].weight == 0.75 and rows[1].weight == 0.25
    table = render(rows).splitlines()
    assert table[0].split() == [
        "#",
        "uid",
        "miner",
        "hotkey",
        "format",
        "score",
        "valid",
        "simple",
        "irrel",
        "latency",
        "weight",
        "incentive",
    ]
    assert table[2].split() == [
        "1",
        "2",
        "miner1",
        short_hotkey(ALICE),
        "hermes",
        "0.500",
        "3/6",
        "2/2",
        "1/1",
        "3.2s",
        "0.750",
        "0.750",
    ]
    assert table[3].split()[7:9] == ["-", "1/1"]


async def test_episode_columns_follow_the_single_turn_ones(engine: AsyncEngine) -> None:
    # ALICE: two single-turn answers (1 s, 2 s) and two episodes that took long in all.
    await _add_round(
        engine,
        1,
        RoundStatus.SCORED.value,
        {
            ALICE: [
                ("simple", True, 1.0),
                ("irrelevance", True, 1.0),
                ("multi_turn_base", True, 1.0),
                ("agent_step", False, 0.0),
            ]
        },
    )
    async with session_factory(engine).begin() as session:
        session.add(
            ScoreState(
                hotkey=ALICE, uid=2, moving_average=0.5, rounds_scored=1, responses_total=4, responses_valid=3
            )
        )
        for category, valid in [("simple", 1), ("irrelevance", 1), ("multi_turn_base", 1), ("agent_step", 0)]:
            session.add(CategoryScore(hotkey=ALICE, category=category, total=1, valid=valid, score_sum=valid))
    first, second = await database_rows(engine, MINERS)
    assert first.latency_s == 1.5  # the single-turn answers only: an episode's row times many requests
    second.categories = {"parallel": (0, 1), "multi_turn_miss_func": (1, 1), "custom_kind": (1, 2)}
    table = render(with_chain([first, second], None)).splitlines()
    header = table[0].split()
    assert header[7:-3] == ["simple", "par", "irrel", "custom_kind", "mt-base", "mt-miss-func", "agent-step"]
    assert table[2].split()[7:14] == ["1/1", "-", "1/1", "-", "1/1", "-", "0/1"]
    assert table[3].split()[7:14] == ["-", "0/1", "-", "1/2", "-", "1/1", "-"]
    assert "mt-*: multi-turn episodes" in LEGEND and "agent-step" in LEGEND


def test_the_format_column_says_which_miners_are_guided() -> None:
    guided = MinerInfo("miner3", BOB, 4, "json", guided="on")
    assert (guided.setup, MINERS[0].setup) == ("json+guided", "hermes")
    grounded, forced = (
        MinerInfo("miner4", BOB, 5, fmt, guided=mode)
        for fmt, mode in [("json", "grounded"), ("hermes", "forced")]
    )
    assert (grounded.setup, forced.setup) == ("json+grounded", "hermes+forced")
    table = render(with_chain([Row(guided, score=0.5), Row(MINERS[0], score=0.25)], None)).splitlines()
    assert [line.split()[2:5:2] for line in table[2:]] == [["miner3", "json+guided"], ["miner1", "hermes"]]


def test_a_leaderboard_without_chain_or_scores() -> None:
    rows = with_chain([Row(MINERS[0])], None)
    line = render(rows).splitlines()[2].split()
    assert line[5:] == ["-", "0/0", "-", "-", "-"]


def test_progress_lines_from_the_validator_log(tmp_path: Path) -> None:
    assert progress_line(
        "2026-11-21 05:55:20,482 INFO    subnet.validator.rounds: round 3 (block 9): 6 tasks, 3 miners"
    ) == ("round 3 (block 9): 6 tasks, 3 miners")
    assert progress_line("2026-11-21 05:55:20,482 WARNING subnet.validator.weights: weights no_weights") == (
        "warning: weights no_weights"
    )
    assert progress_line("2026-11-21 05:55:20,482 INFO    subnet.transport.client: chatter") is None
    assert progress_line("Loading weights: 100%") is None
    log = tmp_path / "v.log"
    log.write_bytes(b"old\n")
    follower = LogFollower(log, offset=4)
    assert follower.new_lines() == []
    with log.open("ab") as handle:
        handle.write(b"one\ntw")
    assert follower.new_lines() == ["one"]
    with log.open("ab") as handle:
        handle.write(b"o\n")
    assert follower.new_lines() == ["two"]
    assert LogFollower(tmp_path / "missing.log").new_lines() == []


async def test_a_round_line_names_its_failures_episode_timeouts_too(engine: AsyncEngine) -> None:
    await _add_round(
        engine,
        1,
        RoundStatus.SCORED.value,
        # score -1: stored with status timeout (see _add_round)
        {ALICE: [("simple", True, 1.0), ("multi_turn_base", False, -1.0), ("simple", False, -1.0)]},
    )
    (result,) = await RoundWatcher(engine, {ALICE: "miner1"}, 0).poll()
    assert result.describe().endswith("; failed: episode timeout x1, timeout x1"), result.describe()
