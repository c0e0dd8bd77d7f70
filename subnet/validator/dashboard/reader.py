"""The read queries over the validator's tables: the dashboard's, and the localnet leaderboard's.

The functions at the top take an open connection and read one thing each (score states, category
tallies, latency medians, weight attempts); the dashboard and ``subnet.localnet.leaderboard``
both use them. :class:`DashboardReader` adds the dashboard's own reads and builds a
:class:`~subnet.validator.dashboard.snapshot.Snapshot` with a bounded number of bounded queries,
on a connection that is rolled back after each page. A round's tasks and answers are read only
once it is finished (``scored`` or ``discarded``), in the SQL of every query that reads them.
"""

from __future__ import annotations

import contextlib
import math
import statistics
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from subnet.db import (
    CategoryScore,
    ResponseRecord,
    Round,
    RoundStatus,
    ScoreState,
    TaskRecord,
    WeightSubmission,
)
from subnet.transport.client import QueryStatus
from subnet.validator.dashboard.chart import (
    Chart,
    Series,
    moving_average_chart,
    replay_moving_averages,
    weight_chart,
)
from subnet.validator.dashboard.snapshot import (
    FINISHED_STATUSES,
    CategoryRow,
    DashboardLimits,
    EpisodeQuery,
    EpisodeRecord,
    LeaderboardRow,
    RoundRow,
    SampleAnswer,
    SampleTask,
    Snapshot,
    WeightRow,
    clip,
    episode_sample,
    requests_text,
    task_sample,
)
from subnet.validator.state import EPISODE_CATEGORIES, UNSAFE_ERROR, RoundSummary
from subnet.validator.transcripts import EpisodeTranscript
from subnet.validator.weights import WeightsOutcome
from tasks.catalog import order_categories

# -- shared reads ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    """A hotkey's stored score state."""

    hotkey: str
    uid: int
    moving_average: float
    rounds_scored: int
    responses_total: int
    responses_valid: int
    last_round_id: int | None


async def score_states(
    connection: AsyncConnection, *, hotkeys: Sequence[str] | None = None, limit: int | None = None
) -> list[Standing]:
    """Score states, best moving average first: those of ``hotkeys``, or the top ``limit``."""
    query = select(
        ScoreState.hotkey,
        ScoreState.uid,
        ScoreState.moving_average,
        ScoreState.rounds_scored,
        ScoreState.responses_total,
        ScoreState.responses_valid,
        ScoreState.last_round_id,
    ).order_by(ScoreState.moving_average.desc(), ScoreState.hotkey)
    if hotkeys is not None:
        query = query.where(ScoreState.hotkey.in_(list(hotkeys)))
    if limit is not None:
        query = query.limit(limit)
    return [
        Standing(
            hotkey=str(row.hotkey),
            uid=int(row.uid),
            moving_average=float(row.moving_average),
            rounds_scored=int(row.rounds_scored),
            responses_total=int(row.responses_total),
            responses_valid=int(row.responses_valid),
            last_round_id=None if row.last_round_id is None else int(row.last_round_id),
        )
        for row in await connection.execute(query)
    ]


async def category_tallies(
    connection: AsyncConnection, hotkeys: Sequence[str], *, limit: int | None = None
) -> dict[str, dict[str, tuple[int, int]]]:
    """Per hotkey, per category: (answers valid, answers asked)."""
    tallies: dict[str, dict[str, tuple[int, int]]] = {}
    if not hotkeys:
        return tallies
    query = select(
        CategoryScore.hotkey, CategoryScore.category, CategoryScore.valid, CategoryScore.total
    ).where(CategoryScore.hotkey.in_(list(hotkeys)))
    if limit is not None:
        query = query.limit(limit)
    for row in await connection.execute(query):
        tallies.setdefault(str(row.hotkey), {})[str(row.category)] = (int(row.valid), int(row.total))
    return tallies


