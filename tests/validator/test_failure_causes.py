"""The validator's round line names why answers failed (``504 handler_timeout x3``), not only
``http_error 3``: an operator reads the cause off the log without opening the database."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from subnet.db import create_engine, sqlite_url, upgrade
from subnet.protocol import ChatCompletionRequest
from subnet.transport import MinerTarget, QueryResult, QueryStatus
from subnet.validator.judge import BfclJudge
from subnet.validator.rounds import ChainView, RoundParams, RoundRunner, describe_failures, failure_cause
from subnet.validator.store import Store
from subnet.validator.task_source import LibraryTasks


@pytest.mark.parametrize(
    ("category", "status", "http_status", "error", "cause"),
    [
        ("simple", "ok", 200, None, None),
        (
            "simple",
            "http_error",
            504,
            "handler_timeout: the model did not answer in time",
            "504 handler_timeout",
        ),
        ("simple", "http_error", 502, "miner answered with an HTTP error", "502"),
        (
            "simple",
            "refused",
            None,
            "ClientConnectorError: Cannot connect to host",
            "refused ClientConnectorError",
        ),
        ("simple", "timeout", None, "TimeoutError", "timeout"),
        ("multi_turn_base", "timeout", None, "deadline: the episode took more than 120 s", "episode timeout"),
        ("multi_turn_base", "http_error", 503, "overloaded: engine down", "episode 503 overloaded"),
    ],
)
def test_failure_cause(
    category: str, status: str, http_status: int | None, error: str | None, cause: str | None
) -> None:
    assert failure_cause(category, status, http_status, error) == cause


def test_describe_failures_names_the_most_frequent_first() -> None:
    causes = Counter({"504 handler_timeout": 12, "episode timeout": 2, "timeout": 2, "502": 1, "refused": 1})
    assert describe_failures(causes) == "504 handler_timeout x12, episode timeout x2, timeout x2, 2 other"


@dataclasses.dataclass(frozen=True)
class _Neuron:
    uid: int
    hotkey: str
    axon_ip: str = "127.0.0.1"
    axon_port: int = 9000
    validator_permit: bool = False
    is_serving: bool = True


class _TimingOut:
    """A miner whose model never answers in time: every request is its 504 handler_timeout."""

    async def query(
        self, target: MinerTarget, request: ChatCompletionRequest, *, parse_after: Any = None
    ) -> QueryResult:
        return QueryResult(
            status=QueryStatus.HTTP_ERROR,
            latency_s=0.01,
            http_status=504,
            error="handler_timeout: the model did not answer in time",
        )


async def test_the_round_line_names_the_failure_causes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = sqlite_url(tmp_path / "v.sqlite")
    await upgrade(url)
    engine = create_engine(url)
    try:
        runner = RoundRunner(
            store=Store(engine),
            querier=_TimingOut(),
            task_source=LibraryTasks(),
            judge=BfclJudge(),
            secret=b"s" * 32,
            params=RoundParams(netuid=1, n_tasks=3, alpha=0.5),
        )
        view = ChainView(block=7, block_hash="0x" + "cd" * 32, neurons=(_Neuron(2, "m"),), own_hotkey="v")
        with caplog.at_level(logging.INFO, logger="subnet.validator.rounds"):
            report = await asyncio.wait_for(runner.run(view), 20.0)
    finally:
        await engine.dispose()
    assert report.failures == Counter({"504 handler_timeout": 3})
    (line,) = [record.getMessage() for record in caplog.records if "scored:" in record.getMessage()]
    assert line.endswith("; failed: 504 handler_timeout x3"), line


async def test_answers_are_tallied_under_their_tasks_own_category(tmp_path: Path) -> None:
    """missing_param is scored as irrelevance but tallied as itself: the leaderboard's and the
    dashboard's irrelevance column holds irrelevance only."""
    from sqlalchemy import select

    from subnet.db import ResponseRecord, TaskRecord

    url = sqlite_url(tmp_path / "v.sqlite")
    await upgrade(url)
    engine = create_engine(url)
    try:
        runner = RoundRunner(
            store=Store(engine),
            querier=_TimingOut(),
            task_source=LibraryTasks(),
            judge=BfclJudge(),
            secret=b"s" * 32,
            params=RoundParams(netuid=1, n_tasks=12, alpha=0.5),
        )
        view = ChainView(block=7, block_hash="0x" + "cd" * 32, neurons=(_Neuron(2, "m"),), own_hotkey="v")
        await asyncio.wait_for(runner.run(view), 20.0)
        async with engine.connect() as connection:
            pairs = list(
                await connection.execute(
                    select(TaskRecord.category, ResponseRecord.category).join(
                        ResponseRecord, ResponseRecord.task_id == TaskRecord.id
                    )
                )
            )
    finally:
        await engine.dispose()
    assert "missing_param" in {task for task, _ in pairs}
    assert all(task == answer for task, answer in pairs), pairs
