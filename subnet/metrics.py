"""Prometheus helpers shared by the miner and the validator.

Each aiohttp application gets its own `CollectorRegistry` (never prometheus_client's global
one), so several apps in one process (tests, benchmarks, a validator with a dashboard) keep
separate counters and never collide on metric names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Handler
from prometheus_client import CollectorRegistry
from prometheus_client.aiohttp import make_aiohttp_handler
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

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


@dataclass(frozen=True)
class Reading:
    """One figure read from a running object when /metrics is scraped (a running total the object
    keeps anyway, so nothing is counted twice). ``read`` gives None when there is nothing to show."""

    name: str
    documentation: str
    read: Callable[[], float | None]
    counter: bool = False  # a running total (shown as NAME_total), else a gauge


class _Readings(Collector):
    def __init__(self, readings: Sequence[Reading]) -> None:
        self._readings = tuple(readings)

    def collect(self) -> Iterator[Metric]:
        for reading in self._readings:
            value = reading.read()
            if value is None:
                continue
            family = CounterMetricFamily if reading.counter else GaugeMetricFamily
            yield family(reading.name, reading.documentation, value=value)


def register_readings(registry: CollectorRegistry, readings: Sequence[Reading]) -> None:
    """Show ``readings`` on the /metrics that serves ``registry``."""
    registry.register(_Readings(readings))
