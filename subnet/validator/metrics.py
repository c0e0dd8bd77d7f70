"""The validator's Prometheus series, in a registry of its own (never the global one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from subnet.registry import engine_rewrites

ROUND_BUCKETS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)


@dataclass(frozen=True)
class ValidatorMetrics:
    rounds: Counter
    responses: Counter
    round_seconds: Histogram
    weights_attempts: Counter
    job_runs: Counter
    job_seconds: Histogram
    miners_queried: Gauge
    last_round_number: Gauge
    chain_view_age: Gauge
    phrasing_tasks: Counter
    phrasing_rejections: Counter
    phrasing_seconds: Counter
    phrasing_tokens: Counter

    @classmethod
    def register(cls, registry: CollectorRegistry) -> ValidatorMetrics:
        return cls(
            rounds=Counter("subnet_validator_rounds", "Rounds by outcome", ["outcome"], registry=registry),
            responses=Counter(
                "subnet_validator_responses",
                "Stored responses by query status",
                ["status"],
                registry=registry,
            ),
            round_seconds=Histogram(
                "subnet_validator_round_seconds",
                "Wall time of a round",
                buckets=ROUND_BUCKETS,
                registry=registry,
            ),
            weights_attempts=Counter(
                "subnet_validator_weights_attempts",
                "Weight-setting attempts by outcome",
                ["outcome"],
                registry=registry,
            ),
            job_runs=Counter(
                "subnet_validator_job_runs",
                "Scheduled job runs by job and outcome",
                ["job", "outcome"],
                registry=registry,
            ),
            job_seconds=Histogram(
                "subnet_validator_job_seconds",
                "Scheduled job duration",
                ["job"],
                buckets=ROUND_BUCKETS,
                registry=registry,
            ),
            miners_queried=Gauge(
                "subnet_validator_miners_queried", "Miners queried in the last round", registry=registry
            ),
            last_round_number=Gauge(
                "subnet_validator_last_round", "Number of the last scored round", registry=registry
            ),
            chain_view_age=Gauge(
                "subnet_validator_metagraph_age_seconds",
                "Age of the metagraph rounds run against (grows while the chain is away)",
                registry=registry,
            ),
            phrasing_tasks=Counter(
                "subnet_validator_phrasing_tasks",
                "Task slots by phrasing outcome (phrased, dropped, unfilled, template) and retries",
                ["outcome"],
                registry=registry,
            ),
            phrasing_rejections=Counter(
                "subnet_validator_phrasing_rejections",
                "Rewordings rejected, by reason",
                ["reason"],
                registry=registry,
            ),
            phrasing_seconds=Counter(
                "subnet_validator_phrasing_seconds", "Wall time spent phrasing requests", registry=registry
            ),
            phrasing_tokens=Counter(
                "subnet_validator_phrasing_tokens",
                "Tokens the phrasing engine read (prompt) and wrote (completion)",
                ["kind"],
                registry=registry,
            ),
        )

    def phrasing_done(self, stats: dict[str, Any]) -> None:
        """Count one round's phrasing (``PhrasingStats.to_dict``)."""
        if not engine_rewrites(str(stats.get("engine"))):
            self.phrasing_tasks.labels("template").inc(stats.get("slots", 0))
            return
        for outcome in ("phrased", "retried", "dropped", "unfilled"):
            self.phrasing_tasks.labels(outcome).inc(stats.get(outcome, 0))
        for reason, count in dict(stats.get("rejected", {})).items():
            self.phrasing_rejections.labels(reason).inc(count)
        self.phrasing_seconds.inc(stats.get("wall_s", 0.0))
        self.phrasing_tokens.labels("prompt").inc(stats.get("prompt_tokens", 0))
        self.phrasing_tokens.labels("completion").inc(stats.get("completion_tokens", 0))

    def job_finished(self, job: str, outcome: str, seconds: float) -> None:
        self.job_runs.labels(job, outcome).inc()
        self.job_seconds.labels(job).observe(seconds)
