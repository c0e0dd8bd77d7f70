"""Multi-turn episodes on the dashboard: their categories as columns and rows after the single-turn
ones, each finished episode answer linked to its transcript page, and that page: the episode,
the miner's steps, the verdict; escaped, bounded, and 404 for anything it should not show."""

from __future__ import annotations

import html
import json
import re
from typing import Any
from urllib.parse import quote

import aiohttp
import markupsafe
from multidict import MultiDict

from subnet.db import create_engine
from subnet.validator.dashboard import (
    DashboardLimits,
    DashboardReader,
    DashboardServer,
    EpisodeQuery,
    episode_href,
    order_categories,
    parse_episode_query,
    read_episode,
    render_episode_page,
)

SINGLE_TURN = ["simple", "parallel", "irrelevance"]
EPISODE_TITLES = {
    "multi_turn_base": "multi-turn",
    "multi_turn_miss_param": "multi-turn: missing param",
    "multi_turn_miss_func": "multi-turn: missing function",
    "agent_step": "agent step",
}
# The page of a single episode answer, escaped markup included, stays well under this.
PAGE_CAP_BYTES = 400_000


async def fetch(server: DashboardServer, path: str) -> tuple[int, dict[str, str], str]:
    async with aiohttp.ClientSession() as session, session.get(server.url.rstrip("/") + path) as response:
        return response.status, dict(response.headers), await response.text()


def episode_key(seeded: Any, category: str) -> str:
    return next(key for key, episode in seeded.episodes.items() if episode.category == category)


def escaped(text: str) -> str:
    """``text`` as the pages' templates print it (Jinja2's autoescape: markupsafe)."""
    return str(markupsafe.escape(text))


