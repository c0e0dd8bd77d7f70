"""bench/redteam.py: model-free miners that attack the public generator.

The template inverter once solved every builtin category from the request text and the offered
tools alone, by mapping each offered tool back to its library tool through the descriptions the
shuffle kept. Every offered description is now reworded per task (``tasks.rewrite``) and a share
of the tools is synthesised (``tasks.synth``), so it maps nothing and scores what never calling
scores: these tests hold that.
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


def _round_score(results: dict[str, tuple[int, int]]) -> float:
    """The share of tasks answered right (the default mix's tasks, so weighted by its shares)."""
    return sum(valid for valid, _ in results.values()) / sum(total for _, total in results.values())


def test_the_inverter_scores_no_better_than_never_calling(
    redteam: ModuleType, round_tasks: list[Task]
) -> None:
    inverter = redteam.evaluate_miner(redteam.TemplateInverter(), round_tasks, VARIANT_SEED)
    never = redteam.evaluate_miner(redteam.NeverCalls(), round_tasks, VARIANT_SEED)
    assert set(inverter) == set(CATEGORIES)
    assert _round_score(inverter) <= _round_score(never) + 0.05, inverter


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


def test_form_alone_earns_nothing_on_call_tasks(redteam: ModuleType, round_tasks: list[Task]) -> None:
    """The lexical miner's tools with junk values: call tasks earn (next to) nothing, since only
    whole calls earn (a junk call is right by chance now and then: ``True``, ``1``)."""
    from scoring import Call, function_of
    from scoring.checking import check

    miner = redteam.FormOnly()
    scores: dict[str, list[float]] = {}
    for task in round_tasks[:240]:
        shown = variant(task, VARIANT_SEED)
        calls = [Call(name, arguments) for name, arguments in miner.answer(shown.messages, shown.tools)]
        verdict = check(calls, [function_of(t) for t in shown.tools], shown.expected, shown.scoring_category)
        scores.setdefault(task.category, []).append(verdict.score)
    assert set(scores) == set(CATEGORIES)
    for category, values in scores.items():
        if category in NO_CALL:
            assert 0 < sum(values) <= len(values), category
        else:
            assert sum(values) / len(values) < 0.02 and values.count(0.0) >= 0.9 * len(values), category


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
