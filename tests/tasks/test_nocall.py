"""The no-call categories need understanding: irrelevance offers tools with the request's words
and values' types but another action, and missing_param writes a value of the withheld one's
type that is a fact about something else (issue 27)."""

from __future__ import annotations

import json
import re
from collections import Counter
from random import Random
from typing import Any

import pytest

from tasks import generate
from tasks.builtin import _conflict, instantiate
from tasks.categories import CATEGORIES, TURNED_IRRELEVANCE_SHARE, _other_action
from tasks.devices import DEVICES, Scene, scene_scope
from tasks.devices.aside import EVENTS
from tasks.distractors import KINDS
from tasks.library import tools
from tasks.model import Task
from tasks.phrasing import verify
from tasks.phrasing.intent import intent_of
from tasks.phrasing.prompt import phrasing_messages
from tasks.phrasing.stage import _names
from tasks.phrasing.style import draw_style
from tasks.synth import siblings


def _cue(ask: dict[str, Any]) -> dict[str, Any] | None:
    values = ask.get("values") or [{}]
    return values[0] if values[0].get("slot") == "asked_action" else None


def test_every_ask_wrapper_holds_a_phrase_its_kind_keeps() -> None:
    # The rewording must keep one of ``keeps``: the template text itself has to pass.
    for kind in KINDS:
        for wrapper in kind.asks:
            assert any(keep.lower() in wrapper.lower() for keep in kind.keeps), (kind.name, wrapper)
    assert sum(bool(kind.asks) for kind in KINDS) == len(KINDS)


def test_irrelevance_asks_for_a_lookalikes_action_offering_only_the_original() -> None:
    rng = Random("turned-away")
    turned = 0
    for _ in range(400):
        draft = CATEGORIES["irrelevance"].build(rng)
        assert draft.expected == []
        (ask,) = draft.asks
        cue = _cue(ask)
        if cue is None:
            continue
        turned += 1
        assert cue["said"].lower() in draft.request.lower()
        offered = {spec.name for spec in draft.tools}
        assert ask["tool"] not in offered
        # The tool that does the thing itself is offered: every stated value fits it.
        slots = {value["slot"] for value in ask["values"][1:]}
        assert any(slots <= {param.name for param in spec.params} for spec in draft.tools)
    assert 0.8 * TURNED_IRRELEVANCE_SHARE * 400 <= turned <= 1.2 * TURNED_IRRELEVANCE_SHARE * 400


def test_irrelevance_offers_the_asked_things_other_actions_never_one_that_serves() -> None:
    rng = Random("other-action")
    synth = 0
    for _ in range(300):
        draft = _other_action(rng)
        (ask,) = draft.asks
        asked = next(
            (spec for spec in tools() if spec.name == ask["tool"]),
            None,
        )
        assert all(spec.name != ask["tool"] for spec in draft.tools)
        if asked is not None:
            assert not any(_conflict(spec, asked) for spec in draft.tools)
        else:
            synth += 1
            tool_names = {spec.name for spec in draft.tools}
            assert tool_names & {spec.name for spec in siblings(_synth_by_name(draft, ask["tool"]))}
    assert synth >= 100


def _synth_by_name(draft: Any, name: str) -> Any:
    for spec in draft.tools:
        for sibling in siblings(spec):
            if sibling.name == name:
                return sibling
    raise AssertionError(name)


@pytest.fixture(scope="module")
def missing() -> list[Task]:
    return generate("nocall-missing", 400, mix={"missing_param": 1.0})


def _unsaid(task: Task) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The withheld entry alluded to by ``unsaid`` and the task's facts about subjects."""
    assert task.intent is not None
    (ask,) = task.intent["asks"]
    withheld = [entry for entry in ask["withheld"] if entry.get("mentions")]
    if not withheld:
        return None
    facts = [entry for entry in ask.get("context", ()) if ": " in entry["about"]]
    return withheld[0], facts


def test_missing_param_mostly_writes_a_value_of_the_withheld_type_about_something_else(
    missing: list[Task],
) -> None:
    beside = 0
    for task in missing:
        found = _unsaid(task)
        if found is None:
            continue
        beside += 1
        withheld, facts = found
        request = task.request.lower()  # a sentence that opens the request is capitalised
        assert task.expected == [] and withheld["said"].lower() in request
        assert any(fact["role"] == "decoy" and fact["said"].lower() in request for fact in facts)
        # No stated event (a subject's) is the one the request refers to.
        assert all(fact["about"].split(": ", 1)[1] != withheld["said"] for fact in facts), task.request
    assert beside >= 0.5 * len(missing)


