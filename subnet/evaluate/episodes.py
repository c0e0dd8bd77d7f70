"""``python -m subnet.evaluate --endpoint URL --episodes N``: multi-turn episodes against an endpoint.

Each episode is played by the validator's own :class:`EpisodePlayer`: the miner's variant
(tool_shuffle), every step one chat completion with the whole history through the run's endpoint
(the validator's client for a signed run; paced, bounded), the calls dispatched on the simulated
environment and the episode judged by ``tasks.episodes.checking.check_episode``. Reported per
category: success rate, share of turns passed, unsafe episodes, mean steps per episode and step
latency. With
``--phrasing.*`` every user turn is first phrased as a validator's round phrases it (the
validator's ``RoundPhraser``; an episode any of whose turns cannot be phrased is dropped whole).
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from subnet.evaluate.endpoint import Endpoint, open_endpoint
from subnet.evaluate.settings import EvaluateError, EvaluateSettings
from subnet.phrasing import build_engine
from subnet.phrasing.session import RoundPhraser, policy_from
from subnet.protocol import ChatCompletionRequest
from subnet.transport import QueryResult, QueryTarget
from subnet.validator.episodes import EpisodeLimits, EpisodePlayer
from subnet.validator.rows import ResponseRow
from tasks import SourceFileError, TaskConfigError, derive_round_seed
from tasks.episodes import Episode, generate_episodes, variant
from tasks.sources import load_episode_sources, parse_source_shares

__all__ = ["EpisodeResult", "build_episodes", "render_episodes", "run_episodes"]


@dataclass(frozen=True)
class EpisodeResult:
    """One played episode."""

    episode_id: str
    category: str
    valid: bool
    score: float
    error_type: str | None
    turns_passed: float
    unsafe: bool
    steps: int
    latencies: tuple[float, ...]


@dataclass
class _Steps:
    """The endpoint, for one episode: every step's latency noted as it is asked."""

    endpoint: Endpoint
    latencies: list[float] = field(default_factory=list)

    async def query(self, target: QueryTarget, request: ChatCompletionRequest, **options: Any) -> QueryResult:
        result = await self.endpoint.query(target, request, **options)
        self.latencies.append(float(result.latency_s))
        return result


def _episodes(settings: EvaluateSettings, count: int) -> list[Episode]:
    try:
        sources = (
            load_episode_sources(parse_source_shares(settings.sources), paths=settings.paths)
            if settings.sources is not None
            else None
        )
        return list(generate_episodes(settings.seed, count, sources=sources))
    except (TaskConfigError, SourceFileError) as exc:
        raise EvaluateError(f"--tasks.sources {settings.sources!r}: {exc}") from None


async def build_episodes(settings: EvaluateSettings, count: int) -> list[Episode]:
    """The run's episodes: ``count`` drawn with the run's seed, their user turns phrased first
    with --phrasing.* (as a validator's round has them; template text without an engine)."""
    episodes = _episodes(settings, count)
    if settings.phrasing is None or not episodes:
        return episodes
    return await _phrased(settings, episodes)


async def _phrased(settings: EvaluateSettings, episodes: list[Episode]) -> list[Episode]:
    engine = build_engine(settings.phrasing)
    try:
        await engine.start()
    except Exception as exc:  # a bad model path, an unset API key: the user's to fix
        raise EvaluateError(f"phrasing engine {settings.phrasing.engine}: {exc}") from None
    try:
        phraser = RoundPhraser(engine, policy_from(settings.phrasing))
        seed = derive_round_seed(b"evaluate", 0, "0x00", settings.seed)
        phrased = await phraser.phrase_round([], episodes, seed)
    finally:
        await engine.close()
    if not phrased.episodes:
        raise EvaluateError(f"no episode could be phrased: {phrased.stats.summary()}")
    print(phrased.stats.summary(), file=sys.stderr)
    return list(phrased.episodes)


async def run_episodes(settings: EvaluateSettings, count: int) -> tuple[str, list[EpisodeResult]]:
    """Play ``count`` episodes (seed ``settings.seed``; phrased first with --phrasing.*) against
    the endpoint; (model, results)."""
    episodes = await build_episodes(settings, count)
    variant_seed = (settings.seed * 1_000_003 + 11) % 2**63
    # No deadline of an episode's own here: each step is bounded by --query.timeout.
    limits = EpisodeLimits(deadline_s=math.inf, max_tokens=settings.max_new_tokens)
    async with open_endpoint(settings) as endpoint:
        gate = asyncio.Semaphore(settings.concurrency)

        async def play(episode: Episode) -> EpisodeResult:
            shown = variant(episode, variant_seed)
            steps = _Steps(endpoint)
            async with gate:
                # No round, no miner: the episode's outcome, as a round would key and store it.
                outcome = await EpisodePlayer(steps, limits, _unkeyed).play(shown, endpoint.target)
            components = outcome.components
            single_call = shown.single_step
            return EpisodeResult(
                shown.id,
                outcome.category,
                outcome.valid,
                outcome.score,
                outcome.error_type,
                (1.0 if outcome.valid else 0.0) if single_call else float(components.get("turns", 0.0)),
                components.get("safety", 1.0) == 0.0,
                len(steps.latencies),
                tuple(steps.latencies),
            )

        results = await asyncio.gather(*(play(episode) for episode in episodes))
    return endpoint.model, list(results)


def _unkeyed(row: ResponseRow) -> None:
    """Rows are a round's; an evaluation reads the outcome ``play`` returns."""


def _row(name: str, results: Sequence[EpisodeResult]) -> dict[str, Any]:
    latencies = [latency for result in results for latency in result.latencies]
    return {
        "category": name,
        "episodes": len(results),
        "success": sum(result.valid for result in results) / len(results),
        "turns_passed": statistics.fmean(result.turns_passed for result in results),
        "unsafe": sum(result.unsafe for result in results),
        "mean_steps": statistics.fmean(result.steps for result in results),
        "p50_step_ms": 1e3 * statistics.median(latencies) if latencies else None,
    }


def render_episodes(model: str, results: Sequence[EpisodeResult], as_json: bool = False) -> str:
    """The per-category table (or JSON) of an episode evaluation."""
    by_category: dict[str, list[EpisodeResult]] = {}
    for result in results:
        by_category.setdefault(result.category, []).append(result)
    rows = [_row(name, by_category[name]) for name in sorted(by_category)]
    if results:
        rows.append(_row("all", results))
    if as_json:
        errors: dict[str, int] = {}
        for result in results:
            if result.error_type:
                errors[result.error_type] = errors.get(result.error_type, 0) + 1
        return json.dumps({"model": model, "categories": rows, "errors": errors}, indent=1)
    lines = [
        f"episodes against model {model or '(endpoint default)'}",
        f"{'category':<26}{'episodes':>9}{'success':>9}{'turns':>8}{'unsafe':>8}{'steps':>7}{'p50 ms':>9}",
    ]
    for row in rows:
        p50 = "-" if row["p50_step_ms"] is None else f"{row['p50_step_ms']:.0f}"
        success, turns = 100 * row["success"], 100 * row["turns_passed"]
        lines.append(
            f"{row['category']:<26}{row['episodes']:>9}{success:>8.1f}%{turns:>7.1f}%"
            f"{row['unsafe']:>8}{row['mean_steps']:>7.1f}{p50:>9}"
        )
    return "\n".join(lines)
