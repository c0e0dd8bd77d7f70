"""The dashboard's reads: replayed moving averages, bounded queries, read-only access, an empty database."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp_jinja2
import jinja2
import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from subnet.db import create_engine, sqlite_url, upgrade
from subnet.localnet.leaderboard import MinerInfo, database_rows, last_weights
from subnet.validator.dashboard import (
    DashboardLimits,
    DashboardReader,
    Snapshot,
    build_app,
    episode_href,
    read_only_engine,
    render_page,
    replay_moving_averages,
)
from subnet.validator.dashboard.chart import Chart, Series
from subnet.validator.dashboard.pages import FILTERS, environment, page_context, template_options
from subnet.validator.dashboard.snapshot import (
    CategoryRow,
    LeaderboardRow,
    RoundRow,
    SampleAnswer,
    SampleTask,
    WeightRow,
)
from subnet.validator.state import update_moving_average


def forward(means: list[float], alpha: float) -> list[float]:
    values, average = [], 0.0
    for mean in means:
        average = update_moving_average(average, mean, alpha)
        values.append(average)
    return values


@pytest.mark.parametrize("alpha", [0.1, 0.3, 0.9])
def test_backward_replay_recovers_the_forward_history(alpha: float) -> None:
    means = [0.2, 0.9, 0.5, 1.0, 0.0, 0.75]
    history = forward(means, alpha)
    # A window of the last three rounds, anchored at the stored final average.
    window = replay_moving_averages(means[3:], alpha=alpha, final=history[-1], complete=False)
    assert window == pytest.approx(history[3:])
    assert replay_moving_averages(means, alpha=alpha, final=history[-1], complete=True) == pytest.approx(
        history
    )


def test_replay_edge_cases() -> None:
    assert replay_moving_averages([], alpha=0.1, final=0.5, complete=False) == []
    assert replay_moving_averages([0.3, 0.6], alpha=1.0, final=0.6, complete=False) == [0.3, 0.6]
    # An alpha that does not match the stored average cannot send values outside [0, 1].
    values = replay_moving_averages([1.0] * 10, alpha=0.5, final=0.0, complete=False)
    assert all(0.0 <= value <= 1.0 for value in values)


async def test_chart_history_ends_at_the_stored_averages(seeded: Any) -> None:
    engine = create_engine(seeded.url)
    try:
        full = await DashboardReader(engine, alpha=seeded.alpha).snapshot()
        windowed = await DashboardReader(
            engine, alpha=seeded.alpha, limits=DashboardLimits(history_rounds=2)
        ).snapshot()
    finally:
        await engine.dispose()
    for chart in (full.moving_average_chart, windowed.moving_average_chart):
        lines = {line.label: line for line in chart.series}
        assert set(lines) == {seeded.good, seeded.fair, seeded.hostile}
        for hotkey, line in lines.items():
            expected = seeded.history[hotkey][-len(line.points) :]
            assert [value for _, value in line.points] == pytest.approx(expected)
            assert line.points[-1][0] == 4.0  # the last scored round's number
    assert all(len(line.points) == 4 for line in full.moving_average_chart.series)
    assert all(len(line.points) == 2 for line in windowed.moving_average_chart.series)
    weights = {line.label: [value for _, value in line.points] for line in full.weight_chart.series}
    assert weights == {seeded.good: pytest.approx([0.7, 0.8]), seeded.fair: pytest.approx([0.3, 0.2])}


async def test_limits_bound_what_is_read(seeded: Any) -> None:
    limits = DashboardLimits(
        leaderboard_rows=2,
        recent_rounds=2,
        sample_rounds=1,
        sample_tasks_per_round=1,
        sample_episodes_per_round=1,
        answers_per_task=1,
        weight_rows=1,
        chart_series=1,
        raw_output_chars=5,
    )
    engine = create_engine(seeded.url)
    try:
        snapshot = await DashboardReader(engine, alpha=seeded.alpha, limits=limits).snapshot()
    finally:
        await engine.dispose()
    assert [row.hotkey for row in snapshot.leaderboard] == [seeded.good, seeded.fair]
    assert [row.number for row in snapshot.rounds] == [6, 5]
    # The round's first task and its one episode, one answer each.
    assert [(sample.round_number, len(sample.answers)) for sample in snapshot.samples] == [(5, 1), (5, 1)]
    assert snapshot.samples[0].answers[0].raw_output == "[get_"
    assert snapshot.samples[0].answers[0].truncated
    episode = snapshot.samples[1]
    assert episode.is_episode and episode.task_key == seeded.discarded_episode
    assert episode.answers[0].transcript_href == (
        f"/episode?round=5&task={seeded.discarded_episode}&hotkey={seeded.good}"
    )
    assert len(snapshot.weights) == 1
    assert len(snapshot.moving_average_chart.series) == 1


async def test_the_dashboard_engine_cannot_write(seeded: Any) -> None:
    engine = create_engine(seeded.url)
    reader_engine = read_only_engine(engine)
    assert reader_engine is not None
    try:
        async with reader_engine.connect() as connection:
            assert (await connection.execute(text("SELECT count(*) FROM rounds"))).scalar() == 6
            with pytest.raises(OperationalError, match="readonly"):
                await connection.execute(text("DELETE FROM rounds"))
    finally:
        await reader_engine.dispose()
        await engine.dispose()


async def test_an_empty_database_renders_empty_states(tmp_path: Path, seeded: Any) -> None:
    url = sqlite_url(tmp_path / "fresh.sqlite3")
    await upgrade(url)
    engine = create_engine(url)
    try:
        snapshot = await DashboardReader(engine, alpha=seeded.alpha).snapshot()
    finally:
        await engine.dispose()
    assert snapshot.leaderboard == [] and snapshot.rounds == [] and snapshot.samples == []
    page = render_page(snapshot)
    assert "No miner has been scored yet." in page
    assert "Nothing to draw yet." in page
    assert 'id="chart-moving-averages"' in page


HOSTILE = '"><script>alert(9)</script><img src=x onerror=alert(8)>'


def hostile_snapshot() -> Snapshot:
    """A snapshot whose every miner- or store-supplied string is markup."""
    answer = SampleAnswer(
        hotkey=HOSTILE,
        uid=1,
        status=HOSTILE,
        valid=False,
        score=0.0,
        error_type=HOSTILE,
        latency_s=0.1,
        raw_output=HOSTILE,
        truncated=True,
    )
    episode_answer = replace(answer, transcript_href=episode_href(1, HOSTILE, HOSTILE))
    series = [Series(label=HOSTILE, points=[(1.0, 0.5), (2.0, 0.7)])]
    return Snapshot(
        generated_at=datetime.now(UTC),
        alpha=0.3,
        leaderboard=[LeaderboardRow(1, HOSTILE, 1, 0.5, 2, 4, 0.5, {HOSTILE: 0.5, "simple": 1.0}, 0.2, 0.1)],
        categories=[CategoryRow(HOSTILE, 2, 1, 0.5)],
        rounds=[RoundRow(1, HOSTILE, 10, 1, 1, None, None, HOSTILE, HOSTILE, 1, 0, 0.0)],
        samples=[
            SampleTask(1, HOSTILE, HOSTILE, HOSTILE, HOSTILE, [HOSTILE], HOSTILE, [answer]),
            SampleTask(
                1,
                HOSTILE,
                HOSTILE,
                "multi_turn_base",
                HOSTILE,
                [HOSTILE],
                HOSTILE,
                [episode_answer],
                HOSTILE,
                2,
            ),
        ],
        weights=[WeightRow(None, None, HOSTILE, 1, HOSTILE)],
        moving_average_chart=Chart("moving-averages", HOSTILE, "round", 1.0, series, [(1.0, HOSTILE)]),
        weight_chart=Chart("weights", HOSTILE, "submission", 1.0, series, [(1.0, HOSTILE)]),
    )


def test_the_templates_escape_every_hostile_string() -> None:
    page = render_page(hostile_snapshot())
    lowered = page.lower()
    assert "<script" not in lowered and "<img" not in lowered
    assert 'data-hotkey="&#34;&gt;&lt;script&gt;' in page  # attributes too: none was broken out of
    assert "&lt;script&gt;alert(9)&lt;/script&gt;" in page  # shown, as text
    # Every place it was put: leaderboard, categories, rounds, samples, answers, weights, charts.
    assert page.count("alert(9)") >= 20
    assert page.count("<polyline") == 2


def test_autoescape_is_what_escapes_them() -> None:
    """The same templates with autoescape off would put the markup on the page: nothing else
    stands between a miner's string and the HTML."""
    options = {**template_options(), "autoescape": False}
    unescaped = jinja2.Environment(**options)
    unescaped.filters.update(FILTERS)
    page = unescaped.get_template("index.html").render(page_context(hostile_snapshot()))
    assert "<script>alert(9)</script>" in page
    assert environment().autoescape is True
    app = build_app(DashboardReader(create_engine("sqlite+aiosqlite://"), alpha=0.1))
    assert aiohttp_jinja2.get_env(app).autoescape is True


async def test_the_localnet_leaderboard_reads_what_the_dashboard_shows(seeded: Any) -> None:
    """The localnet leaderboard reads through the dashboard's queries: the same standings."""
    miners = [MinerInfo(f"miner{uid}", hotkey, uid, "hermes") for hotkey, uid in seeded.uids.items()]
    engine = create_engine(seeded.url)
    try:
        snapshot = await DashboardReader(engine, alpha=seeded.alpha).snapshot()
        rows = await database_rows(engine, miners)
        accepted, outcomes = await last_weights(engine)
    finally:
        await engine.dispose()
    shown = {row.hotkey: row for row in snapshot.leaderboard}
    for row in rows:
        standing = shown[row.miner.hotkey]
        assert row.score == standing.moving_average and row.rounds == standing.rounds_scored
        assert row.total == standing.responses
        accuracy = {name: valid / total for name, (valid, total) in row.categories.items() if total}
        assert accuracy == standing.category_accuracy
    assert accepted is not None and accepted.block == 250
    assert accepted.weights_by_hotkey() == pytest.approx(seeded.latest_weights)
    assert outcomes == ["ok", "ok", "error: chain unreachable"]