def text_of(page: str) -> str:
    """The page's text as a reader sees it (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


# -- categories ---------------------------------------------------------------------------------


def test_episode_categories_come_after_the_single_turn_ones() -> None:
    names = [
        "agent_step",
        "multi_turn_base",
        "irrelevance",
        "live_simple",
        "simple",
        "multi_turn_long_context",
    ]
    assert order_categories(names) == [
        "simple",
        "irrelevance",
        "live_simple",  # an unknown single-turn category: after the known ones, before any episode
        "multi_turn_base",
        "multi_turn_long_context",
        "agent_step",
    ]


async def test_the_leaderboard_has_a_column_per_episode_category(
    dashboard: DashboardServer, seeded: Any
) -> None:
    status, _, page = await fetch(dashboard, "/")
    assert status == 200
    leaderboard = re.search(r'<table id="leaderboard">.*?</table>', page, re.S)
    assert leaderboard is not None
    header = re.search(r"<thead>.*?</thead>", leaderboard.group(0), re.S)
    assert header is not None
    columns = re.findall(r'data-category="([^"]+)"', header.group(0))
    assert columns == [*SINGLE_TURN, *EPISODE_TITLES]
    for name, title in EPISODE_TITLES.items():
        assert f'title="episodes: {name}" class="episode-category" data-category="{name}">{title}<' in page
    # Per miner: the good one passed every episode, the others none.
    rows = {
        m.group(1): re.findall(r'<td class="num">([^<]*)</td>', m.group(2))
        for m in re.finditer(r'<tr data-hotkey="([^"]+)">(.*?)</tr>', leaderboard.group(0), re.S)
    }
    # rounds, responses, valid, 3 single-turn, 4 episode categories, latency, weight
    assert rows[seeded.good][6:10] == ["100.0%"] * 4
    assert rows[seeded.fair][6:10] == ["0.0%"] * 4
    assert rows[seeded.fair][3] == "50.0%"  # simple, a single-turn column before them
    assert rows[seeded.good][1] == str(12 + len(seeded.episodes))


async def test_the_category_table_lists_episodes_last_with_their_titles(
    dashboard: DashboardServer, seeded: Any
) -> None:
    _, _, page = await fetch(dashboard, "/")
    table = re.search(r'<table id="categories">.*?</table>', page, re.S)
    assert table is not None
    rows = re.findall(r'<tr data-category="([^"]+)">(.*?)</tr>', table.group(0), re.S)
    assert [name for name, _ in rows] == [*SINGLE_TURN, *EPISODE_TITLES]
    for name, cells in rows:
        if name in EPISODE_TITLES:
            assert f"<td>{EPISODE_TITLES[name]} <code" in cells and "<td>episode</td>" in cells
            # One answer per miner, the good miner's valid.
            assert '<td class="num">3</td><td class="num">1</td>' in cells
        else:
            assert "<td>single-turn</td>" in cells
    _, _, api = await fetch(dashboard, "/api/leaderboard")
    assert '"multi_turn_miss_func"' in api


# -- links from the front page ------------------------------------------------------------------


async def test_finished_episodes_link_each_answer_to_its_transcript(
    dashboard: DashboardServer, seeded: Any
) -> None:
    _, _, page = await fetch(dashboard, "/")
    blocks = re.findall(
        r'<details class="sample episode" data-round="(\d+)" data-category="([^"]+)">(.*?)</details>',
        page,
        re.S,
    )
    # Two episodes of the last scored round (the front page's share), the discarded round's one.
    assert [(number, category) for number, category, _ in blocks] == [
        ("5", "multi_turn_base"),
        ("4", "multi_turn_base"),
        ("4", "multi_turn_miss_param"),
    ]
    block = blocks[1][2]
    key = episode_key(seeded, "multi_turn_base")
    episode = seeded.episodes[key]
    assert f"episode in {episode.environment}, 2 turns" in block
    assert escaped(episode.turns[0].user) in block
    for hotkey in (seeded.good, seeded.fair, seeded.hostile):
        href = escaped(episode_href(4, key, hotkey))
        assert f'<a href="{href}" class="transcript">transcript</a>' in block
    # Nothing of the running round's episode, not even its key.
    assert seeded.running_episode_prompt not in page
    assert seeded.running_episode_answer not in page
    assert "round=6" not in page


# -- the page -----------------------------------------------------------------------------------


async def test_the_page_shows_the_episode_the_steps_and_the_verdict(
    dashboard: DashboardServer, seeded: Any
) -> None:
    key = episode_key(seeded, "multi_turn_base")
    episode = seeded.episodes[key]
    status, headers, page = await fetch(dashboard, episode_href(4, key, seeded.good))
    assert status == 200
    assert headers["Content-Type"].startswith("text/html")
    assert "script-src 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff"
    text = text_of(page)
    # The episode: category, environment, every turn's user message and reference plan.
    assert "multi-turn" in text and episode.category in text and episode.environment in text
    for index, turn in enumerate(episode.turns, start=1):
        assert f'<section class="turn" data-turn="{index}"><h3>Turn {index}</h3>' in page
        assert turn.user in text
        for call in turn.plan:
            assert call["name"] in text
    # The miner's transcript: a section per turn, each step's calls with observations, then text.
    verdict = seeded.verdicts[(seeded.good, key)]
    transcript = verdict["transcript"]
    assert page.count("<h3>Turn ") == 2 * len(episode.turns)  # the episode's turns, the miner's turns
    for turn in transcript["turns"]:
        for step in turn["steps"]:
            for call in step["calls"]:
                assert call["name"] in text
                assert json.dumps(call["observation"], ensure_ascii=False)[:60] in text
            if step["text"]:
                assert step["text"] in text
            assert f"{step['latency_s']:.2f} s" in text
    # The verdict.
    verdict_section = re.search(r'<section id="verdict">.*?</section>', page, re.S)
    assert verdict_section is not None
    assert '<span class="valid">valid</span>' in verdict_section.group(0)
    assert "1.000" in verdict_section.group(0) and seeded.good in verdict_section.group(0)
    assert "<script" not in page.lower()


async def test_an_invalid_answer_shows_its_error_type_and_text(
    dashboard: DashboardServer, seeded: Any
) -> None:
    key = episode_key(seeded, "multi_turn_base")
    status, _, page = await fetch(dashboard, episode_href(4, key, seeded.fair))
    assert status == 200
    verdict = seeded.verdicts[(seeded.fair, key)]
    assert f'<span class="invalid">{verdict["error_type"]}</span>' in page
    assert f"{verdict['score']:.3f}" in page
    assert seeded.fair_text in text_of(page)


async def test_hostile_transcripts_are_escaped_and_bounded(dashboard: DashboardServer, seeded: Any) -> None:
    key = episode_key(seeded, "multi_turn_base")
    status, _, page = await fetch(dashboard, episode_href(4, key, seeded.hostile))
    assert status == 200
    lowered = page.lower()
    assert "<script" not in lowered and "<img" not in lowered
    assert seeded.hostile_output not in page and seeded.hostile_call_name not in page
    assert escaped(seeded.hostile_output) in page  # shown, as text
    assert escaped(seeded.hostile_call_name) in page
    assert escaped(seeded.hostile_error_type) not in page  # not this row's error type
    # Bounded: the 1 MB observation is cut (and says so), 40 of 300 steps, 16 of 20 calls shown.
    assert len(page.encode()) < PAGE_CAP_BYTES
    assert f"cut: {seeded.hostile_observation_chars:,} characters, the first 1,500 shown" in page
    assert "A" * 1501 not in page
    assert f"… {seeded.hostile_steps - 40} more steps not shown (the page shows at most 40 steps)." in page
    assert "… 4 more calls not shown" in page
    assert page.count("data-step=") == 40
    # The refused forbidden call is marked, and so is the verdict.
    assert '<div class="unsafe">unsafe: <span>mass mail &lt;script&gt;' in page
    assert '<span class="invalid">multi_turn:unsafe</span>' in page


async def test_truncated_and_agent_step_transcripts(dashboard: DashboardServer, seeded: Any) -> None:
    key = episode_key(seeded, "multi_turn_miss_param")
    status, _, page = await fetch(dashboard, episode_href(4, key, seeded.hostile))
    assert status == 200
    assert "over the validator's size cap" in text_of(page)
    assert "cut: 100,065 characters, the first 2,000 shown" in page
    assert "<script" not in page.lower() and escaped(seeded.hostile_output) in page

    agent = episode_key(seeded, "agent_step")
    status, _, page = await fetch(dashboard, episode_href(4, agent, seeded.hostile))
    assert status == 200 and "<script" not in page.lower()
    assert "One step: the miner's answer" in text_of(page) and escaped(seeded.hostile_output) in page
    assert escaped(seeded.hostile_error_type) in page  # its error type, escaped
    _, _, good = await fetch(dashboard, episode_href(4, agent, seeded.good))
    assert "the call to predict" in good and '<span class="valid">valid</span>' in good


async def test_a_discarded_rounds_episode_is_shown(dashboard: DashboardServer, seeded: Any) -> None:
    status, _, page = await fetch(dashboard, episode_href(5, seeded.discarded_episode, seeded.good))
    assert status == 200
    assert "round 5 (discarded)" in page


def _bad_queries(seeded: Any) -> list[str]:
    key = episode_key(seeded, "multi_turn_base")
    good = seeded.good
    return [
        "",  # nothing
        f"task={key}&hotkey={good}",  # no round
        f"round=4&hotkey={good}",  # no task
        f"round=4&task={key}",  # no hotkey
        f"round=four&task={key}&hotkey={good}",
        f"round=-4&task={key}&hotkey={good}",
        f"round=4.0&task={key}&hotkey={good}",
        f"round=4&round=4&task={key}&hotkey={good}",  # given twice
        f"round=99999999999999999999&task={key}&hotkey={good}",
        f"round=4&task={quote('<script>alert(1)</script>')}&hotkey={good}",
        f"round=4&task={'k' * 129}&hotkey={good}",
        f"round=4&task={key}&hotkey={'5' * 65}",
        f"round=4&task={key}&hotkey={quote(good + chr(39))}",
        f"round=4&task={key}&hotkey=5UnknownHotkey",  # no such miner
        f"round=4&task=episode-multi_turn_base-0000000000000000&hotkey={good}",  # no such episode
        f"round=3&task={key}&hotkey={good}",  # another round's
        f"round=99&task={key}&hotkey={good}",  # no such round
        f"round=4&task=r4-t0&hotkey={good}",  # a single-turn task, not an episode
        f"round=6&task={seeded.running_episode}&hotkey={good}",  # still running
    ]


async def test_unknown_malformed_and_running_episodes_are_404(
    dashboard: DashboardServer, seeded: Any
) -> None:
    for query in _bad_queries(seeded):
        status, headers, body = await fetch(dashboard, f"/episode?{query}")
        assert status == 404, query
        assert body == "no finished episode with that round, task and hotkey", query
        assert "script-src 'none'" in headers["Content-Security-Policy"], query
        assert headers["X-Content-Type-Options"] == "nosniff", query
        assert seeded.running_episode_answer not in body


async def test_the_episode_page_takes_no_writes(dashboard: DashboardServer, seeded: Any) -> None:
    key = episode_key(seeded, "multi_turn_base")
    url = dashboard.url.rstrip("/") + episode_href(4, key, seeded.good)
    async with aiohttp.ClientSession() as session, session.post(url) as response:
        assert response.status == 405
        assert response.headers["X-Frame-Options"] == "DENY"


def test_parameters_are_checked_before_any_read() -> None:
    good = "5" + "A" * 47
    assert parse_episode_query(
        MultiDict(round="7", task="episode-agent_step-ab", hotkey=good)
    ) == EpisodeQuery(7, "episode-agent_step-ab", good)
    assert parse_episode_query(MultiDict(round="7", task="multi_turn_base_12", hotkey=good)) is not None
    for bad in (
        MultiDict(round="7", task="a b", hotkey=good),
        MultiDict(round="7", task="x", hotkey="5Abc/../"),
        MultiDict([("round", "7"), ("round", "8"), ("task", "x"), ("hotkey", good)]),
        MultiDict(round="", task="x", hotkey=good),
    ):
        assert parse_episode_query(bad) is None


async def test_limits_bound_the_page(seeded: Any) -> None:
    """Tighter limits: fewer steps, shorter strings, and a budget that runs out mid-page."""
    key = episode_key(seeded, "multi_turn_base")
    limits = DashboardLimits(transcript_chars=50, transcript_steps=3, transcript_budget_chars=1_000)
    engine = create_engine(seeded.url)
    try:
        reader = DashboardReader(engine, alpha=seeded.alpha, limits=limits)
        record = await read_episode(reader, EpisodeQuery(4, key, seeded.hostile))
        assert record is not None
        assert await read_episode(reader, EpisodeQuery(6, seeded.running_episode, seeded.good)) is None
    finally:
        await engine.dispose()
    page = render_episode_page(record, limits)
    assert page.count("data-step=") <= 3
    assert "more steps not shown" in page
    assert "A" * 51 not in page
    assert len(page) < 40_000
