"""Schema-guided decoding (subnet.miner.guided): the call grammar on its own (checked with an
xgrammar matcher); the logits processor inside the transformers backend on the tiny random Llama
(every answer of a batch a schema-valid call, rows independent, tool_choice none untouched)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from scoring import Call
from scoring.checking import check
from scoring.decoding import decode
from scoring.rendering import render
from subnet.miner import GenerationRequest, ModelOptions, build_backend
from subnet.miner.adapters import ADAPTERS
from subnet.miner.guided import (
    GUIDED_FORMATS,
    MAX_STRING,
    CallGrammar,
    Guidance,
    GuidedCalls,
)
from subnet.miner.transformers_backend import TransformersBackend
from tests.support.grammar import accepts, prefix_ok, text_matcher

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/miner/conftest.py


def _tool(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} tool",
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


WEATHER = _tool(
    "get_weather",
    {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    ["city"],
)
STOCK = _tool("get_stock_price", {"symbol": {"type": "string"}}, ["symbol"])
ROUTE = _tool(
    "plan_route",
    {
        "vehicle": {"type": "string"},
        "stops": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "lat": {"type": "number"},
                    "lon": {"type": "number"},
                    "alt": {"type": "integer"},
                },
                "required": ["lat", "lon"],
            },
            "minItems": 1,
            "maxItems": 3,
        },
        "point": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
        "alarm": {
            "type": "object",
            "properties": {
                "minutes": {"type": "integer"},
                "method": {"type": "string", "enum": ["email", "popup"]},
            },
            "required": ["minutes", "method"],
        },
        "return_home": {"type": "boolean"},
        "priority": {"type": "integer", "enum": [1, 2, 10]},
        "notes": {"description": "anything"},
    },
    ["vehicle", "stops"],
)
TOOLS = [WEATHER, STOCK, ROUTE]
FUNCTIONS = [tool["function"] for tool in TOOLS]

WEATHER_CALL = Call("get_weather", {"city": "Paris", "unit": "celsius"})
ROUTE_CALL = Call(
    "plan_route",
    {
        "vehicle": 'DRN-1 "fast"',
        "stops": [{"lat": -22.5, "lon": 16.25, "alt": 120}, {"lat": 1.0, "lon": 2.0}],
        "point": [48.85, 2.35],
        "alarm": {"minutes": 10, "method": "popup"},
        "return_home": False,
        "priority": 10,
        "notes": {"any": [1, "two", True, {"x": -0.5}]},
    },
)


def _grammar(format_name: str, tools: list[dict[str, Any]] | None = None) -> CallGrammar:
    grammar = CallGrammar.build(format_name, tools or TOOLS)
    assert grammar is not None
    return grammar


def advance(matcher: Any, text: str) -> Any:
    """A copy of `matcher` after `text`, or None when the grammar refuses it."""
    if matcher is None:
        return None
    if isinstance(matcher, CallGrammar):
        matcher = text_matcher(matcher.ebnf)
    fork = matcher.fork()
    return fork if fork.accept_string(text) else None


def _must_stop(matcher: Any) -> bool:
    """Whether the answer is complete and no character may follow."""
    return matcher.is_completed() and all(
        advance(matcher, chr(code)) is None for code in [10, *range(32, 127)]
    )


# --- the grammar ----------------------------------------------------------------------------


@pytest.mark.parametrize("format_name", sorted(GUIDED_FORMATS))
@pytest.mark.parametrize(
    "calls",
    [[WEATHER_CALL], [ROUTE_CALL], [Call("get_stock_price", {"symbol": "ACME"}), WEATHER_CALL]],
    ids=["enum", "nested", "parallel"],
)
def test_rendered_answers_are_accepted(format_name: str, calls: list[Call]) -> None:
    text = render(calls, format_name)
    assert isinstance(text, str)
    assert accepts(_grammar(format_name), text), text
    # every prefix can still be completed into an answer
    grammar = _grammar(format_name)
    for end in range(len(text)):
        assert prefix_ok(grammar, text[:end]), text[: end + 1]


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "get_wether", "arguments": {"city": "Paris"}}',  # unknown function
        '{"name": "get_weather", "arguments": {"town": "Paris"}}',  # unknown key
        '{"name": "get_weather", "arguments": {"city": 3}}',  # wrong type
        '{"name": "get_weather", "arguments": {"city": "Paris", "city": "Rome"}}',  # repeated key
        '{"name": "get_weather", "arguments": {"unit": "celsius"}}',  # required key missing
        '{"name": "get_weather", "arguments": {}}',  # required key missing
        '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}',  # not in the enum
        '{"name": "get_stock_price", "arguments": {"city": "Paris"}}',  # the other function's key
        '{"name": "plan_route", "arguments": {"vehicle": "a", "stops": []}}',  # minItems
        '{"name": "plan_route", "arguments": {"vehicle": "a", "stops": [{"lat": 1.0}]}}',  # nested required
        '{"name": "plan_route", "arguments": {"vehicle": "a", "stops": [{"lat": 1, "lon": 2}]}}',  # float
        '{"name": "plan_route", "arguments": {"vehicle": "a", "stops": [{"lat": 1.0, "lon": 2.0}], '
        '"point": [1.0, 2.0, 3.0]}}',  # maxItems
        '{"name": "plan_route", "arguments": {"vehicle": "a", "stops": [{"lat": 1.0, "lon": 2.0}], '
        '"priority": 3}}',  # integer enum
        '{"name": "plan_route", "arguments": {"vehicle": "a", "stops": [{"lat": 1.0, "lon": 2.0}], '
        '"return_home": True}}',  # Python spelling in JSON
        '{"name": "plan_route", "arguments": {"vehicle": "a", "stops": [{"lat": 1.0, "lon": 2.0, '
        '"alt": 1.5}]}}',  # integer
        '{"name": "get_weather", "arguments": {"city": null}}',
        '{"name": "get_weather", "arguments": {"city": "Paris"}} trailing',
        '{"name": "get_weather", "arguments": {"city": "line\nbreak"}}',  # control character
        'Sure! {"name": "get_weather", "arguments": {"city": "Paris"}}',
    ],
)
def test_wrong_answers_are_refused(text: str) -> None:
    assert not accepts(_grammar("json"), text)


@pytest.mark.parametrize(
    ("format_name", "text"),
    [
        ("pythonic", "[get_weather(city='Paris', city='Rome')]"),
        ("pythonic", "[get_weather(unit='celsius')]"),
        ("pythonic", "[get_weather(city=true)]"),
        ("pythonic", "get_weather(city='Paris')"),  # the list brackets are the format
        ("pythonic", "[get_weather(city='Paris')"),
        ("pythonic", '[plan_route(vehicle="a", stops=[{"lat": 1.0, "lon": 2.0}], return_home=false)]'),
        ("hermes", '{"name": "get_weather", "arguments": {"city": "Paris"}}'),
        ("hermes", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'),
        ("hermes", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n\n'),
    ],
)
def test_wrong_answers_are_refused_in_other_formats(format_name: str, text: str) -> None:
    assert not accepts(_grammar(format_name), text)


def test_an_answer_ends_after_its_call_or_opens_another_where_the_format_allows() -> None:
    single = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    state = advance(_grammar("json"), single)
    assert state is not None and _must_stop(state)  # a JSON object is one call: only EOS
    hermes = _grammar("hermes")
    after = advance(hermes, f"<tool_call>\n{single}\n</tool_call>")
    assert after is not None and after.is_completed() and not _must_stop(after)
    assert advance(after, "\n<tool_call>") is not None  # a parallel call may follow
    assert advance(after, "Done.") is None
    listed = advance(_grammar("pythonic"), "[get_weather(city='Paris')")
    assert listed is not None and not listed.is_completed()
    assert advance(listed, "]") is not None and advance(listed, ", get_stock_price(") is not None


def test_forked_states_do_not_disturb_each_other() -> None:
    grammar = _grammar("json")
    stem = advance(grammar, '{"name": "get_weather", "arguments": {"city": "Par')
    assert stem is not None
    left = advance(stem, 'is"}}')
    right = advance(stem, 'ma", "unit": "fahrenheit"}}')
    assert left is not None and left.is_completed() and right is not None and right.is_completed()
    assert advance(stem, 'is"}}') is not None  # the stem itself did not move


def test_string_escapes_are_checked() -> None:
    grammar = _grammar("json")
    opening = '{"name": "get_weather", "arguments": {"city": "'
    assert accepts(grammar, opening + "a" * MAX_STRING + '"}}')
    assert accepts(grammar, opening + 'caf\\u00e9 \\"x\\" \\\\ \\n"}}')
    assert not prefix_ok(grammar, opening + "\\q")
    assert not prefix_ok(grammar, opening + "line\nbreak")


def test_a_value_that_runs_on_is_closed_after_max_string_characters() -> None:
    guidance = _toy_guidance()
    guide = guidance.row_guide("hermes", [STOCK], must_call=True, function_name=None)
    # a model that would write "<tool_call>" forever (inside the string too) rather than stop
    taken = _drive(guide, [EOS, 1, 2, 3, 4, 5, 6, 7, 8, 9], steps=400, budget=1000, guidance=guidance)
    text = "".join(TOY[token] for token in taken if token != EOS)
    assert taken[-1] == EOS, text
    calls = decode(text)
    assert [call.name for call in calls] == ["get_stock_price"], text
    value = calls[0].arguments["symbol"]
    assert MAX_STRING - len("<tool_call>") <= len(value) <= MAX_STRING + len("<tool_call>"), value


def _toy_guidance() -> Guidance:
    import xgrammar

    return Guidance(xgrammar.TokenizerInfo(TOY, stop_token_ids=[EOS]), [EOS])


def test_a_forced_prefix_starts_the_row_inside_the_call() -> None:
    guidance = _toy_guidance()
    adapter = ADAPTERS["json"]
    named = guidance.row_guide(
        "json",
        TOOLS,
        must_call=True,
        function_name="get_stock_price",
        prefix=adapter.forced_prefix("get_stock_price"),
    )
    assert named.forced and named.matcher is not None
    assert advance(named.matcher, '{"symbol": "ACME"}}') is not None
    assert advance(named.matcher, '{"city": "Paris"}}') is None
    anyone = guidance.row_guide(
        "hermes", TOOLS, must_call=True, function_name=None, prefix=ADAPTERS["hermes"].forced_prefix(None)
    )
    assert anyone.matcher is not None and advance(anyone.matcher, 'plan_route", "arguments": {') is not None
    assert guidance.row_guide("codeact", TOOLS, must_call=False, function_name=None).matcher is None
    assert guidance.row_guide("json", [], must_call=False, function_name=None).matcher is None


def test_special_tokens_are_never_written_in_a_call(tiny_model_dir: Path) -> None:
    import xgrammar
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    eos = int(tokenizer.eos_token_id)
    guidance = Guidance.of_tokenizer(tokenizer, [eos])
    assert guidance.vocab_size >= len(tokenizer)
    guide = guidance.row_guide("json", TOOLS, must_call=False, function_name=None)
    bitmask = xgrammar.allocate_token_bitmask(1, guidance.vocab_size)

    def allowed() -> set[int]:
        guide.matcher.fill_next_token_bitmask(bitmask, 0)
        bits = [(int(word) >> shift) & 1 for word in bitmask[0].tolist() for shift in range(32)]
        return {index for index, bit in enumerate(bits[: guidance.vocab_size]) if bit}

    assert allowed() and not allowed() & set(tokenizer.all_special_ids)  # not even EOS yet
    assert guide.matcher.accept_string('{"name": "get_stock_price", "arguments": {"symbol": "ACME"}}')
    assert allowed() == {eos}  # the call is complete: only EOS
    # a multi-byte character split into byte tokens is written whole, byte by byte
    guide = guidance.row_guide("json", TOOLS, must_call=True, function_name="get_stock_price")
    assert guide.matcher is not None and guide.matcher.accept_string(
        '{"name": "get_stock_price", "arguments": {"symbol": "'
    )
    for token in tokenizer("é€", add_special_tokens=False)["input_ids"]:
        assert guide.matcher.accept_token(token)
    assert guide.matcher.accept_string('"}}') and guide.matcher.is_completed()


# --- the processor in the backend -------------------------------------------------------------

PROMPTS = [
    "weather in paris",
    "how much is the stock price of symbol for the flight to tokyo please",
    "book hotel",
    "convert currency amount from to list files read path json python code block",
    "what is the time in berlin",
    "search query limit",
]


def _schema_errors(value: Any, schema: dict[str, Any], nested: bool = False) -> list[str]:
    """A small JSON-schema check written for these tests (types, enums, bounds, keys)."""
    if "enum" in schema:
        return (
            []
            if value in schema["enum"] and type(value) is type(schema["enum"][0])
            else [f"{value!r} not in enum"]
        )
    kind = schema.get("type")
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: (
            isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool) and not nested)
        ),
        "boolean": lambda v: isinstance(v, bool),
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }
    if kind is None:
        return []
    if not checks[kind](value):
        return [f"{value!r} is not {kind}"]
    errors: list[str] = []
    if kind == "array":
        if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value)):
            errors.append(f"{len(value)} items")
        for item in value:
            errors += _schema_errors(item, schema.get("items", {}), nested=True)
    if kind == "object" and "properties" in schema:
        properties = schema["properties"]
        errors += [f"unknown key {key}" for key in value if key not in properties]
        errors += [f"missing {key}" for key in schema.get("required", []) if key not in value]
        for key, item in value.items():
            if key in properties:
                errors += _schema_errors(item, properties[key], nested=True)
    return errors


def _acceptable(value: Any) -> Any:
    """A value in BFCL's possible-answer form (nested dicts list their acceptable values)."""
    if isinstance(value, dict):
        return {key: [_acceptable(item)] for key, item in value.items()}
    if isinstance(value, list):
        return [_acceptable(item) if isinstance(item, dict) else item for item in value]
    return value


