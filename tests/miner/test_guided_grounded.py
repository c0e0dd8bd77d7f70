"""Grounded guided decoding (subnet.miner.guided, ``--model.guided forced|grounded``): argument
values copied from the request (`Extraction`, the copied string and number rules), the
evidence the guide keeps while decoding, and the decision to keep a forced call or answer in
prose (`ungrounded_reason`); hand-made cases, then the real backend on the tiny random Llama."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from scoring.decoding import decode
from subnet.miner import GenerationRequest, ModelOptions, build_backend
from subnet.miner.adapters import ADAPTERS
from subnet.miner.guided import (
    GROUNDED_MAX_VALUE_GAP,
    GUIDED_FORMATS,
    CallEvidence,
    CallGrammar,
    Extraction,
    GuidedCalls,
    best_fitting,
    closing_text,
    content_words,
    tool_words,
    ungrounded_reason,
)
from subnet.miner.guided.processor import mark_copied
from subnet.miner.transformers_backend import TransformersBackend
from tests.support.grammar import accepts, text_matcher

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/miner/conftest.py


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


HOTEL = _tool(
    "bookHotelRoom",
    "Reserves a hotel room in a city.",
    {
        "city": {"type": "string", "description": "City of the stay."},
        "nights": {"type": "integer", "description": "Number of nights."},
        "budget": {"type": "number", "description": "Most to pay per night."},
        "view": {"type": "string", "enum": ["sea", "garden"]},
        "guests": {"type": "array", "items": {"type": "string"}},
        "note": {"type": "string", "description": "Anything to tell the hotel."},
    },
    ["city", "nights", "budget", "view", "guests"],
)
MUTE = _tool(
    "mute_conversation",
    "Silences a chat conversation for some hours.",
    {"chat": {"type": "string", "description": "Conversation name."}, "hours": {"type": "integer"}},
    ["chat", "hours"],
)
TOOLS = [HOTEL, MUTE]
REQUEST = 'Book a hotel in Porto for 3 nights, at most $120.50, with "Ana Lima" and Bo'


def _grammar(format_name: str = "json", text: str = REQUEST) -> CallGrammar:
    grammar = CallGrammar.build(format_name, TOOLS, source=Extraction.of_text(text))
    assert grammar is not None
    return grammar


# --- what a request offers to copy -----------------------------------------------------------


def test_an_extraction_holds_word_starts_and_numbers() -> None:
    source = Extraction.of_text(REQUEST)
    starts = {REQUEST[start:].split()[0] for start in source.starts}
    assert {"Book", "Porto", "3", "120.50,", "Ana", "Bo"} <= starts
    assert '"Ana' not in starts  # a span never starts on a quote
    assert "120" in [REQUEST[start : start + 3] for start in source.starts]  # "$120.50": the number
    assert source.integers == ("3",)
    assert set(source.decimals) == {"3.0", "120.5", "120.50"}
    negative = Extraction.of_text("solve 12x^2 + (-9) on EVT-29468, 1,250 times")
    assert {"12", "2", "-9", "9", "29468", "1250"} <= set(negative.integers)
    assert "-29468" not in negative.integers  # a hyphen inside an identifier is no minus sign


def test_user_turns_are_what_values_are_copied_from() -> None:
    messages = [
        {"role": "system", "content": "You are a booking agent in Lisbon."},
        {"role": "user", "content": "Book Porto"},
        {"role": "assistant", "content": "For how long?"},
        {"role": "user", "content": "2 nights"},
    ]
    source = Extraction.of_messages(messages)
    assert source is not None and source.text == "Book Porto\n2 nights"
    assert Extraction.of_messages([{"role": "system", "content": "x"}]) is None


# --- the extracted specs in the automaton ---------------------------------------------------


@pytest.mark.parametrize("format_name", sorted(GUIDED_FORMATS))
def test_copied_values_are_accepted_in_every_format(format_name: str) -> None:
    grammar = _grammar(format_name)
    answers = {
        "json": '{"name": "bookHotelRoom", "arguments": {"city": "Porto", "nights": 3, "budget": 120.50, '
        '"view": "sea", "guests": ["Ana Lima", "Bo"]}}',
        "hermes": '<tool_call>\n{"name": "bookHotelRoom", "arguments": {"city": "Porto", '
        '"nights": 3, "budget": 120.5, "view": "garden", "guests": []}}\n</tool_call>',
        "pythonic": "[bookHotelRoom(city='Porto', nights=3, budget=3.0, view='sea', guests=[\"Ana Lima\"])]",
    }
    assert accepts(grammar, answers[format_name]), answers[format_name]


ARGUMENTS = '"nights": 3, "budget": 3.0, "view": "sea", "guests": []'


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        ('{"city": "Lisbon", ' + ARGUMENTS + "}", "a city the request does not name"),
        ('{"city": "Port", ' + ARGUMENTS + "}", "a span that ends inside a word"),
        ('{"city": "orto", ' + ARGUMENTS + "}", "a span that starts inside a word"),
        ('{"city": "", ' + ARGUMENTS + "}", "an empty string"),
        ('{"city": "Porto ", ' + ARGUMENTS + "}", "a span that ends on a space"),
        ('{"city": "Ana Lima\\" and", ' + ARGUMENTS + "}", "an escape: a span never holds one"),
        ('{"city": "Porto", ' + ARGUMENTS.replace("3,", "4,") + "}", "a number the request does not write"),
        ('{"city": "Porto", ' + ARGUMENTS.replace("3.0", "3") + "}", "a number without its fraction"),
        ('{"city": "Porto", ' + ARGUMENTS.replace('"sea"', '"Porto"') + "}", "an enum takes only its values"),
        ('{"city": "Porto", ' + ARGUMENTS + ', "note": "Bo"}', "optional arguments are left out"),
    ],
)
def test_values_not_in_the_request_are_refused(arguments: str, why: str) -> None:
    text = '{"name": "bookHotelRoom", "arguments": ' + arguments + "}"
    assert not accepts(_grammar(), text), why


def test_spans_may_cross_words_and_punctuation_of_the_request() -> None:
    grammar = _grammar(text="mute #ops-chat, team 'Q3 plan' for 12 hours")
    for chat in ("#ops-chat", "ops-chat", "Q3 plan", "team 'Q3 plan'", "ops"):
        assert accepts(
            grammar, f'{{"name": "mute_conversation", "arguments": {{"chat": "{chat}", "hours": 12}}}}'
        ), chat
    assert not accepts(
        grammar, '{"name": "mute_conversation", "arguments": {"chat": "Q3 plan\' for", "hours": 3}}'
    )


def test_optional_arguments_are_written_only_without_extraction() -> None:
    call = '{"name": "bookHotelRoom", "arguments": {"city": "Porto", ' + ARGUMENTS + ', "note": "Bo"}}'
    unsourced = CallGrammar.build("json", TOOLS)
    assert unsourced is not None and accepts(unsourced, call) and not accepts(_grammar(), call)


def test_the_call_picks_among_the_tools_that_share_most_words_with_the_request() -> None:
    functions = [tool["function"] for tool in TOOLS]
    assert [f["name"] for f in best_fitting(functions, REQUEST)] == ["bookHotelRoom"]
    assert [f["name"] for f in best_fitting(functions, "silence the chat")] == ["mute_conversation"]
    assert best_fitting(functions, "what is the weather") == functions  # none fits: all stay
    mute = '{"name": "mute_conversation", "arguments": {"chat": "Porto", "hours": 3}}'
    assert not accepts(_grammar(), mute)
    assert accepts(_grammar(text="mute Porto, 3 hours"), mute)


def test_without_numbers_in_the_request_numbers_stay_free() -> None:
    grammar = _grammar(text="mute the ops chat")
    assert accepts(grammar, '{"name": "mute_conversation", "arguments": {"chat": "ops chat", "hours": 48}}')


def test_the_shortest_closing_of_a_copied_value_stays_a_copy() -> None:
    grammar = _grammar()
    state = text_matcher(grammar.ebnf)
    assert state.accept_string('{"name": "bookHotelRoom", "arguments": {"city": "Po')
    closing = closing_text(state)
    assert closing is not None
    closed = '{"name": "bookHotelRoom", "arguments": {"city": "Po' + closing
    assert accepts(grammar, closed) and '"city": "Porto"' in closed and '"nights":3' in closed


def test_the_guide_knows_which_tokens_write_copied_values() -> None:
    """The processor marks the tokens whose text overlaps a value the grammar captured as
    copied (the token that opens it, those inside, the one that closes it); enum values and the
    call's frame are not copies."""
    import xgrammar

    from subnet.miner.guided import Guidance, RowGuide

    tokens = [
        '{"name": "bookHotelRoom", "arguments": {',
        '"city',
        '": "',
        "Po",
        "rto",
        '", "',
        "nights",
        '":',
        " 3",
        ", ",
        '"budget": ',
        "3.0",
        ', "view": "',
        "sea",
        '", "guests": []}}',
    ]
    vocab = ["<eos>", *tokens]
    guidance = Guidance(xgrammar.TokenizerInfo(vocab, stop_token_ids=[0]), [0])
    evidence = CallEvidence()
    guide = guidance.row_guide(
        "json",
        TOOLS,
        must_call=True,
        function_name=None,
        source=Extraction.of_text(REQUEST),
        evidence=evidence,
    )
    assert isinstance(guide, RowGuide) and guide.matcher is not None
    processor = GuidedCalls(0, [guide], guidance, budgets=[100])
    import torch

    written: list[int] = []
    for token in range(1, len(vocab)):
        scores = torch.zeros((1, len(vocab)))
        scores[0, token] = 1.0  # the model's own first choice each time: gap 0
        processor(torch.tensor([written]), scores)
        written.append(token)
    processor(torch.tensor([written]), torch.zeros((1, len(vocab))))
    copied = [vocab[1 + index] for index, (is_copied, _) in enumerate(evidence.steps) if is_copied]
    assert copied == ['": "', "Po", "rto", '", "', " 3", "3.0"], copied
    assert [gap for _, gap in evidence.steps] == [0.0] * len(tokens)


