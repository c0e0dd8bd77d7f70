"""bench/redteam_lexical.py: the model-free lexical miner keeps working on today's tasks.

It is the red team's measure of issue 27 (tasks only a model can solve): these tests keep it from
rotting as the generator changes. They pin that it runs and beats refusing everything on template
text; how far it should fall is the generator's business, measured by bench/integrity.py.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from tasks import CATEGORIES, Task, generate, variant
from tasks.library import tools as library_tools
from tasks.spec import openai_tool

NO_CALL = {"irrelevance", "missing_param"}


@pytest.fixture(scope="module")
def redteam(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("redteam")


@pytest.fixture(scope="module")
def round_tasks() -> list[Task]:
    return generate(seed="lexical-test", n=240, mix=dict.fromkeys(CATEGORIES, 1.0))


def test_the_lexical_miner_is_registered(redteam: ModuleType) -> None:
    assert "lexical" in redteam._MINERS and redteam.LexicalMiner in redteam._MINERS.values()


def test_it_beats_never_calling_on_template_text(redteam: ModuleType, round_tasks: list[Task]) -> None:
    lexical = redteam.evaluate_miner(redteam.LexicalMiner(), round_tasks, "lexical-test")
    never = redteam.evaluate_miner(redteam.NeverCalls(), round_tasks, "lexical-test")
    share = {c: lexical[c][0] / lexical[c][1] for c in CATEGORIES}
    assert sum(v for v, _ in lexical.values()) > sum(v for v, _ in never.values())
    # Today it answers most call tasks and still refuses where it must.
    assert all(share[c] >= 0.5 for c in CATEGORIES if c not in NO_CALL), share
    assert all(share[c] >= 0.8 for c in NO_CALL), share


def test_it_answers_in_the_offered_names(redteam: ModuleType, round_tasks: list[Task]) -> None:
    miner = redteam.LexicalMiner()
    for task in round_tasks[:60]:
        shown = variant(task, "names")
        offered = {tool["function"]["name"]: tool["function"] for tool in shown.tools}
        for name, arguments in miner.answer(shown.messages, shown.tools):
            assert name in offered
            assert set(arguments) <= set(offered[name]["parameters"]["properties"])


def test_no_text_or_no_tools_is_no_call(redteam: ModuleType) -> None:
    tool = openai_tool(library_tools()[0])
    miner = redteam.LexicalMiner()
    assert miner.answer([{"role": "user", "content": ""}], [tool]) == []
    assert miner.answer([{"role": "user", "content": "what's the weather in Paris, France?"}], []) == []
    assert miner.answer([], [tool]) == []
