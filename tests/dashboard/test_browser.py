"""The dashboard in headless Chromium (Debian's ``chromium``).

The page loads, its leaderboard holds the miners, its charts are drawn; one screenshot.
"""

from __future__ import annotations

import asyncio
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from subnet.validator.dashboard import DashboardServer, episode_href

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_TIMEOUT_S = 60.0

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="headless Chromium not found at /usr/bin/chromium (apt-get install chromium; "
        "scripts/setup.sh does it when run as root)",
    ),
]


async def run_chromium(profile: Path, *arguments: str) -> bytes:
    """Run headless Chromium with a fresh profile and nothing but loopback to talk to; returns stdout."""
    process = await asyncio.create_subprocess_exec(
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *arguments,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), CHROMIUM_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        pytest.fail(f"chromium did not finish within {CHROMIUM_TIMEOUT_S:.0f} s")
    assert process.returncode == 0, stderr.decode(errors="replace")[-2000:]
    return stdout


async def test_the_page_loads_with_the_miners_and_the_charts(
    dashboard: DashboardServer, seeded: Any, tmp_path: Path
) -> None:
    dom = (await run_chromium(tmp_path / "profile", "--dump-dom", dashboard.url)).decode()
    assert "<title>Validator dashboard</title>" in dom
    leaderboard = re.search(r'<table id="leaderboard">.*?</table>', dom, re.S)
    assert leaderboard is not None, dom[:2000]
    assert re.findall(r'<tr data-hotkey="([^"]+)">', leaderboard.group(0)) == [
        seeded.good,
        seeded.fair,
        seeded.hostile,
    ]
    # The charts as the browser built them: one line per miner, with their points.
    averages = re.search(r'<figure id="chart-moving-averages".*?</figure>', dom, re.S)
    assert averages is not None
    assert 'data-series="3"' in averages.group(0)
    assert len(re.findall(r"<polyline ", averages.group(0))) == 3
    assert len(re.findall(r"<circle ", averages.group(0))) == 3 * 4  # four scored rounds each
    weights = re.search(r'<figure id="chart-weights".*?</figure>', dom, re.S)
    assert weights is not None and len(re.findall(r"<polyline ", weights.group(0))) == 2
    # The hostile output reached the DOM as text, not as an element.
    assert "<script" not in dom.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom


async def test_a_hostile_episode_transcript_stays_text_in_the_browser(
    dashboard: DashboardServer, seeded: Any, tmp_path: Path
) -> None:
    key = next(key for key, episode in seeded.episodes.items() if episode.category == "multi_turn_base")
    url = dashboard.url.rstrip("/") + episode_href(4, key, seeded.hostile)
    dom = (await run_chromium(tmp_path / "profile", "--dump-dom", url)).decode()
    assert "<title>Episode " in dom
    assert "<script" not in dom.lower() and "<img" not in dom.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert len(re.findall(r"<li data-step=", dom)) == 40  # the page's cap, of 300 steps


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def png_pixels(data: bytes) -> bytes:
    """Decompressed scanlines, filter bytes included: enough to tell a blank page from a drawn one."""
    chunks, offset = [], 8
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    return zlib.decompress(b"".join(chunks))


async def test_screenshot_shows_a_drawn_page(dashboard: DashboardServer, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    await run_chromium(
        tmp_path / "profile",
        "--hide-scrollbars",
        f"--screenshot={shot}",
        "--window-size=1280,900",
        dashboard.url,
    )
    data = shot.read_bytes()
    assert png_size(data) == (1280, 900)
    scanlines = png_pixels(data)
    # A blank page compresses to almost nothing and has a handful of byte values; text,
    # tables and coloured chart lines give many.
    assert len(data) > 20_000
    assert len(set(scanlines)) > 64