def _assert_schema_valid_calls(raw_text: str, format_name: str, tools: list[dict[str, Any]]) -> list[Call]:
    calls = decode(ADAPTERS[format_name].clean(raw_text))
    assert calls, raw_text
    functions = {tool["function"]["name"]: tool["function"] for tool in tools}
    for call in calls:
        assert call.name in functions, raw_text
        assert _schema_errors(call.arguments, functions[call.name]["parameters"]) == [], raw_text
    # and the project's BFCL checker agrees: the calls are valid answers to themselves
    expected = [
        {call.name: {key: [_acceptable(value)] for key, value in call.arguments.items()}} for call in calls
    ]
    verdict = check(raw_text, list(functions.values()), expected, "parallel")
    assert verdict.valid, (verdict.message, raw_text)
    return calls


async def _started(folder: Path, **options: Any) -> TransformersBackend:
    backend = build_backend(ModelOptions(path=str(folder), **options))
    assert isinstance(backend, TransformersBackend)
    await backend.start()
    return backend


@pytest.fixture
async def guided(tiny_model_dir: Path) -> AsyncIterator[TransformersBackend]:
    backend = await _started(tiny_model_dir, batch_wait_ms=300, max_batch=8, max_new_tokens=512, guided="on")
    yield backend
    await backend.close()


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