def test_marking_copied_steps_by_their_bytes() -> None:
    evidence = CallEvidence(steps=[(False, 1.0), (False, 2.0), (False, 3.0), (False, 4.0)])
    mark_copied(evidence, [0, 5, 8, 12], 6, 9)  # bytes 6-8: the second and third tokens
    assert evidence.steps == [(False, 1.0), (True, 2.0), (True, 3.0), (False, 4.0)]


# --- the grounding decision ---------------------------------------------------------------


def _evidence(steps: list[tuple[bool, float]], text: str = REQUEST) -> CallEvidence:
    return CallEvidence(steps=steps, request_text=text, functions=[tool["function"] for tool in TOOLS])


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_content_words_ignore_boilerplate_and_split_names() -> None:
    assert content_words("Book a hotelRoom, please; returns the result") == {"book", "hotel", "room"}
    assert {"hotel", "room", "city", "stay", "night"} <= tool_words(HOTEL["function"])


def test_evidence_groups_the_gaps_by_value() -> None:
    evidence = _evidence([(False, 4.0), (True, 0.5), (True, 1.0), (False, 0.0), (True, 2.0), (False, 9.0)])
    assert evidence.value_gaps() == [[0.5, 1.0], [2.0]]
    assert [gap for copied, gap in evidence.steps if not copied] == [4.0, 0.0, 9.0]


