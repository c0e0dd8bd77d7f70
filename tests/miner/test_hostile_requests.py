"""Hostile or odd requests against the miner: valid signed JSON that a validator may send (any
schema, any text). Each is answered with a 4xx naming the request's fault or with a normal
answer, never a 500; another caller's request in flight meanwhile is served; the miner goes on
serving. Through the real gate and the tiny model, and the guide's parts where the cost was."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import aiohttp
import bittensor as bt
import pytest
from aiohttp import web

from subnet.miner import (
    BadModelRequest,
    GenerationRequest,
    GenerationResult,
    ModelOptions,
    build_backend,
    transformers_backend,
)
from subnet.miner.guided import (
    CallGrammar,
    Extraction,
    Guidance,
    GuidedCalls,
    closing_text,
)
from subnet.miner.openai_backend import OpenAIBackend
from subnet.miner.service import MinerModel, to_generation_request, to_response
from subnet.miner.transformers_backend import TransformersBackend
from subnet.protocol import MAX_MESSAGE_CHARS, ChatCompletionRequest
from subnet.transport import (
    CHAT_PATH,
    DirectoryEntry,
    MinerServer,
    Refusal,
    ServerPolicy,
    StaticDirectory,
    build_miner_app,
)
from tests.support.grammar import accepts, prefix_ok, text_matcher

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/miner/conftest.py


def _tool(name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def _one_property(schema: dict[str, Any], key: str = "a") -> dict[str, Any]:
    return _tool("f", {"type": "object", "properties": {key: schema}, "required": [key]})


def generate_only() -> contextlib.AbstractContextManager[Any]:
    """As for a model whose cache cannot be split by row (sliding-window or recurrent layers):
    a backend started inside runs its batches whole, with generate()."""
    return mock.patch.object(transformers_backend, "supports_model", lambda model: False)


# --- the guide's literals: enum values, property and function names -------------------------


def _toy_guidance(vocab: list[str]) -> Guidance:
    import xgrammar

    return Guidance(xgrammar.TokenizerInfo(["<eos>", *vocab], stop_token_ids=[0]), [0])


def test_a_long_enum_value_costs_its_own_size_not_its_square() -> None:
    # These bounds are on this process's CPU time: the work is all CPU, and wall time on a
    # machine shared by two test suites is a multiple of it.
    tools = [_one_property({"type": "string", "enum": ["x" * 20_000]})]
    started = time.process_time()
    guide = _toy_guidance(["x", "xx", '"', "{", "}"]).row_guide(
        "json", tools, must_call=True, function_name=None
    )
    assert guide.matcher is not None
    assert guide.matcher.accept_string('{"name": "f", "arguments": {"a": "' + "x" * 20_000 + '"}}')
    # a set of every prefix held 200 MB and seconds here (1.7 GB for 60,000 characters)
    assert time.process_time() - started < 2.0


def test_many_enum_values_are_one_grammar_not_compared_pairwise() -> None:
    count = 3_000
    started = time.process_time()
    grammar = CallGrammar.build("json", [_one_property({"enum": [f"v{i}" for i in range(count)]})])
    assert grammar is not None
    assert accepts(grammar, '{"name": "f", "arguments": {"a": "v2999"}}')
    assert not prefix_ok(grammar, '{"name": "f", "arguments": {"a": "v3000')
    assert not accepts(grammar, '{"name": "f", "arguments": {"a": "v1"0}}')  # "v1" ends at its quote
    # pairwise: 9 million comparisons, the generation thread held for minutes at 30,000 values
    assert time.process_time() - started < 2.0


def test_literals_that_extend_each_other_still_end_where_the_next_character_says() -> None:
    grammar = CallGrammar.build("json", [_one_property({"enum": [1, 10, 12, 103]})])
    assert grammar is not None
    for value in ("1", "10", "12", "103"):
        assert accepts(grammar, '{"name": "f", "arguments": {"a": ' + value + "}}")
    for value in ("11", "104", "1030", "2"):
        assert not accepts(grammar, '{"name": "f", "arguments": {"a": ' + value + "}}")


def test_a_pythonic_call_leaves_out_properties_no_keyword_argument_can_name() -> None:
    schema = {
        "type": "object",
        "properties": {"": {"type": "string"}, "class": {"type": "string"}, "a b": {}, "city": {}},
        "required": ["", "class", "city"],
    }
    grammar = CallGrammar.build("pythonic", [_tool("f", schema)])
    assert grammar is not None
    # an empty required key left the automaton nothing to write: IndexError, a 500
    assert closing_text(text_matcher(grammar.ebnf)) == '[f(city="")]'
    assert accepts(grammar, '[f(city="Paris")]')
    assert not prefix_ok(grammar, "[f(class=")


# --- the protocol ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "tool_choice"),
    [
        ([_tool("f", {})], {"type": "function", "function": {"name": "g"}}),
        (None, {"type": "function", "function": {"name": "f"}}),
        (None, "required"),
    ],
)
def test_a_tool_choice_that_no_offered_tool_answers_is_invalid(tools: Any, tool_choice: Any) -> None:
    with pytest.raises(ValueError, match="tool_choice"):
        ChatCompletionRequest.model_validate(
            {"messages": [{"role": "user", "content": "x"}], "tools": tools, "tool_choice": tool_choice}
        )


# --- the openai backend: the engine refusing the request's content ----------------------------


async def test_an_engine_refusing_the_requests_content_is_the_callers_400(
    serve_engine: Callable[..., Awaitable[str]],
) -> None:
    async def refuse(request: web.Request) -> web.Response:
        return web.json_response({"error": {"message": "unknown schema keyword"}}, status=422)

    backend = OpenAIBackend(ModelOptions(backend="openai", base_url=await serve_engine(refuse), timeout=5))
    await backend.start()
    try:
        request = ChatCompletionRequest.model_validate({"messages": [{"role": "user", "content": "x"}]})
        with pytest.raises(Refusal) as refused:
            await MinerModel(backend).handle(request, None)
        # it was a 500 (internal_error), as if the miner had failed
        assert (refused.value.status, refused.value.error_type) == (400, "invalid_request")
        assert "HTTP 422" in refused.value.message
        with pytest.raises(BadModelRequest):
            await backend.generate(to_generation_request(request))
    finally:
        await backend.close()


# --- through the real gate and the tiny model ---------------------------------------------------

WEATHER = _tool(
    "get_weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def _body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": "weather in paris 12 and 7.5"}],
        "tools": [WEATHER],
        "max_tokens": 12,
    }
    body.update(overrides)
    return body


def _required(*tools: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    return _body(tools=list(tools), tool_choice="required", **overrides)


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


def _odd_bodies() -> dict[str, tuple[bytes, frozenset[int]]]:
    """name -> (body, the statuses it may get)."""
    x_only = '{"messages": [{"role": "user", "content": "x"}]'
    missing = {"type": "function", "function": {"name": "nope"}}
    odd_types = {"a": {"type": "quaternion"}, "b": {"type": ["null", {"x": 1}]}}
    odd_keys = {"": {"type": "string"}, "class": {"type": "integer"}}
    with_ref = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
        "required": ["a", "b"],
        "$defs": {"A": {"$ref": "#/$defs/A"}},
    }
    nested = [{"function": {"name": "g", "arguments": "[" * 30_000 + "]" * 30_000}}]
    cases: list[tuple[str, dict[str, Any] | bytes, set[int]]] = [
        ("content a list of parts", _body(messages=[{"role": "user", "content": [{"text": "hi"}]}]), {200}),
        ("content an int", _body(messages=[{"role": "user", "content": 5}]), {400}),
        ("unknown role", _body(messages=[{"role": "wizard", "content": "hi"}]), {400}),
        ("tool message without id", _body(messages=[{"role": "tool", "content": "42"}]), {200}),
        ("nested history arguments", _body(messages=[{"role": "assistant", "tool_calls": nested}]), {400}),
        ("NUL bytes", _body(messages=[{"role": "user", "content": "pa\u0000ris"}]), {200}),
        ("lone surrogate", b'{"messages": [{"role": "user", "content": "\\ud800"}]}', {400}),
        ("nesting past the parser", b'{"messages": [], "x": ' + b"[" * 10_000 + b"]" * 10_000 + b"}", {400}),
        ("max_tokens 1e400", (x_only + ', "max_tokens": 1e400}').encode(), {400}),
        ("temperature NaN", (x_only + ', "temperature": NaN}').encode(), {400}),
        ("tool_choice names no tool", _body(tool_choice=missing), {400}),
        ("duplicate tool names", _required(WEATHER, WEATHER, _one_property({"type": "integer"}, "x")), {200}),
        ("$ref and anyOf", _required(_tool("f", with_ref)), {200}),
        ("enum []", _required(_one_property({"enum": []})), {200}),
        ("odd types", _required(_tool("f", {"type": "object", "properties": odd_types})), {200}),
        ("properties a list", _required(_tool("f", {"properties": ["a"], "required": 7})), {200}),
        ("minItems 1e9", _required(_one_property({"type": "array", "minItems": 10**9})), {200}),
        ("odd keys", _required(_tool("f", {"properties": odd_keys, "required": ["", "class"]})), {200}),
        ("odd function name", _required(_tool('get weather("x")<tool_call>\n', {})), {200}),
        ("schema 90 objects deep", _required(_tool("f", _nested(90))), {200, 400}),
        ("500 enum values", _required(_one_property({"enum": [f"v{i}" for i in range(500)]})), {200, 400}),
    ]  # fmt: skip
    return {
        name: (body if isinstance(body, bytes) else json.dumps(body).encode(), frozenset(statuses))
        for name, body, statuses in cases
    }


@dataclass(frozen=True)
class _Caller:
    wallet: bt.Wallet
    miner_hotkey: str
    url: str
    http: aiohttp.ClientSession

    async def post(self, body: bytes) -> tuple[int, dict[str, Any]]:
        headers = bt.http_auth.sign(
            self.wallet.hotkey, method="POST", path=CHAT_PATH, body=body, receiver_ss58=self.miner_hotkey
        )
        headers["Content-Type"] = "application/json"
        async with self.http.post(self.url, data=body, headers=headers) as response:
            return response.status, await response.json()


@pytest.fixture(scope="module")
def hostile_wallets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bt.Wallet]:
    root = tmp_path_factory.mktemp("hostile-wallets")
    wallets = {}
    for role in ("miner", "validator"):
        wallet = bt.Wallet(name=role, hotkey="default", path=str(root))
        wallet.create_new_coldkey(use_password=False, suppress=True)
        wallet.create_new_hotkey(use_password=False, suppress=True)
        wallets[role] = wallet
    return wallets


ServeFactory = Callable[[ModelOptions], Any]


@pytest.fixture
async def serve(hostile_wallets: dict[str, bt.Wallet]) -> AsyncIterator[ServeFactory]:
    """Starts the real backend behind the real gate; yields a caller signing as the validator."""
    stack: list[Any] = []

    async def start(options: ModelOptions) -> _Caller:
        backend = build_backend(options)
        await backend.start()
        stack.append(backend)
        miner_hotkey = hostile_wallets["miner"].hotkey.ss58_address
        validator = hostile_wallets["validator"]
        app = build_miner_app(
            hotkey_ss58=miner_hotkey,
            directory=StaticDirectory(
                [DirectoryEntry(uid=1, hotkey=validator.hotkey.ss58_address, stake=1.0)]
            ),
            policy=ServerPolicy(handler_timeout_s=30.0, per_caller_rate=1e6, per_caller_burst=1e6),
            handler=MinerModel(backend).handle,
        )
        server = MinerServer(app, host="127.0.0.1", port=0)
        await server.start()
        stack.append(server)
        http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        stack.append(http)
        return _Caller(validator, miner_hotkey, f"http://127.0.0.1:{server.port}{CHAT_PATH}", http)

    yield start
    for item in reversed(stack):
        if isinstance(item, MinerServer):
            await item.stop(drain_timeout=2.0)
        else:
            await item.close()


# (--model.format, --model.guided, the template): each format and guided mode once
CONFIGURATIONS = [("auto", "off", "native"), ("pythonic", "on", "plain"), ("json", "grounded", "plain"),
                  ("hermes", "forced", "plain"), ("codeact", "off", "plain")]  # fmt: skip


@pytest.mark.parametrize(("model_format", "guided", "template"), CONFIGURATIONS)
async def test_odd_requests_get_a_4xx_or_an_answer_and_never_hurt_another_caller(
    serve: ServeFactory,
    tiny_model_dir: Path,
    plain_tiny_model_dir: Path,
    model_format: str,
    guided: str,
    template: str,
) -> None:
    folder = tiny_model_dir if template == "native" else plain_tiny_model_dir
    caller = await serve(
        ModelOptions(
            path=str(folder),
            format=model_format,
            guided=guided,
            max_new_tokens=12,
            batch_wait_ms=5,
            max_batch=4,
        )
    )
    bystander = json.dumps(_body(messages=[{"role": "user", "content": "weather in berlin"}])).encode()
    expected_status, expected = await caller.post(bystander)
    assert expected_status == 200, expected
    wrong: list[str] = []
    for name, (body, statuses) in _odd_bodies().items():
        (status, answer), (side_status, side) = await asyncio.gather(
            caller.post(body), caller.post(bystander)
        )
        if status not in statuses:
            wrong.append(f"{name}: {status} {answer}")
        if status >= 400:
            assert set(answer) == {"error"} and "\n" not in answer["error"]["message"], (name, answer)
        # the caller beside it is served as if alone (greedy decoding: the very same answer)
        if (side_status, side["choices"][0]["message"]) != (200, expected["choices"][0]["message"]):
            wrong.append(f"{name}: the caller beside it got {side_status} {side}")
    assert not wrong, "\n".join(wrong)
    assert (await caller.post(bystander))[0] == 200


# --- answers the wire cannot carry ----------------------------------------------------------------


def _call(name: str, index: int = 0) -> dict[str, Any]:
    return {"id": f"c{index}", "type": "function", "function": {"name": name, "arguments": "{}"}}


@pytest.mark.parametrize(
    "calls",
    [[_call("h" * 300)], [_call(f"f{index}", index) for index in range(65)]],
    ids=["a name past the wire's bound", "more calls than a message holds"],
)
def test_calls_the_wire_cannot_carry_are_answered_as_the_models_text(calls: list[dict[str, Any]]) -> None:
    # a model talked into writing them (or an engine answering them) made the miner fail with a 500
    result = GenerationResult(tool_calls=calls, content=None, finish_reason="tool_calls", raw_text="the text")
    message = to_response(result, "m").message
    assert (message.tool_calls, message.content) == (None, "the text")
    assert to_response(result, "m").choices[0].finish_reason == "stop"


def test_calls_that_fit_are_kept_and_long_text_is_cut_to_the_wires_bound() -> None:
    fitting = GenerationResult(tool_calls=[_call("f")], content=None, finish_reason="tool_calls")
    assert [call.function.name for call in to_response(fitting, "m").message.tool_calls or []] == ["f"]
    prose = GenerationResult(tool_calls=None, content="x" * (MAX_MESSAGE_CHARS + 5), finish_reason="length")
    assert to_response(prose, "m").message.content == "x" * MAX_MESSAGE_CHARS


# --- a schema whose shortest completion is endless ---------------------------------------------


def test_near_its_budget_a_row_works_out_no_closing_text_longer_than_could_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import subnet.miner.guided.processor as processor_module

    tools = [_one_property({"type": "array", "minItems": 10**9})]
    guidance = _toy_guidance(["1", ",", "]", "}", '"', "12"])
    guide = guidance.row_guide("json", tools, must_call=True, function_name=None)
    assert guide.matcher is not None and guide.matcher.accept_string('{"name": "f", "arguments": {"a": [')
    worked_out: list[int] = []

    def recording_closing_text(matcher: Any, limit: int = 4096, exits: Any = ()) -> str | None:
        text = closing_text(matcher, limit, exits)
        worked_out.append(len(text) if text is not None else limit + 1)
        return text

    monkeypatch.setattr(processor_module, "closing_text", recording_closing_text)
    processor = GuidedCalls(0, [guide], guidance, budgets=[40])
    assert not processor._fits(guide.matcher, 1, 10)  # "1": 10**9 items cannot close in 10 tokens
    # 10 tokens of at most 2 bytes: 21 characters tell; it worked out 4096 (60 times a
    # decoding step's cost per candidate, for the last 64 steps of the row)
    assert worked_out and max(worked_out) <= 10 * 2 + 1


# --- a temperature too small to divide by ------------------------------------------------------


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "generate"])
async def test_a_vanishing_temperature_decodes_greedily(tiny_model_dir: Path, continuous: bool) -> None:
    backend = TransformersBackend(ModelOptions(path=str(tiny_model_dir), max_new_tokens=8, batch_wait_ms=5))
    with generate_only() if not continuous else contextlib.nullcontext():
        await backend.start()
    try:
        asked = [
            GenerationRequest(messages=[{"role": "user", "content": "weather in paris"}], temperature=t)
            for t in (0.0, 1e-300, 5e-324)
        ]
        # logits divided by 1e-300 are infinite, their softmax NaN: the sampler raised, a 500
        answers = await asyncio.gather(*(backend.generate(request) for request in asked))
        assert len({answer.raw_text for answer in answers}) == 1
    finally:
        await backend.close()


# --- forced and grounded calls on a long request ------------------------------------------------


class _CountingIndexText(str):
    """A string that counts how often it is indexed."""

    reads = 0

    def __getitem__(self, key: Any) -> str:
        _CountingIndexText.reads += 1
        return super().__getitem__(key)


def test_a_copied_value_is_compiled_once_and_decoding_never_scans_the_request() -> None:
    words = 3_000
    text = _CountingIndexText(" ".join(f"w{index}" for index in range(words)))
    source = Extraction.of_text(text)
    started = time.process_time()
    grammar = CallGrammar.build("json", [_one_property({"type": "string"})], source=source)
    assert grammar is not None
    guide = _toy_guidance([chr(code) for code in range(32, 127)]).row_guide(
        "json", [_one_property({"type": "string"})], must_call=True, function_name=None, source=source
    )
    assert guide.matcher is not None
    # the grammar reads the request a few times over, once (every start per character fed cost
    # 968 x 3,000 reads a step: 2.4 s a wide search at 5,000 words)
    assert _CountingIndexText.reads < 12 * len(text)
    assert time.process_time() - started < 5.0
    _CountingIndexText.reads = 0
    matcher = guide.matcher
    assert matcher.accept_string('{"name": "f", "arguments": {"a": "')
    accepted = [char for char in map(chr, range(32, 127)) if matcher.fork().accept_string(char)]
    assert accepted == ["w"]
    assert matcher.accept_string('w2998 w2999"}}') and matcher.is_completed()
    assert _CountingIndexText.reads == 0  # decoding reads the grammar, never the request
