"""Periodic jobs on APScheduler 3's AsyncIOScheduler, made safe to leave running.

Each job runs at most one instance at a time; late runs are coalesced into one
and dropped past a grace time; every run is bounded by a timeout; a run that
fails or times out logs one line and the job simply runs again next time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobSpec:
    name: str
    interval_s: float
    run: Callable[[], Awaitable[object]]
    timeout_s: float
    # Past this lateness a run is dropped (the next one comes soon enough).
    misfire_grace_s: int = 30
    start_immediately: bool = True


@dataclass
class JobStats:
    runs: int = 0
    failures: int = 0
    timeouts: int = 0
    last_error: str = ""
    running: int = 0
    max_running: int = 0


@dataclass
class GuardedJob:
    """Runs a job's coroutine under its timeout; turns failures into one log line and a count."""

    spec: JobSpec
    stats: JobStats = field(default_factory=JobStats)
    on_finish: Callable[[str, str, float], None] | None = None

    async def run_once(self) -> None:
        self.stats.running += 1
        self.stats.max_running = max(self.stats.max_running, self.stats.running)
        started = asyncio.get_running_loop().time()
        outcome = "ok"
        try:
            async with asyncio.timeout(self.spec.timeout_s):
                await self.spec.run()
        except TimeoutError:
            outcome = "timeout"
            self.stats.timeouts += 1
            self.stats.last_error = f"timed out after {self.spec.timeout_s:g} s"
            log.warning(
                "job %s timed out after %.0f s; it runs again next time", self.spec.name, self.spec.timeout_s
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            outcome = "error"
            self.stats.failures += 1
            self.stats.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("job %s failed: %s; it runs again next time", self.spec.name, self.stats.last_error)
        finally:
            self.stats.running -= 1
            self.stats.runs += 1
            if self.on_finish is not None:
                self.on_finish(self.spec.name, outcome, asyncio.get_running_loop().time() - started)


def build_scheduler(
    specs: Sequence[JobSpec],
    on_finish: Callable[[str, str, float], None] | None = None,
) -> tuple[AsyncIOScheduler, dict[str, GuardedJob]]:
    """A scheduler holding the given jobs (not started: call ``.start()`` inside the running loop)."""
    scheduler = AsyncIOScheduler(timezone=UTC)
    guarded: dict[str, GuardedJob] = {}
    for spec in specs:
        job = GuardedJob(spec, on_finish=on_finish)
        guarded[spec.name] = job
        scheduler.add_job(
            job.run_once,  # a bound coroutine function, so APScheduler awaits it on the loop
            IntervalTrigger(seconds=spec.interval_s, timezone=UTC),
            id=spec.name,
            name=spec.name,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=spec.misfire_grace_s,
            next_run_time=datetime.now(UTC) if spec.start_immediately else None,
            replace_existing=True,
        )
    return scheduler, guarded