def test_verification_refuses_a_rewording_that_drops_the_withheld_reference(missing: list[Task]) -> None:
    refused: Counter[str] = Counter()
    for task in missing:
        found = _unsaid(task)
        if found is None:
            continue
        intent, names = intent_of(task), _names(task)
        assert verify(task.request, intent, names).reason is None, task.request
        withheld, _ = found
        # Without the allusion the request would leave the stated value as the only candidate.
        dropped = re.sub(re.escape(withheld["said"]), "then", task.request, count=1, flags=re.IGNORECASE)
        refused[str(verify(dropped, intent, names).reason)] += 1
    assert refused and "None" not in refused, refused


def _forms(entry: dict[str, Any]) -> set[str]:
    """Every form of the values a context sentence states."""
    return {str(form) for _, forms in entry["mentions"] for form in forms}


def test_aside_values_are_stated_in_the_fact_the_request_refers_to() -> None:
    rng = Random(27)
    seen = 0
    library = tools()
    for index in range(3000):
        with scene_scope(rng):
            instance = instantiate(library[index % len(library)], rng)
        for value in instance.ask["values"]:
            if value.get("device") != "aside":
                continue
            seen += 1
            ((_, arguments),) = instance.call.items()
            accepted = arguments[value["slot"]]
            facts = [entry for entry in instance.ask["context"] if ": " in entry["about"]]
            # A request may carry a second worked value with a fact of its own: this value's is the
            # one fact that refers to it by what it says.
            (fact,) = [
                entry
                for entry in facts
                if entry["role"] == "fact" and entry["about"].split(": ", 1)[1] == value["said"]
            ]
            assert set(map(str, accepted)) & _forms(fact)
            for decoy in (entry for entry in facts if entry["role"] == "decoy"):
                assert not set(map(str, accepted)) & _forms(decoy)
    assert seen >= 100


def test_the_devices_are_registered_with_their_roles() -> None:
    assert DEVICES["aside"].role == "value" and DEVICES["unsaid"].role == "withheld"
    kinds = EVENTS()
    for events in kinds.values():
        references = [event.refers[0] for event in events]
        assert len(set(references)) == len(references) >= 3


def test_a_withheld_device_never_states_the_value_it_alludes_to() -> None:
    from tasks.spec import Param
    from tasks.value_generators import Date

    param = Param("day", "string", "The day.", Date())
    for seed in range(200):
        worked = DEVICES["unsaid"].work(param, Random(seed), Scene(100))
        assert worked is not None and worked.text not in worked.context[0].said


def test_the_standin_rewords_missing_param_tasks_and_keeps_the_allusion(
    load_bench: Any, missing: list[Task]
) -> None:
    # Its rewordings quote other values ("302 Harbor Boulevard"): not the withheld date or city.
    standin = load_bench("phrasing_standin")
    reasons: Counter[str] = Counter()
    for index, task in enumerate(missing[:200]):
        found = _unsaid(task)
        if found is None:
            continue
        intent = intent_of(task)
        messages = phrasing_messages(intent, draw_style(Random(index)))
        body = json.loads(messages[-1]["content"][messages[-1]["content"].index("{") :])
        text = standin.reword(body, index)
        reason = verify(text, intent, _names(task)).reason
        reasons[str(reason)] += 1
        if reason is None:
            # The allusion perhaps in other words ("the date of ..."), its forms kept (a phrase by
            # most of its key words, which verification checks).
            for kind, forms in found[0]["mentions"]:
                assert kind == "flag" or any(form.lower() in text.lower() for form in forms), text
    assert reasons["withheld_value_stated"] == 0, reasons
    assert reasons["None"] >= 0.9 * sum(reasons.values()), reasons


def test_some_irrelevance_tasks_also_offer_the_asked_kind_for_another_action() -> None:
    # "remind me later to book the hotel" beside a reminder to cancel it: the kind alone decides nothing.
    rng = Random("same-kind")
    same_kind = 0
    for _ in range(400):
        draft = CATEGORIES["irrelevance"].build(rng)
        (ask,) = draft.asks
        if _cue(ask) is None:
            continue
        prefix = ask["tool"].split("_", 1)[0]
        same_kind += any(
            spec.name.startswith(prefix + "_") and spec.name != ask["tool"] and not spec.templates
            for spec in draft.tools
        )
    assert same_kind >= 40
