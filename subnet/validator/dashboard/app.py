"""The dashboard's aiohttp application: routes, security headers, Host check, the snapshot cache,
its own read-only engine, and :func:`start_dashboard`.

Routes (GET/HEAD only): ``/`` (the front page), ``/episode`` (one transcript), ``/api/leaderboard``
(JSON), ``/static/dashboard.css``, ``/favicon.ico`` (204). Every response, errors included,
carries the security headers: a Content-Security-Policy that allows no script, so even a missed
escape could not run one.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import aiohttp_jinja2
from aiohttp import hdrs, web
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.config import UserError
from subnet.db import create_engine
from subnet.validator.dashboard.episode import parse_episode_query
from subnet.validator.dashboard.pages import (
    EPISODE_TEMPLATE,
    INDEX_TEMPLATE,
    episode_context,
    page_context,
    setup_templates,
)
from subnet.validator.dashboard.reader import DashboardReader, read_episode
from subnet.validator.dashboard.snapshot import EPISODE_PATH, DashboardLimits, Snapshot

log = logging.getLogger(__name__)

SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
# Episode pages read at once at most; more wait (each is one bounded query and a render).
CONCURRENT_EPISODE_READS = 2
UNREADABLE = "the validator's database cannot be read right now"
NO_EPISODE = "no finished episode with that round, task and hotkey"


class DashboardStartError(UserError):
    """The dashboard cannot listen where it was told to."""


class SnapshotCache:
    """At most one snapshot query in flight; a fresh snapshot is reused for ``ttl`` seconds."""

    def __init__(
        self, reader: DashboardReader, ttl: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.reader = reader
        self.ttl = ttl
        self.clock = clock
        self._lock = asyncio.Lock()
        self._value: Snapshot | None = None
        self._taken_at = -math.inf

    async def get(self) -> Snapshot:
        async with self._lock:
            if self._value is None or self.clock() - self._taken_at >= self.ttl:
                self._value = await self.reader.snapshot()
                self._taken_at = self.clock()
            return self._value


async def _add_security_headers(_request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(SECURITY_HEADERS)
    response.headers.setdefault("Cache-Control", "no-store")


LOOPBACK_HOST_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def request_host_name(host_header: str) -> str:
    """The name of a Host header without its port, lower-cased (`[::1]:8000` -> `::1`)."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def allowed_host_names(bind_host: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The Host names the dashboard answers for: loopback, its bind address, and `extra`."""
    return LOOPBACK_HOST_NAMES | {bind_host.strip("[]").lower()} | {name.lower() for name in extra}


def _host_check(allowed: frozenset[str]) -> Any:
    """Refuse a request whose Host header names none of `allowed`: a page of some other site whose
    name was rebound to this machine's address (DNS rebinding) sends its own name as Host, so
    its scripts cannot read the dashboard through the browser."""

    @web.middleware
    async def check(request: web.Request, handler: Any) -> web.StreamResponse:
        host = request.headers.get(hdrs.HOST)
        if host is None or request_host_name(host) not in allowed:
            return web.Response(
                status=403,
                text="unknown Host: the dashboard answers for "
                f"{', '.join(sorted(allowed))} (add names with --dashboard.allowed_hosts)",
            )
        return await handler(request)

    return check


