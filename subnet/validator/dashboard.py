"""The validator's read-only dashboard: leaderboard, per-category accuracy, recent rounds, charts.

One aiohttp application serves server-rendered HTML (no script at all: the
charts are SVG drawn here) plus ``/api/leaderboard`` as JSON. It only reads
the validator's tables, through an engine of its own that the database itself
holds to reading (``PRAGMA query_only`` on SQLite, read-only transactions on
PostgreSQL), with every query bounded by :class:`DashboardLimits`, and a short
cache so that reloads never add up to load on a validator mid-round.

Miners' outputs are hostile: every value goes through :func:`escape` unless it
was built by :func:`element` from escaped parts, and the Content-Security-Policy
allows no script, so even a missed escape could not run one. The tasks and
answers of a round are shown only once it is finished (``scored`` or
``discarded``): a running round's tasks would hand the answers to miners still
being queried.

Start it with :func:`start_dashboard` and stop it with ``await server.stop()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import math
import statistics
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from aiohttp import hdrs, web
from sqlalchemy import case, event, func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from subnet.config import UserError
from subnet.db import (
    CategoryScore,
    ResponseRecord,
    Round,
    RoundStatus,
    ScoreState,
    TaskRecord,
    WeightSubmission,
    create_engine,
)
from subnet.validator.state import EPISODE_CATEGORIES, UNSAFE_ERROR, RoundSummary, update_moving_average
from tasks.categories import category_title, order_categories  # the categories' registry

log = logging.getLogger(__name__)

# A round's tasks and answers become visible only in these states.
FINISHED_STATUSES: tuple[str, ...] = (RoundStatus.SCORED.value, RoundStatus.DISCARDED.value)
OK_STATUS = "ok"  # subnet.transport's QueryStatus.OK: the miner answered
WEIGHTS_SET = "ok"  # the outcome the weight setter records when the chain took the weights
REFRESH_SECONDS = 30

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

EPISODE_PATH = "/episode"


def episode_href(round_number: int, task_key: str, hotkey: str) -> str:
    """The address of one miner's transcript of one episode (served by dashboard_episodes.py)."""
    return f"{EPISODE_PATH}?{urlencode({'round': round_number, 'task': task_key, 'hotkey': hotkey})}"


class DashboardStartError(UserError):
    """The dashboard cannot listen where it was told to."""


@dataclass(frozen=True)
class DashboardLimits:
    """Bounds on every query the dashboard makes, so a page costs the same on day one and day 300."""

    leaderboard_rows: int = 256
    recent_rounds: int = 20
    history_rounds: int = 60  # scored rounds replayed for the moving-average chart
    latency_rounds: int = 10  # scored rounds the latency median is taken over
    latency_samples: int = 50_000
    weight_submissions: int = 60
    weight_rows: int = 10  # attempts listed in the table
    sample_rounds: int = 3  # finished rounds whose tasks and answers are shown
    sample_tasks_per_round: int = 3
    sample_episodes_per_round: int = 2  # and their multi-turn episodes, each answer linking its transcript
    answers_per_task: int = 8
    raw_output_chars: int = 600
    prompt_chars: int = 600
    # An episode's page (dashboard_episodes.py): each miner-written string cut at this many
    # characters, at most this many steps and calls per step shown, and all of its miner text
    # together held under a budget.
    transcript_chars: int = 2000
    transcript_steps: int = 40
    transcript_calls_per_step: int = 16
    transcript_budget_chars: int = 200_000
    chart_series: int = 8  # hotkeys drawn in the charts (the leaderboard's top ones)
    cache_seconds: float = 5.0


# -- what the page shows ----------------------------------------------------------------------


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    hotkey: str
    uid: int
    moving_average: float
    rounds_scored: int
    responses: int
    valid_rate: float | None
    category_accuracy: dict[str, float]
    latency_p50_s: float | None
    weight: float | None


@dataclass(frozen=True)
class CategoryRow:
    category: str
    total: int
    valid: int
    mean_score: float

    @property
    def accuracy(self) -> float | None:
        return self.valid / self.total if self.total else None


@dataclass(frozen=True)
class RoundRow:
    number: int
    status: str
    block: int
    n_tasks: int
    n_miners: int
    started_at: datetime | None
    finished_at: datetime | None
    note: str
    # Where the requests miners read came from: "templates", "openai: 8 of 8 phrased, ...", "" (not recorded).
    requests: str
    responses: int | None  # None while the round runs: nothing about it is shown yet
    valid: int | None
    mean_score: float | None


