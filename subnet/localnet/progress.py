"""What the localnet shows while the validator works: finished rounds from its database, and the
interesting lines of its log as they are written."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Integer, cast, func, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db import ResponseRecord, Round, RoundStatus, session_factory

# The neurons' log format (subnet/logs.py): "<date> <time> LEVEL   logger: message".
_LOG_LINE = re.compile(r"^\S+ \S+ (?P<level>[A-Z]+)\s+(?P<logger>[\w.]+): (?P<message>.*)$")
# Loggers whose INFO lines are progress worth echoing; WARNING and above are always shown.
PROGRESS_LOGGERS = ("subnet.validator.rounds", "subnet.validator.weights", "validator")
SHOWN_LEVELS = frozenset({"WARNING", "ERROR", "CRITICAL"})


@dataclass(frozen=True)
class FinishedRound:
    number: int
    status: str
    n_tasks: int
    seconds: float | None
    # label -> (mean score, valid answers, answers)
    miners: dict[str, tuple[float, int, int]]

    def describe(self) -> str:
        took = f" in {self.seconds:.0f} s" if self.seconds is not None else ""
        if self.status != RoundStatus.SCORED.value:
            return f"round {self.number} {self.status}{took}"
        parts = [
            f"{label} {mean:.2f} ({valid}/{total} valid)"
            for label, (mean, valid, total) in sorted(self.miners.items())
        ]
        return f"round {self.number} scored{took}, {self.n_tasks} tasks: " + ", ".join(parts or ["no miners"])


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
                    per_hotkey = await session.execute(
                        select(
                            ResponseRecord.hotkey,
                            func.avg(ResponseRecord.score),
                            func.sum(cast(ResponseRecord.valid, Integer)),
                            func.count(),
                        )
                        .where(ResponseRecord.round_id == round_.id)
                        .group_by(ResponseRecord.hotkey)
                    )
                    miners = {
                        self.labels.get(hotkey, hotkey[:8]): (float(mean or 0.0), int(valid or 0), int(total))
                        for hotkey, mean, valid, total in per_hotkey
                    }
                    seconds = None
                    if round_.finished_at is not None and round_.started_at is not None:
                        seconds = (round_.finished_at - round_.started_at).total_seconds()
                    results.append(
                        FinishedRound(round_.number, round_.status, round_.n_tasks, seconds, miners)
                    )
        except DBAPIError:
            return []
        # Each round is reported once: the mark moves past every finished round seen.
        for result in results:
            self.after = max(self.after, result.number)
        self.finished += len(results)
        return results


async def answers_in_flight(engine: AsyncEngine) -> tuple[int, int] | None:
    """(round number, answers stored) of the round being run now, if any."""
    try:
        async with session_factory(engine)() as session:
            row = (
                await session.execute(
                    select(Round.number, func.count(ResponseRecord.id))
                    .outerjoin(ResponseRecord, ResponseRecord.round_id == Round.id)
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
