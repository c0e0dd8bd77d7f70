"""Prometheus helpers shared by the miner and the validator.

Each aiohttp application gets its own `CollectorRegistry` (never prometheus_client's global
one), so several apps in one process (tests, benchmarks, a validator with a dashboard) keep
separate counters and never collide on metric names.
"""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler
from prometheus_client import CollectorRegistry
from prometheus_client.aiohttp import make_aiohttp_handler

METRICS_PATH = "/metrics"

# Request latencies in seconds: sub-millisecond rejections up to minute-long generations.
LATENCY_BUCKETS: tuple[float, ...] = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)


def new_registry() -> CollectorRegistry:
    """A fresh registry for one application (no default process/platform collectors)."""
    return CollectorRegistry(auto_describe=True)


def metrics_handler(registry: CollectorRegistry) -> Handler:
    """An aiohttp handler that serves `registry` in the Prometheus text format."""
    return make_aiohttp_handler(registry, disable_compression=True)


def add_metrics_route(app: web.Application, registry: CollectorRegistry, path: str = METRICS_PATH) -> None:
    """Serve `registry` on `GET path` of `app`."""
    app.router.add_get(path, metrics_handler(registry))
