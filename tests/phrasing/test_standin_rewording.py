"""The stand-in phrasing model rewords every sentence it is asked to say, as a model would: a fact keeps
its declared forms (values and mentions) and loses the generator's own frame words, so an attacker's copy
of the generator's frame tables does not read the phrased text (issue 27)."""

from __future__ import annotations

import json
import re
from random import Random
from types import ModuleType
from typing import Any

import pytest

from tasks import CATEGORIES, generate
from tasks.phrasing.intent import intent_of
from tasks.phrasing.prompt import phrasing_messages
from tasks.phrasing.style import draw_style


@pytest.fixture(scope="module")
def facts() -> list[dict[str, Any]]:
    """Every ``also_say`` entry of a round of every category, as the stand-in receives it."""
    found: list[dict[str, Any]] = []
    for index, task in enumerate(generate("standin-facts", 360, mix=dict.fromkeys(CATEGORIES, 1.0))):
        messages = phrasing_messages(intent_of(task), draw_style(Random(index)))
        body = json.loads(messages[-1]["content"][messages[-1]["content"].index("{") :])
        found += [entry for request in body["requests"] for entry in request.get("also_say", ())]
    return found


def _frame_runs(entry: dict[str, Any], size: int) -> set[str]:
    """Runs of ``size`` words of the sentence's frame: its words between the declared forms."""
    frame = entry["fact"]
    for forms in entry["forms"]:
        for form in sorted(forms, key=len, reverse=True):
            if form and form.lower() in frame.lower():
                start = frame.lower().index(form.lower())
                frame = frame[:start] + "|" + frame[start + len(form) :]
                break
    runs: set[str] = set()
    for piece in frame.split("|"):
        words = re.findall(r"[a-z']+", piece.lower())
        runs.update(" ".join(words[i : i + size]) for i in range(len(words) - size + 1))
    return runs


def test_a_reworded_fact_keeps_its_forms_and_drops_its_frame(
    standin: ModuleType, facts: list[dict[str, Any]]
) -> None:
    assert len(facts) > 500
    framed = survived = copied = 0
    for index, entry in enumerate(facts):
        said = standin.reword_fact(entry, Random(index))
        lowered = " ".join(said.lower().split())
        for forms in entry["forms"]:
            # One of each mention's forms, as declared (a date perhaps in another of its forms).
            assert any(form.lower() in lowered for form in forms), (entry, said)
        copied += said == entry["fact"]
        runs = _frame_runs(entry, 4)
        if runs:
            framed += 1
            survived += any(run in " ".join(re.findall(r"[a-z']+", lowered)) for run in runs)
    assert framed > 200
    # No 4-word run of the generator's frame survives in most rewordings (it does where the stand-in
    # does not read a sentence and only swaps some of its words).
    assert survived < 0.1 * framed, (survived, framed)
    assert copied < 0.02 * len(facts), copied


def test_a_reworded_fact_is_the_same_for_the_same_seed_and_varies_across_seeds(
    standin: ModuleType, facts: list[dict[str, Any]]
) -> None:
    entry = next(entry for entry in facts if len(entry["forms"]) >= 2)
    assert standin.reword_fact(entry, Random(7)) == standin.reword_fact(entry, Random(7))
    assert len({standin.reword_fact(entry, Random(seed)) for seed in range(20)}) >= 3


@pytest.mark.parametrize(
    ("fact", "forms", "kept_order"),
    [
        # The first and the latest pick keep their times: what came first is said before what came after.
        (
            "Dana, who runs our team, originally wanted Lisbon but has since switched to Porto",
            [["Lisbon"], ["Porto"], ["Dana"], ["runs our team"]],
            ("Lisbon", "Porto"),
        ),
        (
            "Omar (is hosting everyone) started out with 3 nights and now wants 5 nights",
            [["3"], ["5"], ["Omar"], ["is hosting everyone"]],
            ("3 nights", "5 nights"),
        ),
    ],
)
def test_a_revised_choice_keeps_which_came_first(
    standin: ModuleType, fact: str, forms: list[list[str]], kept_order: tuple[str, str]
) -> None:
    entry = {"fact": fact, "role": "tells which one is meant", "forms": forms}
    for seed in range(30):
        said = standin.reword_fact(entry, Random(seed))
        first, latest = (said.index(value) for value in kept_order)
        assert first < latest, said
        assert "originally wanted" not in said and "started out with" not in said, said
