"""The report of an evaluation run: per-category summaries, and the table, Markdown and JSON forms."""

from __future__ import annotations

import json
import math
import shlex
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import IO, Any

from subnet.evaluate.run import TaskResult
from subnet.evaluate.settings import PROG, EvaluateSettings
from subnet.transport import QueryStatus


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """Nearest-rank percentile (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class CategorySummary:
    """Accuracy, mean score and latency of one category (or of the whole run)."""

    n: int
    valid: int
    accuracy: float
    mean_score: float
    latency_p50_ms: float | None
    latency_p95_ms: float | None


def summarise_group(results: Sequence[TaskResult]) -> CategorySummary:
    answered = [r.latency_s * 1000 for r in results if r.status is QueryStatus.OK]
    valid = sum(r.valid for r in results)
    n = len(results)
    p50, p95 = percentile(answered, 0.50), percentile(answered, 0.95)
    return CategorySummary(
        n=n,
        valid=valid,
        accuracy=valid / n if n else 0.0,
        mean_score=sum(r.score for r in results) / n if n else 0.0,
        latency_p50_ms=round(p50, 1) if p50 is not None else None,
        latency_p95_ms=round(p95, 1) if p95 is not None else None,
    )


@dataclass(frozen=True)
class EvaluationReport:
    """The whole run, ready to render as a table or JSON."""

    endpoint: str
    model: str
    seed: int
    n: int
    wall_s: float
    categories: dict[str, CategorySummary]
    overall: CategorySummary
    category_mean_accuracy: float  # BFCL-style: the unweighted mean of the category accuracies
    error_types: dict[str, int]
    statuses: dict[str, int]
    rerun: str = ""  # the command that repeats this run (same tasks, same surfaces)
    tasks: list[TaskResult] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def rerun_command(settings: EvaluateSettings) -> str:
    """The command line that repeats a run: same endpoint, tasks and signing (never the API key)."""
    parts = ["--endpoint", settings.endpoint, "--tasks.count", str(settings.n), "--seed", str(settings.seed)]
    for category in settings.categories:
        parts += ["--category", category]
    if settings.sources is not None:
        parts += ["--tasks.sources", settings.sources]
    for flag, paths in settings.paths.items():
        for path in paths:
            parts += [f"--tasks.{flag}", path]
    optional = {
        "--model.name": settings.model,
        "--model.api_key_env": settings.api_key_env,
        "--rate": None if settings.rate is None else f"{settings.rate:g}",
        "--wallet.name": settings.wallet_name,
        "--wallet.hotkey": settings.wallet_hotkey if settings.wallet_name else None,
        "--wallet.path": str(settings.wallet_path) if settings.wallet_path else None,
        "--miner.hotkey": settings.receiver_hotkey,
    }
    phrasing = settings.phrasing
    if phrasing is not None:
        optional.update(
            {
                "--phrasing.engine": phrasing.engine,
                "--phrasing.url": phrasing.url,
                "--phrasing.model": phrasing.model,
                "--phrasing.api_key_env": phrasing.api_key_env,
                "--phrasing.path": phrasing.path,
            }
        )
    for flag, value in optional.items():
        if value is not None:
            parts += [flag, value]
    return " ".join([PROG, *(shlex.quote(part) for part in parts)])


def summarise(
    settings: EvaluateSettings, model: str, results: Sequence[TaskResult], wall_s: float
) -> EvaluationReport:
    by_category: dict[str, list[TaskResult]] = {}
    for result in results:
        by_category.setdefault(result.category, []).append(result)
    categories = {name: summarise_group(group) for name, group in sorted(by_category.items())}
    errors = Counter(r.error_type for r in results if r.error_type)
    return EvaluationReport(
        endpoint=settings.endpoint,
        model=model,
        seed=settings.seed,
        n=len(results),
        wall_s=round(wall_s, 3),
        categories=categories,
        overall=summarise_group(results),
        category_mean_accuracy=(
            sum(c.accuracy for c in categories.values()) / len(categories) if categories else 0.0
        ),
        error_types=dict(errors.most_common()),
        statuses={str(status): count for status, count in Counter(r.status for r in results).most_common()},
        rerun=rerun_command(settings),
        tasks=list(results),
    )


# --------------------------------------------------------------------------- rendering


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _row(name: str, c: CategorySummary) -> list[str]:
    return [
        name,
        str(c.n),
        f"{c.accuracy:.1%}",
        f"{c.mean_score:.3f}",
        _ms(c.latency_p50_ms),
        _ms(c.latency_p95_ms),
    ]


def _rows(report: EvaluationReport) -> list[list[str]]:
    """One row per category, then the overall row."""
    return [*(_row(name, c) for name, c in report.categories.items()), _row("overall", report.overall)]


_HEADER = ["category", "n", "accuracy", "score", "p50 ms", "p95 ms"]


def render_table(report: EvaluationReport) -> str:
    """A fixed-width table for a terminal."""
    rows = _rows(report)
    widths = [max(len(r[i]) for r in [_HEADER, *rows]) for i in range(len(_HEADER))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest])

    rule = "-" * len(line(_HEADER))
    out = [
        f"endpoint: {report.endpoint}",
        f"model: {report.model or '(endpoint default)'}   seed: {report.seed}   tasks: {report.n}"
        f"   wall: {report.wall_s:.1f} s",
        "",
        line(_HEADER),
        rule,
        *(line(row) for row in rows[:-1]),
        rule,
        line(rows[-1]),
        f"category mean accuracy (BFCL-style): {report.category_mean_accuracy:.1%}",
        "",
    ]
    if report.error_types:
        width = max(len(name) for name in report.error_types)
        out.append("error types:")
        out.extend(f"  {name.ljust(width)}  {count}" for name, count in report.error_types.items())
    else:
        out.append("error types: none")
    refusals = http_errors(report)
    if refusals:
        out.append("http errors: " + ", ".join(f"{code} x{count}" for code, count in refusals.items()))
    out.append(f"rerun: {report.rerun}")
    return "\n".join(out)


def signing_hint(results: Sequence[TaskResult], signed: bool) -> str | None:
    """What to do when every answer was HTTP 401: an unsigned run against a miner, which serves
    registered validators only (None when some answer got through, or the run was signed)."""
    if signed or not results or any(r.http_status != 401 for r in results):
        return None
    return (
        "every answer was HTTP 401 (unauthorised): a miner only serves signed requests; sign them "
        "with --wallet.name NAME [--wallet.hotkey H] (a validator's wallet registered on the miner's "
        "subnet), or point --endpoint at an engine"
    )


def http_errors(report: EvaluationReport) -> dict[int, int]:
    """How often each HTTP code came back for the `http_error` answers (401: a miner, unsigned)."""
    codes = Counter(
        r.http_status
        for r in report.tasks
        if r.status is QueryStatus.HTTP_ERROR and r.http_status is not None
    )
    return dict(codes.most_common())


def render_markdown(report: EvaluationReport) -> str:
    """A GitHub-flavoured Markdown table, for a model card or an issue."""
    out = [
        f"Endpoint `{report.endpoint}`, model `{report.model or '-'}`, seed {report.seed}, {report.n} tasks.",
        "",
        "| " + " | ".join(_HEADER) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(_HEADER) - 1)) + "|",
    ]
    for row in _rows(report):
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    out.append(f"Category mean accuracy (BFCL-style): {report.category_mean_accuracy:.1%}")
    out.append(f"Rerun: `{report.rerun}`")
    if report.error_types:
        out.extend(["", "| error type | count |", "|---|---:|"])
        out.extend(f"| `{name}` | {count} |" for name, count in report.error_types.items())
    return "\n".join(out)


def render_json(report: EvaluationReport) -> str:
    """The whole report, per-task results included, as one JSON document."""
    return json.dumps(report.to_json(), indent=2, sort_keys=False)


RENDERERS: dict[str, Callable[[EvaluationReport], str]] = {
    "table": render_table,
    "json": render_json,
    "markdown": render_markdown,
}


class StderrProgress:
    """Progress on stderr: one rewritten line on a terminal, a line every 10% otherwise."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._tty = self._stream.isatty()
        self._valid = 0
        self._last_decile = -1

    def __call__(self, done: int, total: int, result: TaskResult) -> None:
        self._valid += result.valid
        text = f"[{done}/{total}] accuracy so far {self._valid / done:.1%}"
        if self._tty:
            self._stream.write("\r" + text + ("\n" if done == total else ""))
            self._stream.flush()
            return
        decile = done * 10 // total
        if decile != self._last_decile or done == total:
            self._last_decile = decile
            self._stream.write(text + "\n")
