"""The issue's must-holds: with phrased text the template inverter earns no more than refusing
everything, the memoriser nothing on external call tasks, and every phrased task keeps a correct
gold answer (the oracle's 100%, the reference answer valid in every supported format)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import tasks
from scoring import Call
from scoring.checking import check
from scoring.rendering import FORMATS, render
from tasks.answers import reference_calls
from tasks.sources import load_bfcl_dir, load_xlam

FIXTURES = Path(__file__).resolve().parents[1] / "tasks" / "fixtures"


@pytest.fixture(scope="module")
def integrity(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("integrity")


async def test_the_inverter_needs_template_text_and_honest_answers_do_not(integrity: ModuleType) -> None:
    redteam = integrity.load_sibling("redteam")
    templates = tasks.generate(b"integrity", 600)
    phrased = (await integrity.phrase_with_standin(templates, b"integrity")).tasks
    assert len(phrased) == len(templates)

    inverter = redteam.TemplateInverter()
    # Offered descriptions are reworded per task (tasks.rewrite): the inverter cannot map a tool
    # back to the library, so even template text earns it no more than refusing everything.
    on_templates = integrity.judge_miner(inverter, templates, b"miner")
    never_on_templates = integrity.judge_miner(redteam.NeverCalls(), templates, b"miner")
    assert on_templates.round_score <= never_on_templates.round_score + 0.05
    on_phrased = integrity.judge_miner(inverter, phrased, b"miner")
    never = integrity.judge_miner(redteam.NeverCalls(), phrased, b"miner")
    assert on_phrased.call_rate() <= 0.10
    assert on_phrased.round_score <= never.round_score + 0.05

    oracle = integrity.judge_miner(integrity.Oracle(), phrased, b"miner")
    for category in tasks.CATEGORIES:
        assert oracle.rate(category) == 1.0, category


async def test_the_memoriser_loses_external_call_tasks_once_phrased(integrity: ModuleType) -> None:
    redteam = integrity.load_sibling("redteam")
    pool = (*load_bfcl_dir(FIXTURES / "bfcl"), *load_xlam(FIXTURES / "xlam.json"))
    sources = [tasks.Source("external", 1.0, tuple(pool))]
    drawn = tasks.generate(b"external", 120, sources=sources)
    phrased = await integrity.phrase_with_standin(drawn, b"external", sources=sources)
    memoriser = redteam.DatasetMemoriser(pool)
    assert integrity.judge_miner(memoriser, drawn, b"m").call_rate() == 1.0
    assert integrity.judge_miner(memoriser, phrased.tasks, b"m").call_rate() == 0.0
    assert integrity.judge_miner(integrity.Oracle(), phrased.tasks, b"m").call_rate() == 1.0
    # Nothing from a public file reaches a miner word for word.
    public = {task.request for task in pool}
    assert not any(task.request in public for task in phrased.tasks)


async def test_every_phrased_task_keeps_a_gold_answer_valid_in_every_format(integrity: ModuleType) -> None:
    phrased = (await integrity.phrase_with_standin(tasks.generate(b"gold", 2000), b"gold")).tasks
    # The stand-in may fail a slot and both its replacements (about 4% of its phrasings are
    # refused): a slot left unfilled, not a gold answer lost. Every task it phrased is checked.
    assert len(phrased) >= 1990
    for task in phrased:
        calls = [Call(name, arguments) for name, arguments in reference_calls(task.expected)]
        functions = [tool["function"] for tool in task.tools]
        if not calls:
            assert check(
                "I can't do that with these tools.", functions, task.expected, task.scoring_category
            ).valid
            continue
        for fmt in FORMATS:
            verdict = check(render(calls, fmt), functions, task.expected, task.scoring_category)
            assert verdict.valid, (fmt, task.id, verdict.error_type)