def test_a_call_of_a_fitting_tool_with_values_the_model_agreed_to_copy_is_kept() -> None:
    evidence = _evidence([(False, 3.0), (True, 0.0), (True, GROUNDED_MAX_VALUE_GAP), (False, 12.0)])
    assert ungrounded_reason(evidence, [_call("bookHotelRoom", city="Porto", nights=3)]) is None


def test_a_value_the_model_strained_against_copying_is_a_missing_parameter() -> None:
    evidence = _evidence([(True, 0.0), (True, GROUNDED_MAX_VALUE_GAP + 0.5)])
    reason = ungrounded_reason(evidence, [_call("bookHotelRoom", city="Porto", nights=3)])
    assert reason is not None and "missing" in reason


def test_a_value_that_only_names_its_parameters_kind_is_a_missing_parameter() -> None:
    evidence = _evidence([(True, 0.0)], text="book a hotel in the city for 3 nights")
    reason = ungrounded_reason(evidence, [_call("bookHotelRoom", city="city", nights=3)])
    assert reason is not None and "missing" in reason  # "the city": which one?
    evidence = _evidence([(True, 0.0)], text="hotel in CITY-7 for 3 nights")
    assert ungrounded_reason(evidence, [_call("bookHotelRoom", city="CITY-7", nights=3)]) is None
    evidence = _evidence([(True, 0.0)], text="hotel with a garden view, 3 nights, Porto")
    assert (
        ungrounded_reason(evidence, [_call("bookHotelRoom", city="Porto", nights=3, view="garden")]) is None
    )


