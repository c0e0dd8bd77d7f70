"""Task generation for the subnet: tool library, BFCL categories, tool_shuffle, rotation, sources.

Public API::

    generate(seed, n, mix=None, sources=None) -> list[Task]
    variant(task, seed) -> Task
    redraw(task, seed, sources=None) -> Task       # a replacement of the same category/source
    derive_round_seed(secret, netuid, block_hash, round_number) -> bytes
    derive_miner_seed(round_seed, hotkey) -> bytes
    CATEGORIES, Task, Source

External pools (BFCL, xLAM files) are loaded by :mod:`tasks.sources` (``load_sources``,
``load_episode_sources``, ``parse_source_shares``, ``load_bfcl``, ``load_xlam``), imported from
there: loading judges each pool task with the scorer's checker, which ``import tasks`` does not load.
"""

from __future__ import annotations

# First: where a fresh compiled build exists, importing tasks.compiled has the compiled generator
# modules load in place of the Python ones (they must not have been imported before).
from tasks import compiled

# isort: split

from tasks.categories import CATEGORIES, Category, default_mix
from tasks.errors import SourceFileError, TaskConfigError
from tasks.model import GENERATOR_VERSION, Task
from tasks.seeding import derive_miner_seed, derive_round_seed
from tasks.task_sets import BUILTIN, Source, generate, redraw, variant

compiled.settle()

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
    "redraw",
    "variant",
]
