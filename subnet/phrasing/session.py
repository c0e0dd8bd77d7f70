"""Running a phrasing engine over tasks: for the validator's rounds and for the command lines.

``RoundPhraser`` runs ``tasks.phrasing.phrase`` for a round's tasks (the validator's and
``subnet.evaluate``'s rounds), and phrases the next round's tasks while the current round runs
(``prefetch``/``take``), so a round with a model engine takes no longer than one without. A
prepared round's seed comes from the block hash seen when it was prepared (that block and hash are
what the round records), still under the validator's secret. With the ``templates`` engine nothing
is rewritten and nothing is prepared ahead; the round records that its text came from templates.
``PhrasingSession`` is one engine for a command-line run, used from synchronous code.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from subnet.phrasing import PhrasingSetupError, build_engine
from tasks import Task
from tasks.episodes.turn_phrasing import phrase_episodes
from tasks.phrasing import Phrased, PhrasingEngine, PhrasingPolicy, PhrasingStats, phrase
from tasks.seeding import sub_seed

__all__ = ["PhrasedRound", "PhrasingSession", "PreparedRound", "RoundPhraser", "policy_from"]

log = logging.getLogger(__name__)


def policy_from(settings: Any) -> PhrasingPolicy:
    """The stage's bounds from ``--phrasing.*`` (``subnet.config.PhrasingSettings``)."""
    return PhrasingPolicy(
        attempts=settings.attempts,
        replacements=settings.replacements,
        verify=settings.verify,
        attempt_timeout=settings.timeout,
        deadline=settings.deadline,
        concurrency=settings.concurrency,
    )


@dataclass
class PhrasedRound:
    """A round's tasks and episodes as miners will read them, and what phrasing them took."""

    tasks: list[Any]
    episodes: list[Any]
    stats: PhrasingStats


@dataclass
class PreparedRound:
    """A round's tasks phrased ahead of time, with the seed inputs they were drawn from."""

    number: int
    block: int
    block_hash: str
    seed: bytes
    work: asyncio.Task[PhrasedRound]


class RoundPhraser:
    """Phrases rounds with one engine; see the module docstring."""

    def __init__(
        self,
        engine: PhrasingEngine,
        policy: PhrasingPolicy,
        redraw: Callable[[Task, bytes], Task] | None = None,
    ) -> None:
        self.engine = engine
        self.policy = policy
        self.redraw = redraw
        self._prepared: PreparedRound | None = None

    @property
    def rewrites(self) -> bool:
        return bool(self.engine.rewrites)

    async def phrase(self, tasks: Sequence[Any], seed: bytes) -> Phrased:
        """The round's tasks as miners will read them, and what phrasing them took."""
        if not self.rewrites:
            return Phrased(list(tasks), PhrasingStats(self.engine.name, slots=len(tasks)))
        for task in tasks:
            if not isinstance(task, Task):
                raise TypeError(f"phrasing needs tasks.Task, got {type(task).__name__}")
        phrased = await phrase(list(tasks), self.engine, seed, policy=self.policy, redraw=self.redraw)
        log.info("%s", phrased.stats.summary())
        return phrased

    async def phrase_round(self, tasks: Sequence[Any], episodes: Sequence[Any], seed: bytes) -> PhrasedRound:
        """Tasks and episodes' user turns phrased; the stats count both (an episode's turns are
        slots too; an episode with a turn that could not be phrased is dropped whole)."""
        phrased = await self.phrase(tasks, seed)
        kept = list(episodes)
        if kept and self.rewrites:
            kept, turns = await phrase_episodes(kept, self.engine, sub_seed(seed, b"episodes"), self.policy)
            _merge(phrased.stats, turns)
        return PhrasedRound(phrased.tasks, kept, phrased.stats)

    def prefetch(
        self,
        number: int,
        block: int,
        block_hash: str,
        seed: bytes,
        draw: Callable[[], tuple[Sequence[Any], Sequence[Any]]],
    ) -> None:
        """Start phrasing round ``number`` (``draw()`` gives its tasks and episodes) in the
        background (model engines only)."""
        if not self.rewrites:
            return
        self.discard()

        async def work() -> PhrasedRound:
            tasks, episodes = draw()
            return await self.phrase_round(tasks, episodes, seed)

        self._prepared = PreparedRound(
            number, block, block_hash, seed, asyncio.create_task(work(), name="phrase-next-round")
        )

    async def take(self, number: int) -> tuple[PreparedRound, PhrasedRound] | None:
        """The prepared round ``number`` (waiting for it if still phrasing), or None."""
        prepared, self._prepared = self._prepared, None
        if prepared is None or prepared.number != number:
            if prepared is not None:
                prepared.work.cancel()
            return None
        try:
            return prepared, await prepared.work
        except Exception as exc:  # phrase it again in the round itself
            log.warning("phrasing round %d ahead of time failed (%s); phrasing it now", number, exc)
            return None

    def discard(self) -> None:
        """Cancel a round being phrased ahead."""
        prepared, self._prepared = self._prepared, None
        if prepared is not None:
            prepared.work.cancel()

    async def close(self) -> None:
        prepared, self._prepared = self._prepared, None
        if prepared is not None:
            prepared.work.cancel()
            with contextlib.suppress(BaseException):
                await prepared.work
        await self.engine.close()


def _merge(into: PhrasingStats, more: PhrasingStats) -> None:
    for name in ("slots", "phrased", "retried", "dropped", "unfilled", "prompt_tokens", "completion_tokens"):
        setattr(into, name, getattr(into, name) + getattr(more, name))
    into.rejected.update(more.rejected)
    into.wall_s += more.wall_s


class PhrasingSession:
    """One engine for a command-line run (``tasks sample``/``export``, ``subnet.evaluate``), started
    once and used for every batch from synchronous code: ``with PhrasingSession(settings) as
    session: session.phrase(tasks, seed)``. ``PhrasingSetupError`` (one line) when it cannot start."""

    def __init__(self, settings: Any, redraw: Callable[[Task, bytes], Task] | None = None) -> None:
        self.settings = settings
        self.engine = build_engine(settings)
        self.phraser = RoundPhraser(self.engine, policy_from(settings), redraw)
        self._runner = asyncio.Runner()

    def __enter__(self) -> PhrasingSession:
        try:
            self._runner.run(self.engine.start())
        except Exception as exc:  # a bad model path, an unset API key: the user's to fix
            self._runner.close()
            raise PhrasingSetupError(f"phrasing engine {self.settings.engine}: {exc}") from None
        return self

    def phrase(self, tasks: Sequence[Task], seed: bytes) -> Phrased:
        return self._runner.run(self.phraser.phrase(tasks, seed))

    def __exit__(self, *_exc: object) -> None:
        try:
            self._runner.run(self.engine.close())
        finally:
            self._runner.close()