def _call_bias(monkeypatch: pytest.MonkeyPatch, bias: float) -> None:
    import subnet.miner.transformers_backend as backend_module

    monkeypatch.setattr(backend_module, "call_bias_for", lambda *args, **kwargs: bias)


@pytest.fixture
async def unguided(tiny_model_dir: Path) -> AsyncIterator[TransformersBackend]:
    backend = await _started(tiny_model_dir, batch_wait_ms=300, max_batch=8, max_new_tokens=512)
    yield backend
    await backend.close()


def _request(
    text: str, tool_choice: Any = "required", max_tokens: int = 512, **extra: Any
) -> GenerationRequest:
    return GenerationRequest(
        messages=[{"role": "user", "content": text}],
        tools=TOOLS,
        tool_choice=tool_choice,
        max_tokens=max_tokens,
        **extra,
    )


@pytest.mark.parametrize("format_name", sorted(GUIDED_FORMATS))
async def test_every_answer_of_a_guided_batch_is_a_schema_valid_call(
    guided: TransformersBackend, format_name: str
) -> None:
    guided.adapter = ADAPTERS[format_name]  # the same model, prompted and guided in each format
    requests = [_request(text) for text in PROMPTS]
    requests[2] = _request(PROMPTS[2], tool_choice={"type": "function", "function": {"name": "plan_route"}})
    results = await asyncio.gather(*(guided.generate(request) for request in requests))
    assert guided.batches_run == 1
    for result in results:
        _assert_schema_valid_calls(result.raw_text, format_name, TOOLS)
        assert result.tool_calls and result.finish_reason == "tool_calls"
        assert result.usage.completion_tokens < 512  # the call ended, the budget did not stop it
    assert results[2].tool_calls is not None and results[2].tool_calls[0]["function"]["name"] == "plan_route"
    assert len({result.raw_text for result in results}) > 1  # rows follow their own prompts


