"""A round's time budget: the most one miner's work may take, and the most the round job may take.

Both come from the round's parts, here and nowhere else, so that no miner's slowness can run a
round past its job's timeout (which would discard the round for every miner):

- a single-call task is one request, bounded by the query timeout (``--query.timeout``); a
  miner's tasks go out together, so all of them take one query timeout;
- an episode is bounded by its deadline (``--round.episode_deadline``) and by its step cap: it
  sends at most (turns x step cap) requests, one for an ``agent_step``, each bounded by the
  query timeout, and each step may run its calls' tools (``MAX_CALLS_PER_STEP`` calls of at most
  ``tool_call_s`` each);
- a miner plays its episodes one after the other, while its tasks are answered;
- a request may wait for a connection slot behind the miner's other requests of the round (the
  transport holds ``--round.tasks`` per miner; the last ones free theirs within one query
  timeout): one more query timeout. Past ``--query.concurrency`` requests in the whole round, a
  request can also wait for a slot another miner's request holds; keep the concurrency at or
  above miners x (tasks + 1) so that nobody's budget is spent waiting;
- the round job adds the phrasing step (the round's tasks, then its episodes' user turns, each
  under ``--phrasing.deadline``; nothing with the ``templates`` engine) and the round's own work
  (creating it, storing and scoring responses, the standings): ``settle_s``.

The round runs each miner's work under ``miner_s`` of the round's episodes (see
``subnet.validator.rounds``); the round job's timeout is ``job_s``, the same sum for the worst
episodes the settings allow, plus phrasing and ``settle_s``. docs/validator.md has the figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from subnet.validator.sandbox import CALL_DEADLINE_S
from tasks.episodes.runner import MAX_CALLS_PER_STEP

__all__ = ["RoundBudget"]

#: The longest one tool call may run: the sandbox's per-call wall deadline.
TOOL_CALL_S = CALL_DEADLINE_S
#: What a miner's work may take beyond its parts: an episode's checking after its deadline, the
#: scheduling of its coroutines on a loop busy with every other miner.
MINER_SLACK_S = 5.0
#: The round's own work besides the miners': creating it, storing and scoring the responses and
#: folding the standings (about a second for 256 miners; the rest is margin for a slow database).
SETTLE_S = 60.0


@dataclass(frozen=True)
class RoundBudget:
    """The time parts of a round, in seconds; see the module docstring."""

    query_timeout_s: float = 30.0
    episode_deadline_s: float = 120.0
    n_tasks: int = 8
    n_episodes: int = 4
    # The phrasing step's bound: 0 when nothing is rewritten (the templates engine).
    phrasing_s: float = 0.0
    tool_call_s: float = TOOL_CALL_S
    slack_s: float = MINER_SLACK_S
    settle_s: float = SETTLE_S

    @classmethod
    def from_settings(cls, settings: Any, *, phrases: bool) -> RoundBudget:
        """The budget of ``subnet.config.ValidatorSettings``; ``phrases``: whether the phrasing
        engine rewrites requests (any but ``templates``)."""
        return cls(
            query_timeout_s=float(settings.query.timeout),
            episode_deadline_s=float(settings.round.episode_deadline),
            n_tasks=int(settings.round.tasks),
            n_episodes=int(settings.round.episodes),
            # The tasks are phrased, then the episodes' turns, each under the stage's deadline.
            phrasing_s=2.0 * float(settings.phrasing.deadline) if phrases else 0.0,
        )

    def episode_s(self, episode: Any = None) -> float:
        """The most one episode may take (``episode``: a ``tasks.episodes.Episode``; None for the
        longest the settings allow): its deadline, or less when its step cap ends it sooner."""
        if episode is None:
            return self.episode_deadline_s
        if episode.single_step:  # one request; no tool runs
            by_steps = self.query_timeout_s
        else:
            requests = len(episode.turns) * int(episode.step_cap)
            by_steps = requests * (self.query_timeout_s + MAX_CALLS_PER_STEP * self.tool_call_s)
        return min(self.episode_deadline_s, by_steps)

    def miner_s(self, episodes: Sequence[Any] | None = None, n_tasks: int | None = None) -> float:
        """The most one miner's work in a round may take: its tasks (``n_tasks``, default the
        settings') alongside its ``episodes`` one after the other (None: ``n_episodes`` of the
        longest kind), plus a slot wait and ``slack_s``."""
        tasks = self.n_tasks if n_tasks is None else n_tasks
        shapes: Sequence[Any] = [None] * self.n_episodes if episodes is None else episodes
        tasks_s = self.query_timeout_s if tasks > 0 else 0.0
        episodes_s = sum(self.episode_s(episode) for episode in shapes)
        return max(tasks_s, episodes_s) + self.query_timeout_s + self.slack_s

    @property
    def job_s(self) -> float:
        """The round job's timeout: phrasing, the longest miner's work, and the round's own."""
        return self.phrasing_s + self.miner_s() + self.settle_s