@dataclass(frozen=True)
class SampleAnswer:
    hotkey: str
    uid: int
    status: str
    valid: bool
    score: float
    error_type: str
    latency_s: float
    raw_output: str | None  # None once pruned
    truncated: bool
    transcript_href: str | None = None  # an episode's answer: the page of its transcript


@dataclass(frozen=True)
class SampleTask:
    round_number: int
    round_status: str
    task_key: str
    category: str
    prompt: str
    tool_names: list[str]
    expected: str
    answers: list[SampleAnswer]
    environment: str = ""  # an episode's environment; "" for a single-turn task
    turns: int = 0  # an episode's user turns

    @property
    def is_episode(self) -> bool:
        return self.category in EPISODE_CATEGORIES


@dataclass(frozen=True)
class WeightRow:
    attempted_at: datetime | None
    block: int | None
    outcome: str
    n_uids: int
    message: str


@dataclass(frozen=True)
class Series:
    label: str
    points: list[tuple[float, float]]


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    x_label: str
    y_max: float
    series: list[Series]
    x_ticks: list[tuple[float, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Snapshot:
    generated_at: datetime
    alpha: float
    leaderboard: list[LeaderboardRow]
    categories: list[CategoryRow]
    rounds: list[RoundRow]
    samples: list[SampleTask]
    weights: list[WeightRow]
    moving_average_chart: Chart
    weight_chart: Chart

    @property
    def category_names(self) -> list[str]:
        return order_categories({name for row in self.leaderboard for name in row.category_accuracy})

    def leaderboard_json(self) -> dict[str, Any]:
        return {
            "generated_at": self.generated_at.isoformat(),
            "alpha": self.alpha,
            "rows": [asdict(row) for row in self.leaderboard],
            "categories": [{**asdict(row), "accuracy": row.accuracy} for row in self.categories],
            "last_weights": _weight_json(self.weights[0]) if self.weights else None,
        }


def _weight_json(row: WeightRow) -> dict[str, Any]:
    return {
        "attempted_at": row.attempted_at.isoformat() if row.attempted_at else None,
        "block": row.block,
        "outcome": row.outcome,
        "n_uids": row.n_uids,
    }


# -- the moving average, replayed -------------------------------------------------------------


def replay_moving_averages(
    round_means: Sequence[float], *, alpha: float, final: float, complete: bool
) -> list[float]:
    """A hotkey's moving average after each of its rounds in ``round_means`` (oldest first).

    ``complete``: the rounds are the hotkey's whole history, so the average is
    replayed forward from 0 exactly as the validator folds rounds in. Otherwise
    the window starts mid-history and the values are recovered backwards from
    the stored ``final`` average (the one after the last round), inverting
    ``m = alpha * x + (1 - alpha) * previous``; a changed ``--scoring.alpha``
    makes that approximate, so values are kept within [0, 1].
    """
    if not round_means:
        return []
    if complete:
        values: list[float] = []
        average = 0.0
        for mean in round_means:
            average = update_moving_average(average, mean, alpha)
            values.append(average)
        return values
    if alpha >= 1.0:  # no memory: the average is the round's mean
        return [*round_means[:-1], final]
    backwards = [final]
    for mean in reversed(round_means[1:]):
        previous = (backwards[-1] - alpha * mean) / (1.0 - alpha)
        backwards.append(min(max(previous, 0.0), 1.0))
    return backwards[::-1]


# -- reading ----------------------------------------------------------------------------------


def _clamped_score() -> Any:
    """The score as the validator folds it into averages (clamped to [0, 1]), in portable SQL."""
    return case(
        (ResponseRecord.score < 0.0, 0.0),
        (ResponseRecord.score > 1.0, 1.0),
        else_=ResponseRecord.score,
    )


def _float_or_none(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _prompt_of(payload: Any, limit: int) -> tuple[str, list[str]]:
    """The last user message and the offered tool names of a stored task payload."""
    if not isinstance(payload, dict):
        return "", []
    prompt = ""
    for message in payload.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            prompt = content if isinstance(content, str) else json.dumps(content, default=str)
    names: list[str] = []
    for tool in payload.get("tools") or []:
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return _clip(prompt, limit), names


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


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
        async with self.reading() as connection:
            states = await self._states(connection)
            leaderboard = await self._leaderboard(connection, states)
            hotkeys = [row.hotkey for row in leaderboard]
            chart_hotkeys = hotkeys[: self.limits.chart_series]
            submissions = await self._weight_submissions(connection)
            snapshot = Snapshot(
                generated_at=datetime.now(UTC),
                alpha=self.alpha,
                leaderboard=leaderboard,
                categories=await self._categories(connection),
                rounds=await self._rounds(connection),
                samples=await self._samples(connection),
                weights=[_weight_row(row) for row in submissions[: self.limits.weight_rows]],
                moving_average_chart=await self._moving_average_chart(connection, states, chart_hotkeys),
                weight_chart=_weight_chart(submissions, chart_hotkeys),
            )
        return snapshot

    async def _states(self, connection: AsyncConnection) -> list[Any]:
        rows = await connection.execute(
            select(
                ScoreState.hotkey,
                ScoreState.uid,
                ScoreState.moving_average,
                ScoreState.rounds_scored,
                ScoreState.responses_total,
                ScoreState.responses_valid,
                ScoreState.last_round_id,
            )
            .order_by(ScoreState.moving_average.desc(), ScoreState.hotkey)
            .limit(self.limits.leaderboard_rows)
        )
        return list(rows.all())

    async def _leaderboard(self, connection: AsyncConnection, states: list[Any]) -> list[LeaderboardRow]:
        hotkeys = [state.hotkey for state in states]
        accuracy: dict[str, dict[str, float]] = defaultdict(dict)
        if hotkeys:
            for row in await connection.execute(
                select(CategoryScore.hotkey, CategoryScore.category, CategoryScore.total, CategoryScore.valid)
                .where(CategoryScore.hotkey.in_(hotkeys))
                .limit(len(hotkeys) * 64)
            ):
                if row.total:
                    accuracy[row.hotkey][row.category] = row.valid / row.total
        latencies = await self._latency_medians(connection, hotkeys)
        weights = await self._latest_weights(connection)
        return [
            LeaderboardRow(
                rank=rank,
                hotkey=state.hotkey,
                uid=int(state.uid),
                moving_average=float(state.moving_average),
                rounds_scored=int(state.rounds_scored),
                responses=int(state.responses_total),
                valid_rate=state.responses_valid / state.responses_total if state.responses_total else None,
                category_accuracy=dict(accuracy.get(state.hotkey, {})),
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

    async def _latency_medians(self, connection: AsyncConnection, hotkeys: list[str]) -> dict[str, float]:
        rounds = await self._recent_scored_round_ids(connection, self.limits.latency_rounds)
        if not rounds or not hotkeys:
            return {}
        samples: dict[str, list[float]] = defaultdict(list)
        for hotkey, latency in await connection.execute(
            select(ResponseRecord.hotkey, ResponseRecord.latency_s)
            .where(
                ResponseRecord.round_id.in_([round_id for round_id, _ in rounds]),
                ResponseRecord.status == OK_STATUS,
                ResponseRecord.hotkey.in_(hotkeys),
                # One request per answer: an episode's row times the whole episode.
                ResponseRecord.category.not_in(sorted(EPISODE_CATEGORIES)),
            )
            .limit(self.limits.latency_samples)
        ):
            samples[hotkey].append(float(latency))
        return {hotkey: statistics.median(values) for hotkey, values in samples.items()}

    async def _latest_weights(self, connection: AsyncConnection) -> dict[str, float] | None:
        """Weight per hotkey in the latest submission the chain took; None when there is none yet."""
        row = (
            await connection.execute(
                select(WeightSubmission.hotkeys, WeightSubmission.weights)
                .where(WeightSubmission.outcome == WEIGHTS_SET)
                .order_by(WeightSubmission.id.desc())
                .limit(1)
            )
        ).first()
        if row is None:
            return None
        return _weights_by_hotkey(row.hotkeys, row.weights)

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
                    requests=_requests_text(row.phrasing),
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
                    samples.append(await self._sample(connection, round_row, task))
        return samples

    async def _sample(self, connection: AsyncConnection, round_row: Any, task: Any) -> SampleTask:
        limits = self.limits
        category = str(task.category)
        answers = await self._answers(connection, int(round_row.id), int(task.id))
        if category not in EPISODE_CATEGORIES:
            prompt, tool_names = _prompt_of(task.payload, limits.prompt_chars)
            expected = _clip(json.dumps(task.expected, default=str), limits.prompt_chars)
            return SampleTask(
                round_number=int(round_row.number),
                round_status=str(round_row.status),
                task_key=str(task.task_key),
                category=category,
                prompt=prompt,
                tool_names=tool_names,
                expected=expected,
                answers=answers,
            )
        from subnet.validator.dashboard_episodes import episode_sample

        return episode_sample(
            int(round_row.number),
            str(round_row.status),
            str(task.task_key),
            category,
            task.payload,
            answers,
            limits,
        )

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

    async def _weight_submissions(self, connection: AsyncConnection) -> list[Any]:
        """The latest attempts, newest first."""
        rows = await connection.execute(
            select(
                WeightSubmission.id,
                WeightSubmission.attempted_at,
                WeightSubmission.block,
                WeightSubmission.hotkeys,
                WeightSubmission.weights,
                WeightSubmission.outcome,
                WeightSubmission.message,
            )
            .order_by(WeightSubmission.id.desc())
            .limit(self.limits.weight_submissions)
        )
        return list(rows.all())

    async def _moving_average_chart(
        self, connection: AsyncConnection, states: list[Any], hotkeys: list[str]
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
                    final=float(state.moving_average),
                    complete=len(history) >= int(state.rounds_scored),
                )
                points = [(float(number), value) for (number, _), value in zip(history, values, strict=True)]
                series.append(Series(label=hotkey, points=points))
        ticks = [(float(number), f"round {number}") for number in _ends([number for _, number in rounds])]
        return Chart(
            key="moving-averages",
            title="Moving average by round",
            x_label="round",
            y_max=1.0,
            series=series,
            x_ticks=ticks,
        )


def _ends(values: Sequence[int]) -> list[int]:
    if not values:
        return []
    return sorted({values[0], values[-1]})


def _weights_by_hotkey(hotkeys: Any, weights: Any) -> dict[str, float]:
    if not isinstance(hotkeys, list) or not isinstance(weights, list):
        return {}
    result: dict[str, float] = {}
    for hotkey, weight in zip(hotkeys, weights, strict=False):
        value = _float_or_none(weight)
        if isinstance(hotkey, str) and hotkey and value is not None:
            result[hotkey] = result.get(hotkey, 0.0) + value
    return result


def _weight_row(row: Any) -> WeightRow:
    uids = row.hotkeys if isinstance(row.hotkeys, list) else []
    return WeightRow(
        attempted_at=row.attempted_at,
        block=int(row.block) if row.block is not None else None,
        outcome=str(row.outcome),
        n_uids=len(uids),
        message=_clip(str(row.message or ""), 300),
    )


def _weight_chart(submissions: list[Any], hotkeys: list[str]) -> Chart:
    accepted = [row for row in reversed(submissions) if row.outcome == WEIGHTS_SET]
    by_submission = [_weights_by_hotkey(row.hotkeys, row.weights) for row in accepted]
    series = []
    if accepted:
        for hotkey in hotkeys:
            points = [(float(index), weights.get(hotkey, 0.0)) for index, weights in enumerate(by_submission)]
            if any(value > 0.0 for _, value in points):
                series.append(Series(label=hotkey, points=points))
    highest = max((value for line in series for _, value in line.points), default=0.0)
    ticks = [
        (
            float(index),
            f"block {accepted[index].block}" if accepted[index].block is not None else f"#{index + 1}",
        )
        for index in _ends(list(range(len(accepted))))
    ]
    return Chart(
        key="weights",
        title="Weights set on chain",
        x_label="submission",
        y_max=_nice_ceiling(highest),
        series=series,
        x_ticks=ticks,
    )


def _nice_ceiling(value: float) -> float:
    for step in (0.05, 0.1, 0.2, 0.25, 0.5):
        if value <= step:
            return step
    return 1.0


# -- HTML -------------------------------------------------------------------------------------


class Html(str):
    """Markup already escaped, or built by :func:`element` from escaped parts."""

    __slots__ = ()


def escape(value: object) -> Html:
    """Text as HTML; markup built here passes through, anything else (a plain str too) is escaped."""
    if isinstance(value, Html):
        return value
    return Html(html.escape(str(value), quote=True))


def join(parts: Iterable[object]) -> Html:
    return Html("".join(escape(part) for part in parts))


def element(tag: str, *children: object, **attributes: object) -> Html:
    """``<tag attr="...">children</tag>``.

    ``class_`` becomes ``class``, ``data_x`` becomes ``data-x``; attributes whose value is None are left out.
    """
    rendered = "".join(
        f' {name.rstrip("_").replace("_", "-")}="{escape(value)}"'
        for name, value in attributes.items()
        if value is not None
    )
    return Html(f"<{tag}{rendered}>{join(children)}</{tag}>")


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100.0 * value:.1f}%"


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _when(value: datetime | None) -> str:
    if value is None:
        return "—"
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%d %H:%M:%S")


def _short(hotkey: str) -> Html:
    shown = hotkey if len(hotkey) <= 14 else f"{hotkey[:6]}…{hotkey[-6:]}"
    return element("code", shown, title=hotkey)


def _table(
    key: str, headers: Sequence[object], rows: Iterable[Html], empty: str, caption: str | None = None
) -> Html:
    body = list(rows)
    if not body:
        return element("p", empty, class_="empty", id=key)
    head = element("thead", element("tr", *(element("th", header, scope="col") for header in headers)))
    return element(
        "table",
        element("caption", caption) if caption else "",
        head,
        element("tbody", *body),
        id=key,
    )


def _leaderboard_html(snapshot: Snapshot) -> Html:
    categories = snapshot.category_names
    headers: list[object] = ["#", "uid", "hotkey", "moving avg", "rounds", "responses", "valid"]
    headers += [_category_header(name) for name in categories]
    headers += ["latency p50", "weight"]
    rows = (
        element(
            "tr",
            element("td", row.rank),
            element("td", row.uid),
            element("td", _short(row.hotkey)),
            element("td", _number(row.moving_average), class_="num strong"),
            element("td", row.rounds_scored, class_="num"),
            element("td", row.responses, class_="num"),
            element("td", _percent(row.valid_rate), class_="num"),
            *(element("td", _percent(row.category_accuracy.get(name)), class_="num") for name in categories),
            element("td", "—" if row.latency_p50_s is None else f"{row.latency_p50_s:.2f} s", class_="num"),
            element("td", _number(row.weight, 4), class_="num"),
            data_hotkey=row.hotkey,
        )
        for row in snapshot.leaderboard
    )
    return _table("leaderboard", headers, rows, "No miner has been scored yet.")


def _category_header(name: str) -> Html:
    """A category's column title; the stored name in its tooltip, episodes marked as such."""
    episode = name in EPISODE_CATEGORIES
    return element(
        "span",
        category_title(name),
        title=f"episodes: {name}" if episode else name,
        class_="episode-category" if episode else None,
        data_category=name,
    )


def _category_cell(name: str) -> Html:
    title = category_title(name)
    if title == name:
        return element("td", name)
    return element("td", title, " ", element("code", name, class_="muted"))


def _categories_html(snapshot: Snapshot) -> Html:
    rows = (
        element(
            "tr",
            _category_cell(row.category),
            element("td", "episode" if row.category in EPISODE_CATEGORIES else "single-turn"),
            element("td", row.total, class_="num"),
            element("td", row.valid, class_="num"),
            element("td", _percent(row.accuracy), class_="num strong"),
            element("td", _number(row.mean_score), class_="num"),
            data_category=row.category,
        )
        for row in snapshot.categories
    )
    headers = ["category", "kind", "responses", "valid", "accuracy", "mean score"]
    return _table(
        "categories",
        headers,
        rows,
        "No scored responses yet.",
        caption="An episode counts as valid when every one of its turns passed.",
    )


def _requests_text(phrasing: Any) -> str:
    """What a round's phrasing record says, in a few words."""
    if not isinstance(phrasing, dict):
        return ""
    engine = str(phrasing.get("engine", "?"))
    if engine == "templates":
        return "template text (no phrasing engine)"
    parts = [f"{engine}: {phrasing.get('phrased', 0)} of {phrasing.get('slots', 0)} phrased"]
    for key in ("retried", "dropped", "unfilled"):
        if phrasing.get(key):
            parts.append(f"{phrasing[key]} {key}")
    return ", ".join(parts)


def _rounds_html(snapshot: Snapshot) -> Html:
    def counts(row: RoundRow) -> list[Html]:
        if row.responses is None:
            return [element("td", "hidden until the round ends", colspan=3, class_="muted")]
        return [
            element("td", row.responses, class_="num"),
            element("td", row.valid, class_="num"),
            element("td", _number(row.mean_score), class_="num"),
        ]

    rows = (
        element(
            "tr",
            element("td", row.number, class_="num"),
            element("td", element("span", row.status, class_=f"status status-{row.status}")),
            element("td", row.block, class_="num"),
            element("td", row.n_tasks, class_="num"),
            element("td", row.n_miners, class_="num"),
            element("td", row.requests, class_="note"),
            *counts(row),
            element("td", _when(row.started_at), class_="when"),
            element("td", _when(row.finished_at), class_="when"),
            element("td", row.note, class_="note"),
            data_round=row.number,
            data_status=row.status,
        )
        for row in snapshot.rounds
    )
    headers = [
        "round",
        "status",
        "block",
        "tasks",
        "miners",
        "requests",
        "responses",
        "valid",
        "mean",
        "started",
        "finished",
    ]
    headers.append("note")
    return _table("rounds", headers, rows, "No rounds yet.", caption="Times in UTC.")


def _answer_html(answer: SampleAnswer) -> Html:
    if answer.transcript_href is not None:
        output: Html = element("a", "transcript", href=answer.transcript_href, class_="transcript")
    elif answer.raw_output is None:
        output = element("span", "(raw output pruned or empty)", class_="muted")
    else:
        output = element("pre", answer.raw_output + ("…" if answer.truncated else ""), class_="raw")
    verdict = "valid" if answer.valid else (answer.error_type or "invalid")
    return element(
        "tr",
        element("td", _short(answer.hotkey), " ", element("span", f"uid {answer.uid}", class_="muted")),
        element("td", answer.status),
        element("td", verdict, class_="valid" if answer.valid else "invalid"),
        element("td", _number(answer.score, 2), class_="num"),
        element("td", f"{answer.latency_s:.2f} s", class_="num"),
        element("td", output),
    )


def _samples_html(snapshot: Snapshot) -> Html:
    if not snapshot.samples:
        return element("p", "No finished round yet.", class_="empty", id="samples")
    blocks = []
    for position, sample in enumerate(snapshot.samples):
        answers = _table(
            f"answers-{sample.round_number}-{sample.task_key}",
            [
                "miner",
                "status",
                "verdict",
                "score",
                "latency",
                "transcript" if sample.is_episode else "raw output",
            ],
            (_answer_html(answer) for answer in sample.answers),
            "No answers stored.",
        )
        if sample.is_episode:
            turns = "1 turn" if sample.turns == 1 else f"{sample.turns} turns"
            kind = f"{category_title(sample.category)} episode in {sample.environment}, {turns}"
            prompt_label = "first turn: "
        else:
            kind, prompt_label = sample.category, "prompt: "
        blocks.append(
            element(
                "details",
                element(
                    "summary",
                    f"round {sample.round_number} ({sample.round_status}) · {kind} · ",
                    element("code", sample.task_key),
                ),
                element("p", element("strong", prompt_label), sample.prompt),
                element("p", element("strong", "tools: "), ", ".join(sample.tool_names) or "none"),
                element("p", element("strong", "expected: "), element("code", sample.expected)),
                answers,
                class_="sample episode" if sample.is_episode else "sample",
                data_round=sample.round_number,
                data_category=sample.category,
                open="" if position == 0 else None,  # one example unfolded; the rest on a click
            )
        )
    note = element(
        "p",
        "Tasks and answers of the latest finished rounds. Each miner answered its own variant of the "
        "task, with renamed tools, so names in its output differ from the ones listed here. An "
        "episode's answers link to each miner's transcript, turn by turn.",
        class_="muted",
    )
    return element("div", note, *blocks, id="samples")


def _weights_html(snapshot: Snapshot) -> Html:
    rows = (
        element(
            "tr",
            element("td", _when(row.attempted_at)),
            element("td", "—" if row.block is None else row.block, class_="num"),
            element("td", row.outcome, class_="valid" if row.outcome == WEIGHTS_SET else "invalid"),
            element("td", row.n_uids, class_="num"),
            element("td", row.message, class_="note"),
        )
        for row in snapshot.weights
    )
    return _table(
        "weight-submissions", ["attempted", "block", "outcome", "uids", "message"], rows, "None yet."
    )


# -- charts: SVG drawn here, no script ----------------------------------------------------------

CHART_WIDTH = 640
CHART_HEIGHT = 260
CHART_MARGIN = (16, 16, 34, 48)  # top, right, bottom, left


def render_chart(chart: Chart) -> Html:
    """An SVG line chart with a legend; an empty chart says so instead."""
    figure_id = f"chart-{chart.key}"
    if not chart.series:
        return element(
            "figure",
            element("figcaption", chart.title),
            element("p", "Nothing to draw yet.", class_="empty"),
            id=figure_id,
            class_="chart",
            data_series=0,
        )
    top, right, bottom, left = CHART_MARGIN
    plot_w, plot_h = CHART_WIDTH - left - right, CHART_HEIGHT - top - bottom
    xs = [x for line in chart.series for x, _ in line.points] + [x for x, _ in chart.x_ticks]
    x_min, x_max = min(xs), max(xs)
    x_span = (x_max - x_min) or 1.0

    def px(x: float) -> float:
        return left + (x - x_min) / x_span * plot_w if x_max > x_min else left + plot_w / 2

    def py(y: float) -> float:
        return top + plot_h - min(max(y, 0.0), chart.y_max) / chart.y_max * plot_h

    parts: list[Html] = []
    for step in range(5):
        y = chart.y_max * step / 4
        parts.append(
            element("line", x1=left, x2=left + plot_w, y1=f"{py(y):.1f}", y2=f"{py(y):.1f}", class_="grid")
        )
        parts.append(
            element("text", f"{y:g}", x=left - 6, y=f"{py(y) + 4:.1f}", class_="axis", text_anchor="end")
        )
    for x, label in chart.x_ticks:
        # Labels at the plot's edges grow inwards, so that none is cut off by the frame.
        anchor = (
            "start" if px(x) < left + plot_w / 3 else "end" if px(x) > left + 2 * plot_w / 3 else "middle"
        )
        parts.append(
            element("text", label, x=f"{px(x):.1f}", y=CHART_HEIGHT - 10, class_="axis", text_anchor=anchor)
        )
    for index, line in enumerate(chart.series):
        colour = f"s{index % 8}"
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line.points)
        parts.append(
            element("polyline", element("title", line.label), points=coords, class_=f"line {colour}")
        )
        parts.extend(
            element(
                "circle",
                element("title", f"{line.label}: {y:.3f}"),
                cx=f"{px(x):.1f}",
                cy=f"{py(y):.1f}",
                r=2.5,
                class_=f"dot {colour}",
            )
            for x, y in line.points
        )
    svg = element(
        "svg",
        element("title", chart.title),
        *parts,
        viewBox=f"0 0 {CHART_WIDTH} {CHART_HEIGHT}",
        role="img",
        class_="plot",
        xmlns="http://www.w3.org/2000/svg",
    )
    legend = element(
        "ul",
        *(
            element("li", element("span", "", class_=f"swatch s{index % 8}"), _short(line.label))
            for index, line in enumerate(chart.series)
        ),
        class_="legend",
    )
    return element(
        "figure",
        element("figcaption", chart.title),
        svg,
        legend,
        id=figure_id,
        class_="chart",
        data_series=len(chart.series),
    )


def render_page(snapshot: Snapshot) -> str:
    latest = snapshot.rounds[0] if snapshot.rounds else None
    last_weights = snapshot.weights[0] if snapshot.weights else None
    facts = element(
        "ul",
        element("li", element("strong", len(snapshot.leaderboard)), " miners scored"),
        element(
            "li", "latest round ", element("strong", f"{latest.number} ({latest.status})" if latest else "—")
        ),
        element(
            "li",
            "last weights ",
            element(
                "strong",
                f"{last_weights.outcome} at {_when(last_weights.attempted_at)}" if last_weights else "—",
            ),
        ),
        element("li", "moving-average alpha ", element("strong", f"{snapshot.alpha:g}")),
        class_="facts",
    )
    body = element(
        "body",
        element(
            "header",
            element("h1", "Validator dashboard"),
            element(
                "p",
                f"Read-only, as of {_when(snapshot.generated_at)} UTC; reloads every {REFRESH_SECONDS} s. ",
                element("a", "JSON", href="/api/leaderboard"),
                class_="muted",
            ),
            facts,
        ),
        element(
            "main",
            element("section", element("h2", "Leaderboard"), _leaderboard_html(snapshot)),
            element(
                "section",
                element("h2", "Over time"),
                element(
                    "div",
                    render_chart(snapshot.moving_average_chart),
                    render_chart(snapshot.weight_chart),
                    class_="charts",
                ),
            ),
            element("section", element("h2", "Accuracy by category"), _categories_html(snapshot)),
            element("section", element("h2", "Recent rounds"), _rounds_html(snapshot)),
            element("section", element("h2", "Sample tasks and answers"), _samples_html(snapshot)),
            element("section", element("h2", "Weight submissions"), _weights_html(snapshot)),
        ),
    )
    return html_document("Validator dashboard", body, refresh_seconds=REFRESH_SECONDS)


def html_document(title: str, body: Html, *, refresh_seconds: int | None = None) -> str:
    """A whole page: the head (the stylesheet, a reload when asked) and ``body``."""
    refresh = f'<meta http-equiv="refresh" content="{refresh_seconds}">' if refresh_seconds else ""
    head = Html(
        '<head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"{refresh}{element('title', title)}"
        '<link rel="stylesheet" href="/static/dashboard.css"></head>'
    )
    return f'<!DOCTYPE html>\n<html lang="en">{head}{body}</html>\n'


STYLESHEET = """
:root { --fg: #1d2330; --muted: #6b7280; --line: #e3e6ec; --bg: #ffffff; --band: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0; padding: 0 24px 32px; font: 14px/1.45 system-ui, sans-serif;
  color: var(--fg); background: var(--bg); }
header { border-bottom: 1px solid var(--line); margin-bottom: 12px; }
h1 { font-size: 22px; margin: 18px 0 2px; }
h2 { font-size: 17px; margin: 22px 0 8px; }
.muted, .empty { color: var(--muted); }
.facts { list-style: none; display: flex; flex-wrap: wrap; gap: 8px 28px; padding: 0; margin: 8px 0 14px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
caption { caption-side: bottom; text-align: left; color: var(--muted); font-size: 12px; padding-top: 4px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--band); font-weight: 600; white-space: nowrap; }
td.num { text-align: right; white-space: nowrap; }
td.strong { font-weight: 600; }
td.when { white-space: nowrap; }
td.note { color: var(--muted); max-width: 28em; }
.valid { color: #137333; }
.invalid { color: #b3261e; }
.status { padding: 1px 6px; border-radius: 8px; background: var(--band); }
.status-scored { background: #e6f4ea; }
.status-running, .status-collected { background: #fff4d6; }
.status-discarded { background: #fce8e6; }
code { font-family: ui-monospace, monospace; font-size: 12.5px; }
pre.raw { margin: 0; max-width: 60em; max-height: 12em; overflow: auto; white-space: pre-wrap;
  word-break: break-all; font-size: 12px; background: var(--band); padding: 4px 6px; }
details.sample { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; margin: 8px 0; }
details.sample summary { cursor: pointer; font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; }
figure.chart { margin: 0; flex: 1 1 520px; max-width: 720px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg.plot { width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg .axis { fill: var(--muted); font-size: 11px; }
svg .line { fill: none; stroke-width: 2; }
.legend { list-style: none; padding: 0; margin: 6px 0 0; display: flex; flex-wrap: wrap; gap: 4px 16px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px;
  vertical-align: -1px; }
.s0 { stroke: #0072b2; fill: #0072b2; background: #0072b2; }
.s1 { stroke: #e69f00; fill: #e69f00; background: #e69f00; }
.s2 { stroke: #009e73; fill: #009e73; background: #009e73; }
.s3 { stroke: #cc79a7; fill: #cc79a7; background: #cc79a7; }
.s4 { stroke: #56b4e9; fill: #56b4e9; background: #56b4e9; }
.s5 { stroke: #d55e00; fill: #d55e00; background: #d55e00; }
.s6 { stroke: #7f7f7f; fill: #7f7f7f; background: #7f7f7f; }
.s7 { stroke: #1d2330; fill: #1d2330; background: #1d2330; }
svg .line.s0, svg .line.s1, svg .line.s2, svg .line.s3, svg .line.s4, svg .line.s5, svg .line.s6,
svg .line.s7 { fill: none; }
"""


# -- serving ----------------------------------------------------------------------------------


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

    async def snapshot_or_503() -> Snapshot:
        try:
            return await cache.get()
        except Exception as exc:
            log.warning("dashboard could not read the database: %s", exc)
            raise web.HTTPServiceUnavailable(
                text="the validator's database cannot be read right now"
            ) from None

    async def page(_request: web.Request) -> web.Response:
        snapshot = await snapshot_or_503()
        return web.Response(text=render_page(snapshot), content_type="text/html", charset="utf-8")

    async def leaderboard(_request: web.Request) -> web.Response:
        snapshot = await snapshot_or_503()
        return web.json_response(snapshot.leaderboard_json())

    async def stylesheet(_request: web.Request) -> web.Response:
        return web.Response(
            text=STYLESHEET + EPISODE_STYLESHEET,
            content_type="text/css",
            charset="utf-8",
            headers={"Cache-Control": "max-age=300"},
        )

    async def no_icon(_request: web.Request) -> web.Response:
        return web.Response(status=204)

    from subnet.validator.dashboard_episodes import EPISODE_STYLESHEET, episode_page_handler

    app = web.Application(middlewares=[_host_check(allowed_hosts)])
    app.router.add_get("/", page)
    app.router.add_get(EPISODE_PATH, episode_page_handler(reader))
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
    :meth:`DashboardReader.snapshot`).
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