async def test_sampling_keeps_the_calls_valid(guided: TransformersBackend) -> None:
    import torch

    guided.adapter = ADAPTERS["json"]
    torch.manual_seed(7)
    results = await asyncio.gather(
        *(guided.generate(_request(text, temperature=1.0)) for text in PROMPTS[:4])
    )
    for result in results:
        _assert_schema_valid_calls(result.raw_text, "json", TOOLS)


async def test_tool_choice_none_keeps_the_guide_out(
    guided: TransformersBackend, unguided: TransformersBackend, guides: list[GuidedCalls]
) -> None:
    requests = [_request(text, tool_choice="none", max_tokens=24) for text in PROMPTS[:3]]
    alone = await asyncio.gather(*(unguided.generate(request) for request in requests))
    with_guide = await asyncio.gather(*(guided.generate(request) for request in requests))
    assert guides == []  # nothing to guide: no processor at all
    assert [result.raw_text for result in with_guide] == [result.raw_text for result in alone]
    # in a batch with guided rows, the rows with nothing to guide decode exactly as without a guide
    mixed = [*requests, _request(PROMPTS[3]), _request(PROMPTS[4])]
    results = await asyncio.gather(*(guided.generate(request) for request in mixed))
    assert [result.raw_text for result in results[:3]] == [result.raw_text for result in alone]
    for result in results[3:]:
        _assert_schema_valid_calls(result.raw_text, "hermes", TOOLS)