async def latency_medians(
    connection: AsyncConnection,
    hotkeys: Sequence[str],
    *,
    round_ids: Sequence[int] | None = None,
    limit: int | None = None,
) -> dict[str, float]:
    """Per hotkey, the median time of its answered single-turn queries (in ``round_ids`` if given).

    Episodes are left out: an episode's row times the whole episode, many requests."""
    if not hotkeys or (round_ids is not None and not round_ids):
        return {}
    query = select(ResponseRecord.hotkey, ResponseRecord.latency_s).where(
        ResponseRecord.hotkey.in_(list(hotkeys)),
        ResponseRecord.status == QueryStatus.OK.value,
        ResponseRecord.category.not_in(sorted(EPISODE_CATEGORIES)),
    )
    if round_ids is not None:
        query = query.where(ResponseRecord.round_id.in_(list(round_ids)))
    if limit is not None:
        query = query.limit(limit)
    samples: dict[str, list[float]] = defaultdict(list)
    for hotkey, latency in await connection.execute(query):
        samples[hotkey].append(float(latency))
    return {hotkey: statistics.median(values) for hotkey, values in samples.items()}


@dataclass(frozen=True)
class WeightAttempt:
    """One stored weight submission attempt."""

    id: int
    attempted_at: datetime | None
    block: int | None
    hotkeys: Any  # the hotkeys and weights as stored (JSON lists)
    weights: Any
    outcome: str
    message: str

    @property
    def accepted(self) -> bool:
        return self.outcome == WeightsOutcome.OK

    def weights_by_hotkey(self) -> dict[str, float]:
        """Its weights summed per hotkey; entries that are not a hotkey and a finite number are left out."""
        if not isinstance(self.hotkeys, list) or not isinstance(self.weights, list):
            return {}
        result: dict[str, float] = {}
        for hotkey, weight in zip(self.hotkeys, self.weights, strict=False):
            value = _float_or_none(weight)
            if isinstance(hotkey, str) and hotkey and value is not None:
                result[hotkey] = result.get(hotkey, 0.0) + value
        return result


async def weight_attempts(
    connection: AsyncConnection,
    *,
    after_id: int = 0,
    outcome: str | None = None,
    limit: int | None = None,
) -> list[WeightAttempt]:
    """Weight submission attempts after ``after_id`` (with ``outcome`` if given), newest first."""
    query = select(
        WeightSubmission.id,
        WeightSubmission.attempted_at,
        WeightSubmission.block,
        WeightSubmission.hotkeys,
        WeightSubmission.weights,
        WeightSubmission.outcome,
        WeightSubmission.message,
    ).where(WeightSubmission.id > after_id)
    if outcome is not None:
        query = query.where(WeightSubmission.outcome == outcome)
    query = query.order_by(WeightSubmission.id.desc())
    if limit is not None:
        query = query.limit(limit)
    return [
        WeightAttempt(
            id=int(row.id),
            attempted_at=row.attempted_at,
            block=None if row.block is None else int(row.block),
            hotkeys=row.hotkeys,
            weights=row.weights,
            outcome=str(row.outcome),
            message=str(row.message or ""),
        )
        for row in await connection.execute(query)
    ]


