"""The dashboard over HTTP: leaderboard figures, escaping, hidden running rounds, headers, errors."""

from __future__ import annotations

import asyncio
import re
import socket
import statistics
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db import create_engine, sqlite_url
from subnet.validator.dashboard import (
    DashboardServer,
    DashboardStartError,
    allowed_host_names,
    request_host_name,
    start_dashboard,
)


async def fetch(server: DashboardServer, path: str) -> tuple[int, dict[str, str], str]:
    async with aiohttp.ClientSession() as session, session.get(server.url.rstrip("/") + path) as response:
        return response.status, dict(response.headers), await response.text()


async def test_api_leaderboard_matches_the_stored_standings(dashboard: DashboardServer, seeded: Any) -> None:
    status, headers, _ = await fetch(dashboard, "/api/leaderboard")
    assert status == 200
    assert headers["Content-Type"].startswith("application/json")
    async with aiohttp.ClientSession() as session, session.get(dashboard.url + "api/leaderboard") as response:
        body = await response.json()
    rows = body["rows"]
    assert [row["hotkey"] for row in rows] == [
        seeded.good,
        seeded.fair,
        seeded.hostile,
    ]  # best moving average first
    assert [row["rank"] for row in rows] == [1, 2, 3]
    for row in rows:
        hotkey = row["hotkey"]
        assert row["uid"] == seeded.uids[hotkey]
        assert row["moving_average"] == pytest.approx(seeded.moving_averages[hotkey])
        assert row["rounds_scored"] == 4
        assert row["responses"] == 12 + len(seeded.episodes)  # 4 rounds x 3 tasks, and the episodes
        assert row["latency_p50_s"] == pytest.approx(statistics.median(seeded.latencies[hotkey]))
        assert set(row["category_accuracy"]) == {
            "simple",
            "parallel",
            "irrelevance",
            *(episode.category for episode in seeded.episodes.values()),
        }
    by_hotkey = {row["hotkey"]: row for row in rows}
    assert by_hotkey[seeded.good]["valid_rate"] == 1.0
    assert by_hotkey[seeded.hostile]["valid_rate"] == 0.0
    assert by_hotkey[seeded.fair]["valid_rate"] == pytest.approx(
        6 / (12 + len(seeded.episodes))
    )  # no episode passed
    assert by_hotkey[seeded.good]["category_accuracy"]["multi_turn_base"] == 1.0
    assert by_hotkey[seeded.fair]["category_accuracy"]["agent_step"] == 0.0
    assert by_hotkey[seeded.good]["category_accuracy"]["simple"] == 1.0
    # The latest accepted submission, not the failed attempt after it.
    assert by_hotkey[seeded.good]["weight"] == pytest.approx(0.8)
    assert by_hotkey[seeded.fair]["weight"] == pytest.approx(0.2)
    assert by_hotkey[seeded.hostile]["weight"] is None
    assert body["last_weights"]["outcome"] == "error"
    assert body["alpha"] == seeded.alpha
    categories = {row["category"]: row for row in body["categories"]}
    assert categories["simple"]["total"] == 12  # 3 miners x 4 scored rounds
    assert categories["irrelevance"]["accuracy"] == pytest.approx(categories["irrelevance"]["valid"] / 12)


async def test_page_lists_every_miner_in_the_leaderboard(dashboard: DashboardServer, seeded: Any) -> None:
    status, headers, page = await fetch(dashboard, "/")
    assert status == 200
    assert headers["Content-Type"].startswith("text/html")
    leaderboard = re.search(r'<table id="leaderboard">.*?</table>', page, re.S)
    assert leaderboard is not None
    rows = re.findall(r'<tr data-hotkey="([^"]+)">', leaderboard.group(0))
    assert rows == [seeded.good, seeded.fair, seeded.hostile]
    assert 'id="chart-moving-averages"' in page
    assert 'id="chart-weights"' in page
    assert page.count("<polyline") >= 3 + 2  # three averages, two weighted miners


async def test_rounds_say_where_their_requests_came_from(dashboard: DashboardServer, seeded: Any) -> None:
    status, _, page = await fetch(dashboard, "/")
    assert status == 200
    rows = {int(m.group(1)): m.group(2) for m in re.finditer(r'<tr data-round="(\d+)"(.*?)</tr>', page, re.S)}
    assert "template text (no phrasing engine)" in rows[1]
    assert "openai: 5 of 6 phrased, 3 retried, 2 dropped, 1 unfilled" in rows[2]
    assert "phrased" not in rows[3] and "template" not in rows[3]


async def test_miner_output_is_escaped_everywhere(dashboard: DashboardServer, seeded: Any) -> None:
    _, _, page = await fetch(dashboard, "/")
    assert seeded.hostile_output not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown, as text
    assert seeded.hostile_error_type not in page
    assert "onerror=alert(2)&gt;" in page
    assert "<script" not in page.lower()  # the page itself has no script at all
    assert "<img" not in page.lower()