def build_app(
    reader: DashboardReader, allowed_hosts: frozenset[str] = LOOPBACK_HOST_NAMES
) -> web.Application:
    """The dashboard's routes, for requests whose Host is one of `allowed_hosts`; every response,
    errors included, carries the security headers."""
    cache = SnapshotCache(reader, reader.limits.cache_seconds)
    stylesheet_text = (
        resources.files("subnet.validator.dashboard").joinpath("static/dashboard.css").read_text("utf-8")
    )
    episode_reads = asyncio.Semaphore(CONCURRENT_EPISODE_READS)

    async def snapshot_or_503() -> Snapshot:
        try:
            return await cache.get()
        except Exception as exc:
            log.warning("dashboard could not read the database: %s", exc)
            raise web.HTTPServiceUnavailable(text=UNREADABLE) from None

    async def page(request: web.Request) -> web.Response:
        snapshot = await snapshot_or_503()
        return aiohttp_jinja2.render_template(INDEX_TEMPLATE, request, page_context(snapshot))

    async def episode(request: web.Request) -> web.Response:
        """404 for a malformed parameter, a running round, an unknown episode or miner."""
        query = parse_episode_query(request.query)
        if query is None:
            raise web.HTTPNotFound(text=NO_EPISODE)
        async with episode_reads:
            try:
                record = await read_episode(reader, query)
            except Exception as exc:
                log.warning("dashboard could not read an episode: %s", exc)
                raise web.HTTPServiceUnavailable(text=UNREADABLE) from None
        if record is None:
            raise web.HTTPNotFound(text=NO_EPISODE)
        return aiohttp_jinja2.render_template(
            EPISODE_TEMPLATE, request, episode_context(record, reader.limits)
        )

    async def leaderboard(_request: web.Request) -> web.Response:
        snapshot = await snapshot_or_503()
        return web.json_response(snapshot.leaderboard_json())

    async def stylesheet(_request: web.Request) -> web.Response:
        return web.Response(
            text=stylesheet_text,
            content_type="text/css",
            charset="utf-8",
            headers={"Cache-Control": "max-age=300"},
        )

    async def no_icon(_request: web.Request) -> web.Response:
        return web.Response(status=204)

    app = web.Application(middlewares=[_host_check(allowed_hosts)])
    setup_templates(app)
    app.router.add_get("/", page)
    app.router.add_get(EPISODE_PATH, episode)
    app.router.add_get("/api/leaderboard", leaderboard)
    app.router.add_get("/static/dashboard.css", stylesheet)
    app.router.add_get("/favicon.ico", no_icon)
    app.on_response_prepare.append(_add_security_headers)
    return app


def _sqlite_query_only(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA query_only=ON")
    cursor.close()


def read_only_engine(engine: AsyncEngine) -> AsyncEngine | None:
    """A small engine of the dashboard's own on the same database, unable to write.

    None for an in-memory SQLite database, which no second engine can see: the
    dashboard then reads through ``engine`` (it only ever issues SELECTs).
    PostgreSQL connections are made read-only per snapshot (see
    :meth:`DashboardReader.reading`).
    """
    url = engine.url
    if url.get_backend_name() == "sqlite":
        database = url.database or ""
        if not database or database == ":memory:" or url.query.get("mode") == "memory":
            return None
        reader = create_engine(url.render_as_string(hide_password=False), pool_size=2, max_overflow=2)
        event.listen(reader.sync_engine, "connect", _sqlite_query_only)
        return reader
    return create_engine(url.render_as_string(hide_password=False), pool_size=2, max_overflow=2)


@dataclass
class DashboardServer:
    """A running dashboard; ``await stop()`` closes the listener and the dashboard's own engine."""

    url: str
    host: str
    port: int
    runner: web.AppRunner
    engine: AsyncEngine | None  # owned: disposed on stop

    async def stop(self) -> None:
        await self.runner.cleanup()
        if self.engine is not None:
            await self.engine.dispose()
            self.engine = None


async def start_dashboard(
    engine: AsyncEngine,
    *,
    host: str,
    port: int,
    alpha: float,
    limits: DashboardLimits | None = None,
    allowed_hosts: Iterable[str] = (),
) -> DashboardServer:
    """Serve the dashboard on ``host:port`` (0 picks a free port) over the validator's database.

    ``engine`` is the validator's; the dashboard opens its own read-only engine
    on the same URL. ``alpha`` is ``--scoring.alpha``, for replaying moving
    averages. Raises :class:`DashboardStartError` when the address is taken.
    """
    own = read_only_engine(engine)
    reader = DashboardReader(own or engine, alpha=alpha, limits=limits)
    runner = web.AppRunner(build_app(reader, allowed_host_names(host, allowed_hosts)), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        await runner.cleanup()
        if own is not None:
            await own.dispose()
        raise DashboardStartError(
            f"cannot serve the dashboard on {host}:{port} ({exc.strerror or exc}); "
            "pick another --dashboard.port, or 0 to turn it off"
        ) from None
    bound_port = port
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            bound_port = int(address[1])
            break
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{bound_port}/"
    log.info("dashboard on %s", url)
    return DashboardServer(url=url, host=host, port=bound_port, runner=runner, engine=own)
