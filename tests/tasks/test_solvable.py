"""Every task and every variant is solvable: its reference answer, rendered in each model
family's format, passes scoring.check on its own tools."""

from __future__ import annotations

from collections import Counter

import pytest

from scoring import Call
from scoring.checking import check
from scoring.rendering import FORMATS, render
from tasks import CATEGORIES, default_mix, generate, variant
from tasks.answers import reference_calls
from tasks.model import Task

_NO_CALL_REPLY = "I can't do that with these tools; could you tell me more?"


def _failures(task_list: list[Task]) -> Counter[tuple[str, str, str]]:
    failures: Counter[tuple[str, str, str]] = Counter()
    for task in task_list:
        for surface in (task, variant(task, b"miner")):
            calls = [Call(name, args) for name, args in reference_calls(surface.expected)]
            for fmt in FORMATS:
                output = render(calls, fmt) if calls else _NO_CALL_REPLY
                verdict = check(output, surface.tools, surface.expected, surface.scoring_category)
                if not verdict.valid:
                    failures[(surface.category, fmt, str(verdict.error_type))] += 1
    return failures


def test_sample_of_every_category_is_solvable_in_every_format() -> None:
    assert not _failures(generate("solvable-fast", 600))


@pytest.mark.slow
def test_ten_thousand_tasks_of_the_default_mix_are_solvable() -> None:
    # ~40 s on a loaded 2-core machine: 10,000 tasks and their variants, six formats each.
    assert not _failures(generate("solvable-sweep", 10_000, mix=default_mix()))


@pytest.mark.parametrize("category", sorted(CATEGORIES))
def test_each_category_alone_is_solvable(category: str) -> None:
    assert not _failures(generate(f"solvable-{category}", 150, mix={category: 1.0}))
