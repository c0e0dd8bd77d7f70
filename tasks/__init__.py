"""Task generation for the subnet: tool library, BFCL categories, tool_shuffle, rotation, sources.

Public API::

    generate(seed, n, mix=None, sources=None) -> list[Task]
    variant(task, seed) -> Task
    redraw(task, seed, sources=None) -> Task       # a replacement of the same category/source
    derive_round_seed(secret, netuid, block_hash, round_number) -> bytes
    derive_miner_seed(round_seed, hotkey) -> bytes
    load_sources(shares, paths=None) -> list[Source]; load_episode_sources(shares, paths=None)
    CATEGORIES, Task, Source, load_bfcl, load_xlam, parse_source_shares
"""

from __future__ import annotations

from tasks.categories import CATEGORIES, Category, default_mix
from tasks.errors import SourceFileError, TaskConfigError
from tasks.model import GENERATOR_VERSION, Task
from tasks.seeding import derive_miner_seed, derive_round_seed
from tasks.sources import load_bfcl, load_episode_sources, load_sources, load_xlam, parse_source_shares
from tasks.task_sets import BUILTIN, Source, generate, redraw, variant

__all__ = [
    "BUILTIN",
    "CATEGORIES",
    "GENERATOR_VERSION",
    "Category",
    "Source",
    "SourceFileError",
    "Task",
    "TaskConfigError",
    "default_mix",
    "derive_miner_seed",
    "derive_round_seed",
    "generate",
    "load_bfcl",
    "load_episode_sources",
    "load_sources",
    "load_xlam",
    "parse_source_shares",
    "redraw",
    "variant",
]