def test_one_text_for_two_parameters_or_an_invented_number_is_a_missing_parameter() -> None:
    two_tools = [HOTEL["function"], MUTE["function"]]
    evidence = CallEvidence(steps=[(True, 0.0)], request_text="book a hotel in Porto", functions=two_tools)
    assert ungrounded_reason(evidence, [_call("bookHotelRoom", city="Porto", nights=3)]) is not None
    evidence = CallEvidence(steps=[(True, 0.0)], request_text="mute Porto for 3 hours", functions=two_tools)
    assert ungrounded_reason(evidence, [_call("mute_conversation", chat="Porto", hours=3)]) is None
    assert ungrounded_reason(evidence, [_call("mute_conversation", chat="Porto", hours=3.0)]) is None
    assert ungrounded_reason(evidence, [_call("mute_conversation", chat="Porto", hours=4)]) is not None
    evidence = CallEvidence(
        steps=[(True, 0.0)], request_text="mute Porto, Porto for 3 hours", functions=two_tools
    )
    both = _call("bookHotelRoom", city="Porto", nights=3, view="sea", guests=[], budget=3.0, note="Porto")
    assert ungrounded_reason(evidence, [both]) is not None  # "Porto" twice: one value, two slots


def test_a_tool_that_shares_no_word_with_the_request_fits_it_not() -> None:
    evidence = _evidence([(True, 0.0)])
    reason = ungrounded_reason(evidence, [_call("mute_conversation", chat="Porto", hours=3)])
    assert reason is not None and "None of the tools" in reason
    # one unfitting call among fitting ones is enough to answer in prose
    both = [_call("bookHotelRoom", city="Porto", nights=3), _call("mute_conversation", chat="Bo", hours=3)]
    assert ungrounded_reason(evidence, both) is not None
    assert ungrounded_reason(evidence, [_call("no_such_tool")]) is not None


# --- the backend on the tiny model ------------------------------------------------------------


async def _started(folder: Path, guided: str) -> TransformersBackend:
    backend = build_backend(
        ModelOptions(path=str(folder), batch_wait_ms=300, max_batch=8, max_new_tokens=96, guided=guided)
    )
    assert isinstance(backend, TransformersBackend)
    await backend.start()
    return backend


@pytest.fixture
async def forced(tiny_model_dir: Path) -> AsyncIterator[TransformersBackend]:
    backend = await _started(tiny_model_dir, "forced")
    yield backend
    await backend.close()