async def test_under_auto_the_first_token_decides_whether_to_call(
    guided: TransformersBackend, unguided: TransformersBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = [_request(text, tool_choice="auto", max_tokens=48) for text in PROMPTS[:4]]
    free = await asyncio.gather(*(unguided.generate(request) for request in requests))
    _call_bias(monkeypatch, float("-inf"))  # prose always wins: exactly the unguided answers
    assert [r.raw_text for r in await asyncio.gather(*(guided.generate(q) for q in requests))] == [
        r.raw_text for r in free
    ]
    _call_bias(monkeypatch, float("inf"))  # a call always wins: every answer a call
    requests = [_request(text, tool_choice="auto") for text in PROMPTS[:4]]
    for result in await asyncio.gather(*(guided.generate(request) for request in requests)):
        _assert_schema_valid_calls(result.raw_text, "hermes", TOOLS)


async def test_rows_cut_by_their_budget_do_not_disturb_the_others(
    guided: TransformersBackend, guides: list[GuidedCalls]
) -> None:
    requests = [_request(PROMPTS[0], max_tokens=3), _request(PROMPTS[1]), _request(PROMPTS[5], max_tokens=5)]
    short, full, other = await asyncio.gather(*(guided.generate(request) for request in requests))
    assert short.usage.completion_tokens <= 3 and short.finish_reason == "length"
    assert other.usage.completion_tokens <= 5
    _assert_schema_valid_calls(full.raw_text, "hermes", TOOLS)
    assert guides


async def test_guided_off_builds_no_grammar_context(
    unguided: TransformersBackend, guides: list[GuidedCalls]
) -> None:
    assert unguided.guidance is None
    await unguided.generate(_request(PROMPTS[0], max_tokens=4))
    assert guides == []


# --- the processor alone, on a toy vocabulary ---------------------------------------------------

TOY = [
    "<eos>",
    "<tool_call>",
    "\n",
    '{"name": "',
    "get_stock_price",
    '", "arguments": {',
    '"symbol": "',
    "ACME",
    '"}}',
    "</tool_call>",
    "Sure\n",  # prose: never part of a call (a raw newline is no JSON string content either)
    "!\n",
    *(chr(code) for code in range(32, 127)),  # single characters, as real vocabularies have
]
EOS = 0


def _drive(guide: Any, preferred: list[int], steps: int, budget: int, guidance: Guidance) -> list[int]:
    """Run the processor for `steps` steps on logits that rank `preferred` first, in that order;
    each step takes the best token left finite (greedy), as generate does."""
    import torch

    processor = GuidedCalls(0, [guide], guidance, budgets=[budget])
    taken: list[int] = []
    for _ in range(steps):
        scores = torch.full((1, len(TOY)), -5.0)
        for rank, token in enumerate(preferred):
            scores[0, token] = 10.0 - rank
        token = int(processor(torch.tensor([taken]), scores)[0].argmax())
        taken.append(token)
        if token == EOS:
            break
    return taken


def test_near_its_budget_a_row_closes_its_call_and_opens_no_other() -> None:
    guidance = _toy_guidance()
    guide = guidance.row_guide("hermes", [STOCK], must_call=True, function_name=None)
    # a model that would write "<tool_call>" forever (inside the string too) rather than stop
    order = [1, 2, 3, 4, 5, 6, 7, 8, 9, EOS]
    taken = _drive(guide, order, steps=40, budget=30, guidance=guidance)
    text = "".join(TOY[token] for token in taken if token != EOS)
    assert len(taken) - 1 <= 30 and taken[-1] == EOS, text  # within the budget, then EOS
    calls = decode(text)  # the call was closed in time, and no second one was opened
    assert [call.name for call in calls] == ["get_stock_price"], text
    assert text.endswith("</tool_call>"), text


def test_a_closing_text_that_does_not_continue_the_call_ends_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # A forced call whose closing text the grammar rejects (a copied value that cannot end
    # where the closing would end it) once left the row guided with no state: the next step
    # failed an assertion and took every request of the batch down with it.
    import subnet.miner.guided.processor as processor_module

    monkeypatch.setattr(processor_module, "closing_text", lambda matcher, limit=0: "!\n")
    guidance = _toy_guidance()
    guide = guidance.row_guide("hermes", [STOCK], must_call=True, function_name=None)
    order = [1, 2, 3, 4, 5, 6, 7, 8, 9, EOS]
    taken = _drive(guide, order, steps=40, budget=30, guidance=guidance)
    assert taken[-1] == EOS
    assert len(taken) - 1 <= 30
    assert TOY.index("!\n") not in taken  # nothing outside the schema was written to close it
