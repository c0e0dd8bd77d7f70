"""``python -m subnet.evaluate --endpoint URL --episodes N``: multi-turn episodes against an endpoint.

Each episode is played as a validator plays it: the miner's variant (tool_shuffle), every step
one chat completion with the whole history through the same client as single-turn evaluation
(signed for a running miner, paced, bounded), the calls dispatched on the simulated environment
and the episode judged by ``scoring.check_episode``. Reported per category: success rate, share of
turns passed, unsafe episodes, mean steps per episode and step latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["EpisodeResult", "render_episodes", "run_episodes"]


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


class _NoAnswer(RuntimeError):
    """The endpoint did not answer a step (status and detail in the message)."""


async def run_episodes(settings: Any, count: int) -> tuple[str, list[EpisodeResult]]:
    """Play ``count`` episodes (seed ``settings.seed``) against the endpoint; (model, results)."""
    from scoring import check_episode
    from subnet.evaluate import STATUS_OK, EndpointClient, EvaluateError, load_signer
    from tasks import SourceFileError, TaskConfigError, parse_source_shares
    from tasks.episodes import EpisodeRunner, agent_step, generate_episodes, load_episode_sources, variant

    try:
        sources = (
            load_episode_sources(parse_source_shares(settings.sources))
            if settings.sources is not None
            else None
        )
        episodes = generate_episodes(settings.seed, count, sources=sources)
    except (TaskConfigError, SourceFileError) as exc:
        raise EvaluateError(f"--tasks.sources {settings.sources!r}: {exc}") from None
    variant_seed = (settings.seed * 1_000_003 + 11) % 2**63
    async with EndpointClient(settings, load_signer(settings)) as client:
        listed = await client.probe()
        model = settings.model if settings.model is not None else (listed or "")
        gate = asyncio.Semaphore(settings.concurrency)

        async def play(episode: Any) -> EpisodeResult:
            shown = variant(episode, variant_seed)
            latencies: list[float] = []

            async def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
                body = {
                    "model": model,
                    "messages": messages,
                    "tools": tools,
                    "tool_choice": "auto",
                    "max_tokens": settings.max_tokens,
                    "temperature": settings.temperature,
                }
                answer = await client.complete(body)
                latencies.append(answer.latency_s)
                if answer.status != STATUS_OK or answer.message is None:
                    raise _NoAnswer(f"{answer.status} {answer.detail}".strip())
                return answer.message

            async with gate:
                if shown.category == "agent_step":
                    task = agent_step(shown)
                    message = None
                    with contextlib.suppress(_NoAnswer):
                        message = await ask(task.messages, task.tools)
                    from scoring import check

                    functions = [tool["function"] for tool in task.tools]
                    verdict = (
                        check(message, functions, task.expected, "simple") if message is not None else None
                    )
                    valid = bool(verdict and verdict.valid)
                    return EpisodeResult(
                        shown.id,
                        shown.category,
                        valid,
                        verdict.score if verdict else 0.0,
                        None if valid else (verdict.error_type if verdict else "multi_turn:no_answer"),
                        1.0 if valid else 0.0,
                        False,
                        1,
                        tuple(latencies),
                    )
                transcript = await EpisodeRunner(shown, ask).play()
            verdict = check_episode(transcript, shown)
            return EpisodeResult(
                shown.id,
                shown.category,
                bool(verdict.valid),
                float(verdict.score),
                verdict.error_type,
                float(verdict.components.get("turns", 0.0)),
                verdict.components.get("safety", 1.0) == 0.0,
                transcript.steps,
                tuple(latencies),
            )

        results = await asyncio.gather(*(play(episode) for episode in episodes))
    return model, list(results)


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
