"""The validator's seam to the task generator: :class:`TaskSource`, and its default :class:`LibraryTasks`.

The round pipeline only sees the protocol; the default wraps ``tasks`` (imported when first
used, not at import time). Tests and simulations pass their own. ``python -m subnet.evaluate``
draws its tasks from the same default, so the two never disagree on what a task set is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the module loads tasks when first used (see above); the type is for mypy
    from tasks import Task
    from tasks.episodes import Episode, EpisodeSource

import tasks
from tasks.episodes import generate_episodes
from tasks.seeding import sub_seed
from tasks.sources import load_episode_sources, load_sources, parse_source_shares


class TaskLike(Protocol):
    """What the validator reads from a task (``tasks.Task`` satisfies it)."""

    @property
    def id(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def messages(self) -> list[dict[str, Any]]: ...
    @property
    def tools(self) -> list[dict[str, Any]]: ...
    @property
    def expected(self) -> list[Any]: ...
    @property
    def source(self) -> str: ...
    @property
    def generator_version(self) -> str: ...
    @property
    def scoring_category(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


class TaskSource(Protocol):
    """Everything a round asks of its tasks' source (the round pipeline calls nothing else)."""

    def round_seed(self, secret: bytes, netuid: int, block_hash: str, round_number: int) -> bytes: ...
    def miner_seed(self, round_seed: bytes, hotkey: str) -> bytes: ...
    def generate(self, seed: bytes, n: int) -> Sequence[TaskLike]: ...
    def variant(self, task: TaskLike, seed: bytes) -> TaskLike: ...

    def episodes(self, seed: bytes, n: int) -> Sequence[Episode]:
        """The round's ``n`` multi-turn episodes (an empty sequence: a source without any)."""
        ...

    def redraw(self, task: TaskLike, seed: bytes) -> TaskLike:
        """A replacement of the same category or source, for a task whose request could not be
        phrased."""
        ...


@dataclass
class LibraryTasks:
    """The default task source: ``tasks.generate`` / ``tasks.variant`` with the HMAC seeds.

    ``sources`` are ``tasks.Source`` entries (from ``--tasks.sources``); None is the builtin
    generator with the registry's category shares. ``mix`` narrows the builtin generator to
    some categories (``{category: share}``; evaluate's ``--category``); None is the registry's.
    """

    sources: Sequence[Any] | None = None
    mix: Mapping[str, float] | None = None
    #: The episodes' sources (``tasks.sources.load_episode_sources``, from the same ``--tasks.sources``);
    #: None: the builtin generator.
    episode_sources: Sequence[EpisodeSource] | None = None

    @classmethod
    def from_flag(
        cls,
        text: str,
        paths: Mapping[str, Sequence[Any]] | None = None,
        mix: Mapping[str, float] | None = None,
    ) -> LibraryTasks:
        """Parse ``--tasks.sources`` (``builtin=0.8,bfcl=0.2``) and load the pools it names, from
        the files of each file flag in ``paths`` (``{"bfcl": [...], "xlam": [...]}``).

        Raises ``tasks.TaskConfigError`` / ``tasks.SourceFileError`` with a one-line reason.
        """

        shares = parse_source_shares(text)
        if set(shares) <= {tasks.BUILTIN}:
            return cls(None, mix)
        files = {flag: list(files) or None for flag, files in (paths or {}).items()}
        return cls(load_sources(shares, paths=files), mix, load_episode_sources(shares, paths=files))

    def round_seed(self, secret: bytes, netuid: int, block_hash: str, round_number: int) -> bytes:

        return bytes(tasks.derive_round_seed(secret, netuid, block_hash, round_number))

    def miner_seed(self, round_seed: bytes, hotkey: str) -> bytes:

        return bytes(tasks.derive_miner_seed(round_seed, hotkey))

    def generate(self, seed: bytes | int, n: int) -> Sequence[TaskLike]:

        return tasks.generate(seed, n, mix=self.mix, sources=list(self.sources) if self.sources else None)

    def episodes(self, seed: bytes, n: int) -> Sequence[Episode]:
        """The round's multi-turn episodes (tasks.episodes), from a seed of their own."""

        sources = list(self.episode_sources) if self.episode_sources else None
        return generate_episodes(sub_seed(seed, b"episodes"), n, sources=sources)

    def redraw(self, task: TaskLike, seed: bytes) -> Task:
        """A new task of the same category or source, for one whose request could not be phrased."""

        if not isinstance(task, tasks.Task):
            raise TypeError(f"LibraryTasks redraws tasks.Task only, got {type(task).__name__}")
        return tasks.redraw(task, seed, list(self.sources) if self.sources else None)

    def variant(self, task: TaskLike, seed: bytes | int) -> TaskLike:

        if not isinstance(task, tasks.Task):
            raise TypeError(f"LibraryTasks varies tasks.Task only, got {type(task).__name__}")
        return tasks.variant(task, seed)
