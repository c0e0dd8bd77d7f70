"""What the localnet shows while the validator works: finished rounds from its database, and the
interesting lines of its log as they are written."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Integer, case, cast, func, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db import ResponseRecord, Round, RoundStatus, session_factory
from subnet.validator.rounds import describe_failures, failure_cause
from subnet.validator.state import EPISODE_CATEGORIES, UNSAFE_ERROR, RoundSummary

# The neurons' log format (subnet/logs.py): "<date> <time> LEVEL   logger: message".
_LOG_LINE = re.compile(r"^\S+ \S+ (?P<level>[A-Z]+)\s+(?P<logger>[\w.]+): (?P<message>.*)$")
# Loggers whose INFO lines are progress worth echoing; WARNING and above are always shown.
PROGRESS_LOGGERS = ("subnet.validator.rounds", "subnet.validator.weights", "validator")
SHOWN_LEVELS = frozenset({"WARNING", "ERROR", "CRITICAL"})


@dataclass(frozen=True)
class FinishedRound:
    number: int
    status: str
    n_tasks: int  # tasks and episodes
    seconds: float | None
    # label -> (round score, valid answers, answers); the score as the validator folds it in
    miners: dict[str, tuple[float, int, int]]
    n_episodes: int = 0
    # label -> (episodes passed, episodes played)
    episodes: dict[str, tuple[int, int]] = field(default_factory=dict)
    # why answers failed (the validator's failure_cause: ``504 handler_timeout``, ``episode timeout``)
    failures: Counter[str] = field(default_factory=Counter)

    def describe(self) -> str:
        took = f" in {self.seconds:.0f} s" if self.seconds is not None else ""
        if self.status != RoundStatus.SCORED.value:
            return f"round {self.number} {self.status}{took}"
        parts = []
        for label, (mean, valid, total) in sorted(self.miners.items()):
            passed = ""
            if self.n_episodes:
                won, played = self.episodes.get(label, (0, 0))
                passed = f", episodes {won}/{played}"
            parts.append(f"{label} {mean:.2f} ({valid}/{total} valid{passed})")
        what = f"{self.n_tasks} tasks"
        if self.n_episodes:
            tasks = self.n_tasks - self.n_episodes
            what = f"{_count(tasks, 'task')} + {_count(self.n_episodes, 'episode')}"
        failed = f"; failed: {describe_failures(self.failures)}" if self.failures else ""
        return f"round {self.number} scored{took}, {what}: " + ", ".join(parts or ["no miners"]) + failed


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _clamped_score() -> Any:
    """A response's score as the validator counts it: within [0, 1]."""
    return case(
        (ResponseRecord.score < 0.0, 0.0),
        (ResponseRecord.score > 1.0, 1.0),
        else_=ResponseRecord.score,
    )


async def last_round_number(engine: AsyncEngine) -> int:
    """The highest round number stored so far; 0 for a fresh (or not yet created) database."""
    try:
        async with session_factory(engine)() as session:
            return int(await session.scalar(select(func.max(Round.number))) or 0)
    except DBAPIError:  # no tables yet: the validator creates them at start
        return 0


