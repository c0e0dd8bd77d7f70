"""The dashboard's reads: replayed moving averages, bounded queries, read-only access, an empty database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from subnet.db import create_engine, sqlite_url, upgrade
from subnet.validator.dashboard import (
    DashboardLimits,
    DashboardReader,
    element,
    escape,
    read_only_engine,
    render_page,
    replay_moving_averages,
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


def test_escaping_is_the_default() -> None:
    assert escape("<b>&\"'") == "&lt;b&gt;&amp;&quot;&#x27;"
    built = element("td", "<i>", title='"><script>', class_="x", data_hotkey="a&b")
    assert built == '<td title="&quot;&gt;&lt;script&gt;" class="x" data-hotkey="a&amp;b">&lt;i&gt;</td>'
    # Markup that was built here nests as is; a plain str concatenated to it is escaped again.
    assert element("p", built) == f"<p>{built}</p>"
    assert element("p", built + "<x>").startswith("<p>&lt;td")
