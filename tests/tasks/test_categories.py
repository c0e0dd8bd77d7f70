"""Category builders before the surface shuffle: distractors are near misses that cannot
serve the request, and no-call tasks offer no tool that would be a fair answer."""

from __future__ import annotations

from random import Random

from tasks.builtin import is_meta
from tasks.categories import CATEGORIES


def _conflict(a, b) -> bool:  # type: ignore[no-untyped-def]
    return a is b or bool(set(a.conflicts) & set(b.conflicts))


def test_distractors_never_could_serve_the_gold_request() -> None:
    rng = Random("distractors")
    near = 0
    for _ in range(400):
        draft = CATEGORIES["multiple"].build(rng)
        ((gold_name,),) = [tuple(call) for call in draft.expected]
        (gold,) = [spec for spec in draft.tools if spec.name == gold_name]
        others = [spec for spec in draft.tools if spec is not gold]
        assert len(others) == len(draft.tools) - 1 >= 2
        assert not any(_conflict(gold, spec) for spec in others)
        near += any(spec.domain == gold.domain for spec in others)
    assert near > 300, "distractors come from the gold tool's domain first"


def test_parallel_multiple_uses_several_distinct_tools() -> None:
    rng = Random("pm")
    for _ in range(300):
        draft = CATEGORIES["parallel_multiple"].build(rng)
        names = [next(iter(call)) for call in draft.expected]
        assert len(set(names)) >= 2 and 2 <= len(names) <= 4
        offered = {spec.name for spec in draft.tools}
        assert set(names) <= offered


def test_no_call_tasks_never_offer_ask_back_tools() -> None:
    rng = Random("quiet")
    for name in ("irrelevance", "missing_param"):
        for _ in range(300):
            draft = CATEGORIES[name].build(rng)
            assert draft.expected == [] and draft.tools
            assert not any(is_meta(spec) for spec in draft.tools)
            if name == "missing_param":
                assert len({spec.domain for spec in draft.tools}) >= 1


def test_missing_param_requests_allude_to_a_value_without_giving_it() -> None:
    rng = Random("vague")
    for _ in range(200):
        draft = CATEGORIES["missing_param"].build(rng)
        vague_phrases = {phrase for spec in draft.tools for p in spec.params for phrase in p.gen.vague}
        assert any(phrase.lower() in draft.request.lower() for phrase in vague_phrases), draft.request