class RoundWatcher:
    """Reports each round that finished (scored or discarded) since the last poll."""

    def __init__(self, engine: AsyncEngine, labels: Mapping[str, str], after_number: int) -> None:
        self.engine = engine
        self.labels = dict(labels)
        self.after = after_number
        self.finished = 0

    async def poll(self) -> list[FinishedRound]:
        done = (RoundStatus.SCORED.value, RoundStatus.DISCARDED.value)
        try:
            async with session_factory(self.engine)() as session:
                rounds = list(
                    await session.scalars(
                        select(Round)
                        .where(Round.number > self.after, Round.status.in_(done))
                        .order_by(Round.number)
                    )
                )
                results = []
                for round_ in rounds:
                    per_category = await session.execute(
                        select(
                            ResponseRecord.hotkey,
                            ResponseRecord.category,
                            func.count(),
                            func.sum(cast(ResponseRecord.valid, Integer)),
                            func.sum(_clamped_score()),
                            func.max(case((ResponseRecord.error_type == UNSAFE_ERROR, 1), else_=0)),
                        )
                        .where(ResponseRecord.round_id == round_.id)
                        .group_by(ResponseRecord.hotkey, ResponseRecord.category)
                    )
                    # The round's score per miner as the validator folds it in (state.RoundSummary:
                    # episodes weigh half, a forbidden action zeroes the round), and episodes passed.
                    summaries: dict[str, RoundSummary] = {}
                    passed: dict[str, int] = {}
                    for hotkey, category, count, valid, score_sum, unsafe in per_category:
                        summary = summaries.setdefault(hotkey, RoundSummary(hotkey, 0))
                        summary.total += int(count)
                        summary.valid += int(valid or 0)
                        summary.score_sum += float(score_sum or 0.0)
                        if category in EPISODE_CATEGORIES:
                            passed[hotkey] = passed.get(hotkey, 0) + int(valid or 0)
                            summary.episode_total += int(count)
                            summary.episode_score_sum += float(score_sum or 0.0)
                            summary.unsafe = summary.unsafe or bool(unsafe)
                    miners: dict[str, tuple[float, int, int]] = {}
                    episodes: dict[str, tuple[int, int]] = {}
                    for hotkey, summary in summaries.items():
                        label = self.labels.get(hotkey, hotkey[:8])
                        miners[label] = (summary.mean_score, summary.valid, summary.total)
                        if summary.episode_total:
                            episodes[label] = (passed.get(hotkey, 0), summary.episode_total)
                    # Every miner's episodes are stored, played or failed: the most any played.
                    n_episodes = max((summary.episode_total for summary in summaries.values()), default=0)
                    failures: Counter[str] = Counter()
                    failed = await session.execute(
                        select(
                            ResponseRecord.category,
                            ResponseRecord.status,
                            ResponseRecord.http_status,
                            ResponseRecord.error,
                        ).where(ResponseRecord.round_id == round_.id, ResponseRecord.status != "ok")
                    )
                    for category, status, http_status, error in failed:
                        cause = failure_cause(category, status, http_status, error)
                        if cause is not None:
                            failures[cause] += 1
                    seconds = None
                    if round_.finished_at is not None and round_.started_at is not None:
                        seconds = (round_.finished_at - round_.started_at).total_seconds()
                    results.append(
                        FinishedRound(
                            round_.number,
                            round_.status,
                            round_.n_tasks,
                            seconds,
                            miners,
                            n_episodes,
                            episodes,
                            failures,
                        )
                    )
        except DBAPIError:
            return []
        # Each round is reported once: the mark moves past every finished round seen.
        for result in results:
            self.after = max(self.after, result.number)
        self.finished += len(results)
        return results


async def answers_in_flight(engine: AsyncEngine, hotkeys: Sequence[str]) -> tuple[int, int] | None:
    """(round number, answers stored from ``hotkeys``) of the round being run now, if any."""
    joined = (ResponseRecord.round_id == Round.id) & ResponseRecord.hotkey.in_(list(hotkeys))
    try:
        async with session_factory(engine)() as session:
            row = (
                await session.execute(
                    select(Round.number, func.count(ResponseRecord.id))
                    .outerjoin(ResponseRecord, joined)
                    .where(Round.status == RoundStatus.RUNNING.value)
                    .group_by(Round.id)
                    .order_by(Round.number.desc())
                    .limit(1)
                )
            ).first()
    except DBAPIError:
        return None
    return (int(row[0]), int(row[1])) if row is not None else None


class LogFollower:
    """Reads the lines appended to a log file since the last call."""

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.path = path
        self.offset = offset
        self._partial = b""

    def new_lines(self) -> list[str]:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except OSError:
            return []
        self.offset += len(data)
        data = self._partial + data
        lines = data.split(b"\n")
        self._partial = lines.pop()
        return [line.decode("utf-8", errors="replace").rstrip("\r") for line in lines]


def progress_line(line: str) -> str | None:
    """The part of a validator log line worth showing, or None."""
    match = _LOG_LINE.match(line)
    if match is None:
        return None
    level, logger, message = match["level"], match["logger"], match["message"]
    if level in SHOWN_LEVELS:
        return f"{level.lower()}: {message}"
    if level == "INFO" and logger in PROGRESS_LOGGERS:
        return message
    return None
