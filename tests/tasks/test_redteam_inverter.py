"""bench/redteam.py: a model-free miner that inverts the public generator solves builtin tasks.

These tests pin what the red team shows today: before the devices of tasks.devices,
template-phrased tasks were answerable without any model, from the request text and the offered
tools alone; now most requests that call a tool are not.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from tasks import CATEGORIES, Source, Task, generate, variant
from tasks.sources import load_bfcl_dir, load_xlam

NO_CALL = {"irrelevance", "missing_param"}
VARIANT_SEED = "redteam-test"


@pytest.fixture(scope="module")
def redteam(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("redteam")


@pytest.fixture(scope="module")
def round_tasks() -> list[Task]:
    return generate(seed=7, n=600)


def test_the_inverter_fails_on_requests_that_need_understanding(
    redteam: ModuleType, round_tasks: list[Task]
) -> None:
    # Before the devices (tasks.devices: relative dates, sums, references, decoys) the inverter
    # answered at least 95% of every category from template text; now most requests that call a
    # tool state a value it cannot read off the template, or a decoy of the same type.
    results = redteam.evaluate_miner(redteam.TemplateInverter(), round_tasks, VARIANT_SEED)
    assert set(results) == set(CATEGORIES)
    rates = {category: valid / total for category, (valid, total) in results.items()}
    assert all(rate <= 0.6 for category, rate in rates.items() if category not in NO_CALL), rates


def test_refusing_everything_scores_only_the_no_call_categories(
    redteam: ModuleType, round_tasks: list[Task]
) -> None:
    results = redteam.evaluate_miner(redteam.NeverCalls(), round_tasks, VARIANT_SEED)
    for category, (valid, total) in results.items():
        assert valid == (total if category in NO_CALL else 0), category


def test_random_calls_are_offered_tools_and_repeatable(redteam: ModuleType, round_tasks: list[Task]) -> None:
    shown = [variant(task, VARIANT_SEED) for task in round_tasks[:50]]

    def answers() -> list[list[tuple[str, dict[str, object]]]]:
        miner = redteam.RandomTool(seed=3)
        return [miner.answer(v.messages, v.tools) for v in shown]

    first = answers()
    assert first == answers()
    for answer, task in zip(first, shown, strict=True):
        assert len(answer) == 1 and answer[0][0] in task.tool_names


def test_the_memoriser_answers_published_text_and_refuses_the_rest(
    redteam: ModuleType, round_tasks: list[Task], fixtures: Path
) -> None:
    published = [*load_bfcl_dir(fixtures / "bfcl"), *load_xlam(fixtures / "xlam.json")]
    external = generate(
        5, 60, sources=[Source("bfcl", 0.5, tuple(published[:5])), Source("xlam", 0.5, tuple(published[5:]))]
    )
    memoriser = redteam.DatasetMemoriser(published)
    results = redteam.evaluate_miner(memoriser, external, VARIANT_SEED)
    assert all(valid == total for valid, total in results.values()), results
    unknown = variant(round_tasks[0], VARIANT_SEED)
    assert memoriser.answer(unknown.messages, unknown.tools) == []
