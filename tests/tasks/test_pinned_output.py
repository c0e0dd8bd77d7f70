"""Pinned output: the generator's tasks and variants stay byte-identical across refactors.

The digests were computed from the committed generator (GENERATOR_VERSION "1") before any
performance work. A change in output must be deliberate: bump GENERATOR_VERSION and re-pin.
The JSON keeps dict order (no sort_keys): the order of tools, properties and enums is part of
what miners see.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tasks import GENERATOR_VERSION, Source, generate, load_xlam, variant
from tasks.model import Task
from tasks.sources import load_bfcl_dir

_PINNED_VERSION = "1"
_BUILTIN_DIGEST = "8a3d4ff7a7b534f01b9868c4877f1533ce812e2d56dcca6625911fd0e688d310"
_SOURCED_DIGEST = "903c0e20162d8676fcbd95a5f2a2e14c342e301bea9649eeb5deba9ed46913df"


def _ordered_digest(task_list: list[Task]) -> str:
    blob = json.dumps([task.to_dict() for task in task_list], ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def test_generator_version_matches_the_pinned_digests() -> None:
    assert GENERATOR_VERSION == _PINNED_VERSION, "re-pin the digests below when bumping the version"


def test_builtin_tasks_and_variants_of_variants_are_byte_identical() -> None:
    generated = generate(b"pin", 200)
    variants = [variant(task, b"pin-miner") for task in generated]
    second = [variant(task, b"pin-miner-2") for task in variants]
    assert _ordered_digest(generated + variants + second) == _BUILTIN_DIGEST


def test_external_source_tasks_and_variants_are_byte_identical(fixtures: Path) -> None:
    pool = (
        *load_bfcl_dir(fixtures / "bfcl", ["simple_python", "parallel_multiple", "irrelevance"]),
        *load_xlam(fixtures / "xlam.json"),
    )
    mixed = generate(b"pin-ext", 60, sources=[Source("builtin", 0.5), Source("ext", 0.5, pool)])
    assert _ordered_digest(mixed + [variant(task, b"pin-miner") for task in mixed]) == _SOURCED_DIGEST
