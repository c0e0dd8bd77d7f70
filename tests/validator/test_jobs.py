"""The job framework: no pile-up, timeouts bound a run, a failing job runs again."""

from __future__ import annotations

import asyncio
import logging

import pytest

from subnet.validator.jobs import GuardedJob, JobSpec, build_scheduler


async def test_slow_job_never_runs_twice_at_once_and_is_bounded_by_its_timeout() -> None:
    started = 0

    async def slow() -> None:
        nonlocal started
        started += 1
        await asyncio.sleep(10)

    scheduler, jobs = build_scheduler([JobSpec("slow", interval_s=0.05, run=slow, timeout_s=0.3)])
    scheduler.start()
    try:
        await asyncio.sleep(1.0)
    finally:
        scheduler.shutdown(wait=False)
    stats = jobs["slow"].stats
    assert stats.max_running == 1
    assert stats.timeouts >= 2
    assert started == stats.runs + stats.running


async def test_failing_job_logs_one_line_per_failure_and_runs_again(caplog: pytest.LogCaptureFixture) -> None:
    calls = 0

    async def flaky() -> None:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise ConnectionError("chain down")

    job = GuardedJob(JobSpec("flaky", interval_s=1, run=flaky, timeout_s=1))
    with caplog.at_level(logging.WARNING, logger="subnet.validator.jobs"):
        for _ in range(4):
            await job.run_once()
    assert calls == 4
    assert job.stats.failures == 2 and job.stats.runs == 4
    failures = [record for record in caplog.records if "flaky failed" in record.getMessage()]
    assert len(failures) == 2
    assert all(record.exc_info is None for record in failures)
    assert "ConnectionError: chain down" in failures[0].getMessage()


async def test_jobs_are_registered_with_the_no_pile_up_options() -> None:
    async def noop() -> None:
        return None

    scheduler, _ = build_scheduler(
        [JobSpec("a", 5, noop, 1, misfire_grace_s=7), JobSpec("b", 5, noop, 1, start_immediately=False)]
    )
    job = scheduler.get_job("a")
    assert job is not None
    assert job.max_instances == 1 and job.coalesce is True and job.misfire_grace_time == 7
