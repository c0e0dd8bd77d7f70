"""tasks.distractors: lookalikes share the gold tool's words and types, never its action."""

from __future__ import annotations

from random import Random

from tasks.categories import CATEGORIES
from tasks.distractors import KINDS, lookalike, lookalikes
from tasks.library import by_name, tools
from tasks.synth import draw_synth


def _types(spec) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(param.name, param.type) for param in spec.params]


def test_kinds_are_named_once_and_each_applies_somewhere() -> None:
    assert len({kind.name for kind in KINDS}) == len(KINDS) >= 4
    for index in range(len(KINDS)):
        assert any(lookalike(index, spec) is not None for spec in tools())


def test_a_lookalike_has_the_gold_parameters_and_another_name_and_meaning() -> None:
    rng = Random("alike")
    golds = [*tools(), *(draw_synth(rng) for _ in range(100))]
    for gold in golds:
        for index in range(len(KINDS)):
            made = lookalike(index, gold)
            if made is None:
                continue
            assert made is lookalike(index, gold)
            assert made.name != gold.name and made.description != gold.description
            assert _types(made) == _types(gold)
            assert made.templates == ()


def test_the_book_hotel_example() -> None:
    made = {spec.name for spec in lookalikes((by_name()["book_hotel"],), len(KINDS), Random(1))}
    assert {"cancel_hotel", "remind_to_book_hotel", "estimate_book_hotel_cost"} <= made


def test_a_lookalike_never_does_what_another_gold_tool_does() -> None:
    create, cancel = by_name()["create_event"], by_name()["cancel_event"]
    for seed in range(30):
        for made in lookalikes((create,), 5, Random(seed), (create, cancel)):
            assert not made.name.startswith(("delete", "cancel", "remove")), made.name


def _lookalike_of(spec, golds) -> bool:  # type: ignore[no-untyped-def]
    return spec not in golds and any(_types(spec) == _types(gold) for gold in golds)


def test_multiple_tasks_offer_a_lookalike_beside_the_gold_tool() -> None:
    rng = Random("multiple-alike")
    hits = 0
    for _ in range(300):
        draft = CATEGORIES["multiple"].build(rng)
        ((gold_name,),) = [tuple(call) for call in draft.expected]
        golds = [spec for spec in draft.tools if spec.name == gold_name]
        hits += any(_lookalike_of(spec, golds) for spec in draft.tools)
    assert hits >= 270


def test_irrelevance_never_offers_the_tool_asked_for() -> None:
    rng = Random("irrelevant-alike")
    alike = 0
    for _ in range(300):
        draft = CATEGORIES["irrelevance"].build(rng)
        asked = draft.asks[0]["tool"]
        assert all(spec.name != asked for spec in draft.tools)
        # A lookalike of the asked tool, or (asked for a lookalike's action) the tool it was made from.
        alike += any(asked in spec.name or spec.name in asked for spec in draft.tools)
    assert alike >= 150


def test_some_multiple_tasks_ask_for_the_lookalike_and_offer_the_original() -> None:
    rng = Random("turned")
    turned = 0
    for _ in range(400):
        draft = CATEGORIES["multiple"].build(rng)
        ((gold_name,),) = [tuple(call) for call in draft.expected]
        (gold,) = [spec for spec in draft.tools if spec.name == gold_name]
        if gold.templates:  # a library or synthesised tool: the usual task
            continue
        turned += 1
        originals = [spec for spec in draft.tools if spec.templates and _types(spec) == _types(gold)]
        assert originals, "the tool the lookalike was made from is offered as a distractor"
        (ask,) = draft.asks
        assert ask["tool"] == gold_name and ask["purpose"] == gold.description
        (cue,) = [value for value in ask["values"] if value["slot"] == "asked_action"]
        assert cue["said"].lower() in draft.request.lower()
    assert 60 <= turned <= 140
