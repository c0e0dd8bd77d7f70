"""The dashboard's pages: Jinja2 templates (``templates/*.html``, package data) with autoescape on.

Autoescape is the defence against hostile miner strings: every value a template prints is
HTML-escaped, attributes included, and nothing here marks a string as safe markup. The
Content-Security-Policy (app.py) allows no script, so even a missed escape could not run one.
The aiohttp application renders through ``aiohttp_jinja2`` (:func:`setup_templates`);
:func:`render_page` and :func:`render_episode_page` render the same templates outside a
request, for tests and scripts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import web

from subnet.validator.dashboard.chart import plot
from subnet.validator.dashboard.episode import episode_page
from subnet.validator.dashboard.snapshot import DashboardLimits, EpisodeRecord, Snapshot
from subnet.validator.state import EPISODE_CATEGORIES
from tasks.catalog import category_title  # the categories' registry

REFRESH_SECONDS = 30
INDEX_TEMPLATE = "index.html"
EPISODE_TEMPLATE = "episode.html"


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100.0 * value:.1f}%"


def number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def when(value: datetime | None) -> str:
    if value is None:
        return "—"
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%d %H:%M:%S")


def short_hotkey(hotkey: str) -> str:
    return hotkey if len(hotkey) <= 14 else f"{hotkey[:6]}…{hotkey[-6:]}"


FILTERS: dict[str, Callable[..., str]] = {
    "percent": percent,
    "number": number,
    "when": when,
    "short_hotkey": short_hotkey,
    "category_title": category_title,
}


def template_options() -> dict[str, Any]:
    """The Environment's settings, the same for the application and for :func:`environment`."""
    return {
        "loader": jinja2.PackageLoader("subnet.validator.dashboard", "templates"),
        "autoescape": True,  # every template, whatever its name
        "undefined": jinja2.StrictUndefined,  # a misspelt field is an error, not an empty cell
        "trim_blocks": True,
        "lstrip_blocks": True,
    }


def setup_templates(app: web.Application) -> jinja2.Environment:
    """Give ``app`` the dashboard's templates (aiohttp_jinja2)."""
    return aiohttp_jinja2.setup(app, filters=FILTERS, default_helpers=False, **template_options())


@functools.cache
def environment() -> jinja2.Environment:
    """The templates outside an application (built on first use, then kept)."""
    env = jinja2.Environment(**template_options())
    env.filters.update(FILTERS)
    return env


def page_context(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "snapshot": snapshot,
        "refresh": REFRESH_SECONDS,
        "episode_categories": EPISODE_CATEGORIES,
        "charts": [plot(snapshot.moving_average_chart), plot(snapshot.weight_chart)],
    }


def episode_context(record: EpisodeRecord, limits: DashboardLimits) -> dict[str, Any]:
    return {"page": episode_page(record, limits)}


def render_page(snapshot: Snapshot) -> str:
    """The front page over ``snapshot``."""
    return environment().get_template(INDEX_TEMPLATE).render(page_context(snapshot))


def render_episode_page(record: EpisodeRecord, limits: DashboardLimits) -> str:
    """The transcript page of ``record``, bounded by ``limits``."""
    return environment().get_template(EPISODE_TEMPLATE).render(episode_context(record, limits))