def _float_or_none(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _clamped_score() -> Any:
    """The score as the validator folds it into averages (clamped to [0, 1]), in portable SQL."""
    return case(
        (ResponseRecord.score < 0.0, 0.0),
        (ResponseRecord.score > 1.0, 1.0),
        else_=ResponseRecord.score,
    )


# -- the dashboard's snapshot ---------------------------------------------------------------------


class DashboardReader:
    """Builds a :class:`Snapshot` with a bounded number of bounded queries."""

    def __init__(self, engine: AsyncEngine, *, alpha: float, limits: DashboardLimits | None = None) -> None:
        self.engine = engine
        self.alpha = alpha
        self.limits = limits or DashboardLimits()

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[AsyncConnection]:
        """A connection for one page's reads, rolled back after them (never committed)."""
        async with self.engine.connect() as connection:
            if connection.dialect.name == "postgresql":
                # One consistent view of all the tables, and the server refuses any write.
                connection = await connection.execution_options(
                    isolation_level="REPEATABLE READ", postgresql_readonly=True
                )
            try:
                yield connection
            finally:
                await connection.rollback()

    async def snapshot(self) -> Snapshot:
        limits = self.limits
        async with self.reading() as connection:
            states = await score_states(connection, limit=limits.leaderboard_rows)
            leaderboard = await self._leaderboard(connection, states)
            chart_hotkeys = [row.hotkey for row in leaderboard][: limits.chart_series]
            submissions = await weight_attempts(connection, limit=limits.weight_submissions)
            accepted = [attempt for attempt in reversed(submissions) if attempt.accepted]
            snapshot = Snapshot(
                generated_at=datetime.now(UTC),
                alpha=self.alpha,
                leaderboard=leaderboard,
                categories=await self._categories(connection),
                rounds=await self._rounds(connection),
                samples=await self._samples(connection),
                weights=[_weight_row(attempt) for attempt in submissions[: limits.weight_rows]],
                moving_average_chart=await self._moving_average_chart(connection, states, chart_hotkeys),
                weight_chart=weight_chart(
                    [(attempt.block, attempt.weights_by_hotkey()) for attempt in accepted], chart_hotkeys
                ),
            )
        return snapshot

    async def _leaderboard(self, connection: AsyncConnection, states: list[Standing]) -> list[LeaderboardRow]:
        hotkeys = [state.hotkey for state in states]
        tallies = await category_tallies(connection, hotkeys, limit=len(hotkeys) * 64)
        rounds = await self._recent_scored_round_ids(connection, self.limits.latency_rounds)
        latencies = await latency_medians(
            connection,
            hotkeys,
            round_ids=[round_id for round_id, _ in rounds],
            limit=self.limits.latency_samples,
        )
        latest = await weight_attempts(connection, outcome=WeightsOutcome.OK.value, limit=1)
        weights = latest[0].weights_by_hotkey() if latest else None
        return [
            LeaderboardRow(
                rank=rank,
                hotkey=state.hotkey,
                uid=state.uid,
                moving_average=state.moving_average,
                rounds_scored=state.rounds_scored,
                responses=state.responses_total,
                valid_rate=state.responses_valid / state.responses_total if state.responses_total else None,
                category_accuracy={
                    category: valid / total
                    for category, (valid, total) in tallies.get(state.hotkey, {}).items()
                    if total
                },
                latency_p50_s=latencies.get(state.hotkey),
                weight=weights.get(state.hotkey) if weights is not None else None,
            )
            for rank, state in enumerate(states, start=1)
        ]

    async def _recent_scored_round_ids(
        self, connection: AsyncConnection, count: int
    ) -> list[tuple[int, int]]:
        """(id, number) of the latest ``count`` scored rounds, oldest first."""
        rows = await connection.execute(
            select(Round.id, Round.number)
            .where(Round.status == RoundStatus.SCORED.value)
            .order_by(Round.number.desc())
            .limit(count)
        )
        return [(int(row.id), int(row.number)) for row in rows][::-1]

    async def _categories(self, connection: AsyncConnection) -> list[CategoryRow]:
        rows = await connection.execute(
            select(
                CategoryScore.category,
                func.sum(CategoryScore.total),
                func.sum(CategoryScore.valid),
                func.sum(CategoryScore.score_sum),
            )
            .group_by(CategoryScore.category)
            .limit(256)
        )
        by_name = {
            str(category): CategoryRow(
                category=str(category),
                total=int(total or 0),
                valid=int(valid or 0),
                mean_score=float(score_sum or 0.0) / int(total) if total else 0.0,
            )
            for category, total, valid, score_sum in rows
        }
        return [by_name[name] for name in order_categories(by_name)]

    async def _rounds(self, connection: AsyncConnection) -> list[RoundRow]:
        rounds = list(
            (
                await connection.execute(
                    select(
                        Round.id,
                        Round.number,
                        Round.status,
                        Round.block,
                        Round.n_tasks,
                        Round.n_miners,
                        Round.started_at,
                        Round.finished_at,
                        Round.note,
                        Round.phrasing,
                    )
                    .order_by(Round.number.desc())
                    .limit(self.limits.recent_rounds)
                )
            ).all()
        )
        finished_ids = [row.id for row in rounds if row.status in FINISHED_STATUSES]
        tallies: dict[int, tuple[int, int, float]] = {}
        if finished_ids:
            for round_id, count, valid, mean in await connection.execute(
                select(
                    ResponseRecord.round_id,
                    func.count(),
                    func.sum(case((ResponseRecord.valid, 1), else_=0)),
                    func.avg(_clamped_score()),
                )
                .where(ResponseRecord.round_id.in_(finished_ids))
                .group_by(ResponseRecord.round_id)
            ):
                tallies[int(round_id)] = (int(count), int(valid or 0), float(mean or 0.0))
        result = []
        for row in rounds:
            finished = row.status in FINISHED_STATUSES
            count, valid, mean = tallies.get(row.id, (0, 0, 0.0))
            result.append(
                RoundRow(
                    number=int(row.number),
                    status=str(row.status),
                    block=int(row.block),
                    n_tasks=int(row.n_tasks),
                    n_miners=int(row.n_miners),
                    started_at=row.started_at,
                    finished_at=row.finished_at,
                    note=str(row.note or ""),
                    requests=requests_text(row.phrasing),
                    responses=count if finished else None,
                    valid=valid if finished else None,
                    mean_score=(mean if count else None) if finished else None,
                )
            )
        return result

    async def _samples(self, connection: AsyncConnection) -> list[SampleTask]:
        limits = self.limits
        rounds = (
            await connection.execute(
                select(Round.id, Round.number, Round.status)
                .where(Round.status.in_(FINISHED_STATUSES))
                .order_by(Round.number.desc())
                .limit(limits.sample_rounds)
            )
        ).all()
        samples: list[SampleTask] = []
        episode_categories = sorted(EPISODE_CATEGORIES)
        for round_row in rounds:
            for wanted, count in (
                (TaskRecord.category.not_in(episode_categories), limits.sample_tasks_per_round),
                (TaskRecord.category.in_(episode_categories), limits.sample_episodes_per_round),
            ):
                if count <= 0:
                    continue
                tasks = await connection.execute(
                    select(
                        TaskRecord.id,
                        TaskRecord.task_key,
                        TaskRecord.category,
                        TaskRecord.payload,
                        TaskRecord.expected,
                    )
                    .join(Round, Round.id == TaskRecord.round_id)
                    # Checked again here, not only above: a running round's tasks must never be read out.
                    .where(TaskRecord.round_id == round_row.id, Round.status.in_(FINISHED_STATUSES), wanted)
                    .order_by(TaskRecord.id)
                    .limit(count)
                )
                for task in tasks.all():
                    answers = await self._answers(connection, int(round_row.id), int(task.id))
                    place = (
                        int(round_row.number),
                        str(round_row.status),
                        str(task.task_key),
                        str(task.category),
                    )
                    if place[3] in EPISODE_CATEGORIES:
                        samples.append(episode_sample(*place, task.payload, answers, limits))
                    else:
                        samples.append(task_sample(*place, task.payload, task.expected, answers, limits))
        return samples

    async def _answers(self, connection: AsyncConnection, round_id: int, task_id: int) -> list[SampleAnswer]:
        limit = self.limits.raw_output_chars
        rows = await connection.execute(
            select(
                ResponseRecord.hotkey,
                ResponseRecord.uid,
                ResponseRecord.status,
                ResponseRecord.valid,
                ResponseRecord.score,
                ResponseRecord.error_type,
                ResponseRecord.latency_s,
                func.substr(ResponseRecord.raw_output, 1, limit).label("raw_head"),
                func.length(ResponseRecord.raw_output).label("raw_length"),
                ResponseRecord.raw_truncated,
            )
            .where(ResponseRecord.round_id == round_id, ResponseRecord.task_id == task_id)
            .order_by(ResponseRecord.score.desc(), ResponseRecord.hotkey)
            .limit(self.limits.answers_per_task)
        )
        return [
            SampleAnswer(
                hotkey=str(row.hotkey),
                uid=int(row.uid),
                status=str(row.status),
                valid=bool(row.valid),
                score=float(row.score),
                error_type=str(row.error_type or ""),
                latency_s=float(row.latency_s),
                raw_output=row.raw_head,
                truncated=bool(row.raw_truncated) or int(row.raw_length or 0) > limit,
            )
            for row in rows
        ]

    async def _moving_average_chart(
        self, connection: AsyncConnection, states: list[Standing], hotkeys: list[str]
    ) -> Chart:
        rounds = await self._recent_scored_round_ids(connection, self.limits.history_rounds)
        series: list[Series] = []
        if rounds and hotkeys:
            number_of = dict(rounds)
            # Per category, so that each round's mean is the one the validator folded in:
            # episodes weigh half, a forbidden action zeroes the round (state.RoundSummary).
            summaries: dict[tuple[int, str], RoundSummary] = {}
            for round_id, hotkey, category, count, score_sum, unsafe in await connection.execute(
                select(
                    ResponseRecord.round_id,
                    ResponseRecord.hotkey,
                    ResponseRecord.category,
                    func.count(),
                    func.sum(_clamped_score()),
                    func.max(case((ResponseRecord.error_type == UNSAFE_ERROR, 1), else_=0)),
                )
                .where(ResponseRecord.round_id.in_(list(number_of)), ResponseRecord.hotkey.in_(hotkeys))
                .group_by(ResponseRecord.round_id, ResponseRecord.hotkey, ResponseRecord.category)
            ):
                summary = summaries.setdefault((int(round_id), hotkey), RoundSummary(hotkey, 0))
                summary.total += int(count)
                summary.score_sum += float(score_sum or 0.0)
                if category in EPISODE_CATEGORIES:
                    summary.episode_total += int(count)
                    summary.episode_score_sum += float(score_sum or 0.0)
                    summary.unsafe = summary.unsafe or bool(unsafe)
            means: dict[str, list[tuple[int, float]]] = defaultdict(list)
            for (round_id, hotkey), summary in summaries.items():
                if summary.total:
                    means[hotkey].append((round_id, summary.mean_score))
            state_of = {state.hotkey: state for state in states}
            for hotkey in hotkeys:
                state = state_of[hotkey]
                # Only rounds already folded into the stored average: one scored after the
                # states were read must not be replayed against it.
                last = state.last_round_id if state.last_round_id is not None else -1
                history = sorted((number_of[rid], mean) for rid, mean in means.get(hotkey, []) if rid <= last)
                if not history:
                    continue
                values = replay_moving_averages(
                    [mean for _, mean in history],
                    alpha=self.alpha,
                    final=state.moving_average,
                    complete=len(history) >= state.rounds_scored,
                )
                points = [(float(number), value) for (number, _), value in zip(history, values, strict=True)]
                series.append(Series(label=hotkey, points=points))
        return moving_average_chart(rounds, series)


async def read_episode(reader: DashboardReader, query: EpisodeQuery) -> EpisodeRecord | None:
    """The row, if the round is finished, the key is one of its episodes and the hotkey answered it."""
    async with reader.reading() as connection:
        row = (
            await connection.execute(
                select(
                    Round.number,
                    Round.status,
                    TaskRecord.task_key,
                    TaskRecord.category,
                    TaskRecord.payload,
                    ResponseRecord.hotkey,
                    ResponseRecord.uid,
                    ResponseRecord.status.label("response_status"),
                    ResponseRecord.valid,
                    ResponseRecord.score,
                    ResponseRecord.error_type,
                    ResponseRecord.error,
                    ResponseRecord.latency_s,
                    ResponseRecord.transcript,
                )
                .join(TaskRecord, TaskRecord.round_id == Round.id)
                .join(
                    ResponseRecord,
                    (ResponseRecord.task_id == TaskRecord.id) & (ResponseRecord.round_id == Round.id),
                )
                .where(
                    Round.number == query.round_number,
                    # Never a running (or collected) round's episodes: checked in the query itself.
                    Round.status.in_(FINISHED_STATUSES),
                    TaskRecord.task_key == query.task_key,
                    TaskRecord.category.in_(sorted(EPISODE_CATEGORIES)),
                    ResponseRecord.hotkey == query.hotkey,
                )
                .limit(1)
            )
        ).first()
    if row is None:
        return None
    return EpisodeRecord(
        round_number=int(row.number),
        round_status=str(row.status),
        task_key=str(row.task_key),
        category=str(row.category),
        payload=row.payload,
        hotkey=str(row.hotkey),
        uid=int(row.uid),
        status=str(row.response_status),
        valid=bool(row.valid),
        score=float(row.score),
        error_type=str(row.error_type or ""),
        error=str(row.error or ""),
        latency_s=float(row.latency_s or 0.0),
        transcript=EpisodeTranscript.from_json(row.transcript),
    )


def _weight_row(attempt: WeightAttempt) -> WeightRow:
    uids = attempt.hotkeys if isinstance(attempt.hotkeys, list) else []
    return WeightRow(
        attempted_at=attempt.attempted_at,
        block=attempt.block,
        outcome=attempt.outcome,
        n_uids=len(uids),
        message=clip(attempt.message, 300),
    )