async def test_a_running_round_shows_no_task_and_no_answer(dashboard: DashboardServer, seeded: Any) -> None:
    _, _, page = await fetch(dashboard, "/")
    _, _, api = await fetch(dashboard, "/api/leaderboard")
    for text in (page, api):
        assert seeded.running_prompt not in text
        assert seeded.running_answer not in text
    # The round itself is listed, marked running, without its figures.
    running = re.search(r'<tr data-round="6" data-status="running">.*?</tr>', page, re.S)
    assert running is not None
    assert "hidden until the round ends" in running.group(0)
    # Finished rounds' samples are there: the latest scored ones and the discarded one.
    shown = set(re.findall(r'<details class="sample" data-round="(\d+)"', page))
    assert shown == {"5", "4", "3"}
    assert "Paris? (round 4, task 0)" in page


async def test_every_response_carries_the_security_headers(dashboard: DashboardServer) -> None:
    for path, expected in (
        ("/", 200),
        ("/api/leaderboard", 200),
        ("/static/dashboard.css", 200),
        ("/nope", 404),
        ("/episode?round=6", 404),
    ):
        status, headers, _ = await fetch(dashboard, path)
        assert status == expected, path
        csp = headers["Content-Security-Policy"]
        assert "default-src 'self'" in csp and "script-src 'none'" in csp, path
        assert headers["X-Content-Type-Options"] == "nosniff", path
        assert headers["X-Frame-Options"] == "DENY", path


async def test_writes_are_refused(dashboard: DashboardServer) -> None:
    async with aiohttp.ClientSession() as session, session.post(dashboard.url, data=b"x") as response:
        assert response.status == 405


async def test_a_taken_port_is_one_clear_error(validator_engine: AsyncEngine, seeded: Any) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(DashboardStartError, match=rf"127\.0\.0\.1:{port}.*--dashboard\.port"):
            await start_dashboard(validator_engine, host="127.0.0.1", port=port, alpha=seeded.alpha)


async def test_an_unreadable_database_answers_503(tmp_path: Path, seeded: Any) -> None:
    # A database without the validator's tables (never migrated): the page says so in one line.
    engine = create_engine(sqlite_url(tmp_path / "empty.sqlite3"))
    server = await start_dashboard(engine, host="127.0.0.1", port=0, alpha=seeded.alpha)
    try:
        status, headers, body = await fetch(server, "/")
    finally:
        await server.stop()
        await engine.dispose()
    assert status == 503
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert body == "the validator's database cannot be read right now"


async def _get_with_host(server: DashboardServer, path: str, host: str | None) -> tuple[int, str]:
    """A raw request with exactly this Host header (or none), as a rebound page's script sends it."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    try:
        # HTTP/1.1 requires a Host (the parser refuses one without); HTTP/1.0 may leave it out.
        request = f"GET {path} HTTP/1.0\r\n" if host is None else f"GET {path} HTTP/1.1\r\nHost: {host}\r\n"
        writer.write(f"{request}Connection: close\r\n\r\n".encode())
        raw = await reader.read()
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body.decode(errors="replace")


@pytest.mark.parametrize("path", ["/", "/api/leaderboard", "/static/dashboard.css", "/episode?round=4"])
@pytest.mark.parametrize("host", ["evil.example.com", "evil.example.com:8000", "127.0.0.1.evil.com", None])
async def test_a_foreign_host_name_is_refused(
    dashboard: DashboardServer, path: str, host: str | None
) -> None:
    status, body = await _get_with_host(dashboard, path, host)
    assert status == 403
    assert "unknown Host" in body and "--dashboard.allowed_hosts" in body


@pytest.mark.parametrize("host", ["127.0.0.1", "LOCALHOST:8000", "[::1]:8000", "localhost"])
async def test_loopback_names_are_served(dashboard: DashboardServer, host: str) -> None:
    status, _ = await _get_with_host(dashboard, "/api/leaderboard", host)
    assert status == 200


async def test_names_given_by_the_operator_are_served(validator_engine: AsyncEngine) -> None:
    server = await start_dashboard(
        validator_engine, host="127.0.0.1", port=0, alpha=0.1, allowed_hosts=("validator.example.org",)
    )
    try:
        assert (await _get_with_host(server, "/api/leaderboard", "Validator.Example.org:8000"))[0] == 200
        assert (await _get_with_host(server, "/api/leaderboard", "other.example.org"))[0] == 403
    finally:
        await server.stop()


def test_host_names_are_read_without_their_port() -> None:
    assert request_host_name("Example.COM:8000") == "example.com"
    assert request_host_name("[::1]:8000") == "::1"
    assert request_host_name("::1") == "::1"
    assert allowed_host_names("0.0.0.0", ["a.b"]) >= {"localhost", "127.0.0.1", "::1", "0.0.0.0", "a.b"}
