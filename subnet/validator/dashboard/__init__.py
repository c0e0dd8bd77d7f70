"""The validator's read-only dashboard: leaderboard, per-category accuracy, recent rounds, charts,
and each episode answer's transcript.

One aiohttp application serves HTML rendered from Jinja2 templates with autoescape on (no script
at all: the charts are SVG the templates draw) plus ``/api/leaderboard`` as JSON. It only reads
the validator's tables, through an engine of its own that the database itself holds to reading
(``PRAGMA query_only`` on SQLite, read-only transactions on PostgreSQL), with every query
bounded by :class:`DashboardLimits`, and a short cache so that reloads never add up to load on
a validator mid-round.

Miners' outputs are hostile: the templates escape every value they print, and the
Content-Security-Policy allows no script, so even a missed escape could not run one. The tasks
and answers of a round are shown only once it is finished (``scored`` or ``discarded``): a
running round's tasks would hand the answers to miners still being queried.

The parts, along their seams:

- ``snapshot``: what a page shows (plain data) and the bounds on every read;
- ``reader``: the read queries (shared with the localnet leaderboard) and the snapshot builder;
- ``chart``: the charts' series and layout, as data;
- ``episode``: one episode answer's transcript page, bounded, as data;
- ``pages`` and ``templates/``: the HTML;
- ``app``: routes, headers, Host check, cache, the read-only engine, :func:`start_dashboard`.

Start it with :func:`start_dashboard` and stop it with ``await server.stop()``.
"""

from subnet.validator.dashboard.app import (
    DashboardServer,
    DashboardStartError,
    allowed_host_names,
    build_app,
    read_only_engine,
    request_host_name,
    start_dashboard,
)
from subnet.validator.dashboard.chart import replay_moving_averages
from subnet.validator.dashboard.episode import parse_episode_query
from subnet.validator.dashboard.pages import render_episode_page, render_page
from subnet.validator.dashboard.reader import DashboardReader, read_episode
from subnet.validator.dashboard.snapshot import DashboardLimits, EpisodeQuery, Snapshot, episode_href
from tasks.catalog import category_title, order_categories  # the categories' registry, read by the pages

__all__ = [
    "DashboardLimits",
    "DashboardReader",
    "DashboardServer",
    "DashboardStartError",
    "EpisodeQuery",
    "Snapshot",
    "allowed_host_names",
    "build_app",
    "category_title",
    "episode_href",
    "order_categories",
    "parse_episode_query",
    "read_episode",
    "read_only_engine",
    "render_episode_page",
    "render_page",
    "replay_moving_averages",
    "request_host_name",
    "start_dashboard",
]