@pytest.fixture
async def grounded(tiny_model_dir: Path) -> AsyncIterator[TransformersBackend]:
    backend = await _started(tiny_model_dir, "grounded")
    yield backend
    await backend.close()


PROMPTS = [
    "book a hotel in paris for 2 nights please",
    "mute the berlin chat for 5 hours",
    "what is the weather in tokyo",
    "hotel london 7 nights, 99.5 a night",
]


def _auto(text: str) -> GenerationRequest:
    return GenerationRequest(messages=[{"role": "user", "content": text}], tools=TOOLS, tool_choice="auto")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


@pytest.mark.parametrize("format_name", sorted(GUIDED_FORMATS))
async def test_forced_answers_are_calls_whose_free_values_are_copied(
    forced: TransformersBackend, format_name: str
) -> None:
    forced.adapter = ADAPTERS[format_name]
    results = await asyncio.gather(*(forced.generate(_auto(text)) for text in PROMPTS))
    for text, result in zip(PROMPTS, results, strict=True):
        calls = decode(ADAPTERS[format_name].clean(result.raw_text))
        assert calls and result.tool_calls, result.raw_text  # under auto: a call all the same
        for call in calls:
            for key, value in call.arguments.items():
                if key == "view":
                    assert value in ("sea", "garden")
                    continue
                for copied in _strings(value):
                    assert copied and copied in text, (copied, result.raw_text)
                numeric = isinstance(value, int | float) and not isinstance(value, bool)
                if numeric and any(char.isdigit() for char in text):  # else numbers stay free
                    assert str(value) in text or f"{value:g}" in text, (value, result.raw_text)


@pytest.fixture
def guides(monkeypatch: pytest.MonkeyPatch) -> list[GuidedCalls]:
    """Every guide the backend builds from now on (a processor per batch or engine row)."""
    import subnet.miner.transformers_backend as backend_module

    made: list[GuidedCalls] = []

    class Recorded(GuidedCalls):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(backend_module, "GuidedCalls", Recorded)
    return made


async def test_grounded_judges_the_forced_call_and_answers_in_prose_when_it_is_not_grounded(
    forced: TransformersBackend,
    grounded: TransformersBackend,
    monkeypatch: pytest.MonkeyPatch,
    guides: list[GuidedCalls],
) -> None:
    import subnet.miner.guided.grounding as guided

    requests = [_auto(text) for text in PROMPTS]
    calls = await asyncio.gather(*(forced.generate(request) for request in requests))
    assert all(result.tool_calls for result in calls), [result.raw_text for result in calls]
    monkeypatch.setattr(guided, "GROUNDED_MAX_VALUE_GAP", -1.0)  # no copy is close enough
    refused = await asyncio.gather(*(grounded.generate(request) for request in requests))
    for before, after in zip(calls, refused, strict=True):
        assert after.raw_text == before.raw_text  # the same decoding, judged
        assert after.tool_calls is None and after.finish_reason == "stop"
        assert after.content and ("missing" in after.content or "None of the tools" in after.content)
    evidence = guides[-1].evidence[-1] if guides else None
    assert evidence is not None and evidence.value_gaps() and not all(copied for copied, _ in evidence.steps)
    # a required call is the caller's order: kept whatever the evidence says
    required = GenerationRequest(messages=requests[0].messages, tools=TOOLS, tool_choice="required")
    assert (await grounded.generate(required)).tool_calls


async def test_tool_choice_none_is_prose_in_grounded_mode(
    grounded: TransformersBackend, guides: list[GuidedCalls]
) -> None:
    request = GenerationRequest(
        messages=[{"role": "user", "content": PROMPTS[0]}], tools=TOOLS, tool_choice="none", max_tokens=8
    )
    result = await grounded.generate(request)
    assert result.tool_calls is None and guides == []
