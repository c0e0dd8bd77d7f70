"""Playing a task set against one endpoint, on the validator's own parts.

The tasks come from the validator's task source (:class:`LibraryTasks`), each request is the one
a validator sends (:func:`subnet.validator.request.build_request`), and each answer is judged by
the validator's judge (:class:`BfclJudge`); the endpoint is opened by
:mod:`subnet.evaluate.endpoint`. Nothing the endpoint returns is executed.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from subnet.evaluate.endpoint import open_endpoint
from subnet.evaluate.settings import EvaluateError, EvaluateSettings
from subnet.phrasing import PhrasingSetupError
from subnet.phrasing.session import PhrasingSession
from subnet.transport import QueryResult, QueryStatus
from subnet.validator.judge import BfclJudge, Judge
from subnet.validator.request import build_request
from subnet.validator.task_source import LibraryTasks, TaskLike
from tasks import SourceFileError, TaskConfigError, derive_round_seed

# --------------------------------------------------------------------------- the tasks


def task_source(settings: EvaluateSettings) -> LibraryTasks:
    """The validator's task source for the run's flags (--tasks.*, and --category as a mix)."""
    mix = {category: 1.0 / len(settings.categories) for category in settings.categories} or None
    if settings.sources is None:
        return LibraryTasks(None, mix)
    try:
        return LibraryTasks.from_flag(settings.sources, settings.paths, mix)
    except (TaskConfigError, SourceFileError) as exc:
        raise EvaluateError(f"--tasks.sources {settings.sources!r}: {exc}") from None


def build_tasks(settings: EvaluateSettings) -> list[TaskLike]:
    """The run's tasks: the validator's task source drawn with the run's seed, each given a fresh
    surface (tool_shuffle) as a validator gives each miner; phrased first with --phrasing.*."""
    source = task_source(settings)
    try:
        generated = list(source.generate(settings.seed, settings.n))
    except (TaskConfigError, SourceFileError) as exc:
        raise EvaluateError(f"--tasks.sources {settings.sources!r}: {exc}") from None
    if settings.phrasing is not None:
        generated = _phrased(settings, generated, source)
    # A variant seed derived from the run seed: reproducible, but not the generator's own seed.
    variant_seed = (settings.seed * 1_000_003 + 7) % 2**63
    return [source.variant(task, variant_seed) for task in generated]


def _phrased(settings: EvaluateSettings, generated: list[Any], source: LibraryTasks) -> list[Any]:
    """The tasks with their requests rewritten by the phrasing engine, as a validator's round has them."""
    try:
        with PhrasingSession(settings.phrasing, source.redraw) as session:
            result = session.phrase(generated, derive_round_seed(b"evaluate", 0, "0x00", settings.seed))
    except PhrasingSetupError as exc:
        raise EvaluateError(str(exc)) from None
    if generated and not result.tasks:
        raise EvaluateError(f"no request could be phrased: {result.stats.summary()}")
    print(result.stats.summary(), file=sys.stderr)
    return list(result.tasks)


# --------------------------------------------------------------------------- one run


@dataclass(frozen=True)
class TaskResult:
    """One scored task. `status` is the transport's word for how the request ended."""

    task_id: str
    category: str
    status: QueryStatus
    valid: bool
    score: float
    error_type: str | None
    latency_s: float
    http_status: int | None = None


def score_result(task: TaskLike, result: QueryResult, judge: Judge) -> TaskResult:
    """The validator's verdict on one answer; a request that got none is invalid with score 0 and
    error type `transport:<status>`, as the validator records it."""

    def scored(valid: bool, score: float, error_type: str | None) -> TaskResult:
        return TaskResult(
            task_id=str(task.id),
            category=str(task.category),
            status=result.status,
            valid=valid,
            score=score,
            error_type=error_type,
            latency_s=result.latency_s,
            http_status=result.http_status,
        )

    if not result.ok or result.completion is None:
        return scored(False, 0.0, f"transport:{result.status.value}")
    judgement = judge.judge(result.completion.message, task)
    error_type = None if judgement.valid else (judgement.error_type or "unknown")
    return scored(judgement.valid, judgement.score, error_type)


ProgressCallback = Callable[[int, int, TaskResult], None]


async def run_evaluation(
    settings: EvaluateSettings,
    task_list: Sequence[TaskLike],
    progress: ProgressCallback | None = None,
    on_start: Callable[[str], None] | None = None,
    finished: list[TaskResult] | None = None,
    judge: Judge | None = None,
) -> tuple[str, list[TaskResult], float]:
    """Query the endpoint with every task (at most `concurrency` at once) and judge each answer.

    `on_start(model)` runs once the endpoint has answered the reachability probe; `finished`
    (when given) receives each result as it completes, so an interrupted run can still report
    what it has. Returns the model name used, the results in task order and the wall time in
    seconds. Raises EvaluateError when the endpoint cannot be reached at all.
    """
    judge = judge if judge is not None else BfclJudge()
    started = time.perf_counter()
    async with open_endpoint(settings) as endpoint:
        if on_start is not None:
            on_start(endpoint.model)
        gate = asyncio.Semaphore(settings.concurrency)
        done = 0
        results: list[TaskResult | None] = [None] * len(task_list)

        async def one(index: int, task: TaskLike) -> None:
            nonlocal done
            async with gate:
                answer = await endpoint.query(
                    endpoint.target, build_request(task.messages, task.tools, settings.max_new_tokens)
                )
            result = score_result(task, answer, judge)
            results[index] = result
            if finished is not None:
                finished.append(result)
            done += 1
            if progress is not None:
                progress(done, len(task_list), result)

        await asyncio.gather(*(one(i, task) for i, task in enumerate(task_list)))
    scored = [result for result in results if result is not None]
    if scored and all(result.status is QueryStatus.REFUSED for result in scored):
        raise EvaluateError(f"{settings.endpoint} stopped answering: every request failed to connect")
    return endpoint.model, scored, time.perf_counter() - started
