"""The dashboard on PostgreSQL: the same queries, in read-only REPEATABLE READ transactions."""

from __future__ import annotations

from collections.abc import Iterator

import aiohttp
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from subnet.db import create_engine
from subnet.validator.dashboard import episode_href, start_dashboard
from tests.support.postgres import PostgresCluster, PostgresUnavailable, create_database, start_cluster

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    try:
        running = start_cluster()
    except PostgresUnavailable as exc:
        pytest.skip(f"no throwaway PostgreSQL: {exc}")
    try:
        yield running
    finally:
        running.stop()


async def test_dashboard_reads_postgres_and_cannot_write(
    cluster: PostgresCluster, fill_database: object
) -> None:
    url = create_database(cluster, "dashboard")
    seeded = await fill_database(url)  # type: ignore[operator]
    engine = create_engine(url)
    server = await start_dashboard(engine, host="127.0.0.1", port=0, alpha=seeded.alpha)
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(server.url + "api/leaderboard") as response:
                assert response.status == 200
                rows = (await response.json())["rows"]
            async with session.get(server.url) as response:
                page = await response.text()
            # An episode's transcript (with its 1 MB observation) and a running round's episode.
            key = next(key for key, e in seeded.episodes.items() if e.category == "multi_turn_base")
            async with session.get(server.url.rstrip("/") + episode_href(4, key, seeded.hostile)) as response:
                assert response.status == 200
                assert "cut: 1,048,576 characters" in await response.text()
            running = episode_href(6, seeded.running_episode, seeded.good)
            async with session.get(server.url.rstrip("/") + running) as response:
                assert response.status == 404
        assert [row["hotkey"] for row in rows] == [seeded.good, seeded.fair, seeded.hostile]
        assert rows[0]["moving_average"] == pytest.approx(seeded.moving_averages[seeded.good])
        assert seeded.running_prompt not in page and seeded.hostile_output not in page
        assert server.engine is not None
        async with server.engine.connect() as connection:
            connection = await connection.execution_options(postgresql_readonly=True)
            with pytest.raises(DBAPIError, match="read-only transaction"):
                await connection.execute(text("DELETE FROM rounds"))
    finally:
        await server.stop()
        await engine.dispose()
