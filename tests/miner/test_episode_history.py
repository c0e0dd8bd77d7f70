"""Episode steps through the miner: the whole history of a reference episode (`trajectory`, cut
before each of its answers) in every output format. Each earlier call and observation is in the
prompt, in order, whether the model's template renders tools itself or the adapter writes them out;
the transformers backend answers; guided modes keep their calls schema-valid for the turn's tools;
the openai backend forwards the history as it came; the signed endpoint serves it end to end."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import re
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import bittensor as bt
import pytest
from aiohttp import web

from scoring.decoding import decode
from subnet.miner import GenerationRequest, ModelOptions, build_backend
from subnet.miner.adapters import ADAPTERS, MODEL_FORMATS, format_for_template
from subnet.miner.guided import GUIDED_FORMATS, Extraction
from subnet.miner.openai_backend import OpenAIBackend
from subnet.miner.service import MinerModel
from subnet.miner.transformers_backend import TransformersBackend, build_prompt
from subnet.protocol import ChatCompletionRequest
from subnet.transport import (
    CHAT_PATH,
    DirectoryEntry,
    MinerServer,
    ServerPolicy,
    StaticDirectory,
    build_miner_app,
)
from tasks.episodes import Episode, generate_episodes
from tasks.episodes.arguments import schema_error
from tasks.episodes.reference import trajectory

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/miner/conftest.py

SEED = b"miner-episode-history"


@functools.cache
def _episodes() -> tuple[Episode, ...]:
    """One episode per category, each in an environment of its own where the seed allows."""
    chosen: dict[str, Episode] = {}
    for episode in generate_episodes(SEED, 40):
        environments = {other.environment for other in chosen.values()}
        if episode.category not in chosen and episode.environment not in environments:
            chosen[episode.category] = episode
    return tuple(chosen.values())


def _steps_of(episode: Episode) -> list[GenerationRequest]:
    """The requests of the episode's steps that follow at least one call: the history before a
    reference answer, and the tools of that turn."""
    messages = trajectory(episode)["messages"]
    steps = []
    for cut, message in enumerate(messages):
        if message["role"] == "assistant" and any(earlier["role"] == "tool" for earlier in messages[:cut]):
            turn = sum(1 for earlier in messages[:cut] if earlier["role"] == "user") - 1
            steps.append(GenerationRequest(messages=messages[:cut], tools=episode.offered(turn)))
    return steps


@functools.cache
def _steps() -> tuple[GenerationRequest, ...]:
    return tuple(step for episode in _episodes() for step in _steps_of(episode))


def _last_steps() -> list[GenerationRequest]:
    """The longest history of each episode."""
    return [_steps_of(episode)[-1] for episode in _episodes()]


def test_the_histories_cover_the_environments_and_categories() -> None:
    episodes = _episodes()
    assert len({episode.category for episode in episodes}) >= 4
    assert len({episode.environment for episode in episodes}) >= 4
    assert any(len(episode.turns) > 1 for episode in episodes)
    assert len(_steps()) >= 15


# --- each earlier call and observation, in order -----------------------------------------------


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _spellings(value: Any) -> set[str]:
    """How a format may write a value: as it is, JSON-escaped (templates' tojson), Python-quoted."""
    if isinstance(value, str):
        return {
            value,
            json.dumps(value, ensure_ascii=False)[1:-1],
            json.dumps(value)[1:-1],
            repr(value)[1:-1],
        }
    return {json.dumps(value), repr(value)}


def _after(prompt: str, value: Any, start: int, what: str) -> int:
    """The end of the first spelling of ``value`` in the prompt at or after ``start``."""
    found = [
        (position, position + len(spelling))
        for spelling in _spellings(value)
        if (position := prompt.find(spelling, start)) >= 0
    ]
    assert found, f"{what} {str(value)[:80]!r} is not in the prompt after position {start}"
    return min(found)[1]


def _assert_in_order(prompt: str, messages: list[dict[str, Any]]) -> None:
    """Every user turn, call (its name, then each of its values), observation and text answer of
    the history is in the prompt, in the history's order."""
    cursor = 0
    for message in messages:
        for tool_call in message.get("tool_calls") or []:
            function = tool_call["function"]
            cursor = _after(prompt, function["name"], cursor, "the call")
            for value in _leaves(json.loads(function["arguments"])):
                cursor = _after(prompt, value, cursor, f"a value of {function['name']}")
        if message.get("content"):
            cursor = _after(prompt, message["content"], cursor, f"the {message['role']} message")


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)


def _with_template(tokenizer: Any, template: str) -> Any:
    from transformers import AutoTokenizer

    copy = AutoTokenizer.from_pretrained(tokenizer.name_or_path)
    copy.chat_template = template
    return copy


@pytest.mark.parametrize("model_format", MODEL_FORMATS)
def test_every_format_writes_each_earlier_call_and_observation_in_order(
    tokenizer: Any, model_format: str
) -> None:
    adapter = format_for_template(model_format, tokenizer.chat_template)
    for step in _steps():
        prompt = build_prompt(tokenizer, adapter, model_format, step)
        # the fixture's template renders hermes tools itself; other formats get the adapter's prompt
        assert prompt.native == (adapter.name == "hermes")
        _assert_in_order(prompt.text, step.messages)
        if not prompt.native:
            names = re.findall(r"Result of (\w+):", prompt.text)  # each result says whose it is
            assert len(names) == sum(1 for message in step.messages if message["role"] == "tool")
            assert "the function" not in names


# Excerpts of families' templates that render tools themselves, written from their published
# templates: Kimi K2 writes a call's id where others write its name, Mistral refuses ids that
# are not 9 letters or digits and user turns that do not alternate, DeepSeek concatenates the
# arguments as a string.
KIMI_TEMPLATE = (
    "{%- if tools %}<|im_system|>tool_declare<|im_middle|>{{ tools | tojson }}<|im_end|>{% endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'tool' %}<|im_system|>tool<|im_middle|>## Return of {{ message.tool_call_id }}\n"
    "{{ message.content }}<|im_end|>"
    "{%- else %}<|im_{{ message.role }}|>{{ message.role }}<|im_middle|>{{ message.content or '' }}"
    "{%- if message.tool_calls %}<|tool_calls_section_begin|>{% for tc in message.tool_calls %}"
    "<|tool_call_begin|>{{ tc.id }}<|tool_call_argument_begin|>{% if tc.function.arguments is string %}"
    "{{ tc.function.arguments }}{% else %}{{ tc.function.arguments | tojson }}{% endif %}<|tool_call_end|>"
    "{% endfor %}<|tool_calls_section_end|>{% endif %}<|im_end|>{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_assistant|>assistant<|im_middle|>{% endif %}"
)
_MISTRAL_ID_CHECK = (
    "{%- if {id} is not string or {id} | length != 9 %}"
    "{{ raise_exception('Tool call IDs should be alphanumeric strings with length 9!') }}{% endif %}"
)
MISTRAL_TEMPLATE = (
    "{%- set ns = namespace(index=0) %}{%- for message in messages %}"
    "{%- if message.role == 'user' or (message.role == 'assistant' and not message.tool_calls) %}"
    "{%- if (message.role == 'user') != (ns.index % 2 == 0) %}"
    "{{ raise_exception('conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{%- set ns.index = ns.index + 1 %}{%- endif %}{%- endfor %}"
    "{%- if tools %}[AVAILABLE_TOOLS]{{ tools | tojson }}[/AVAILABLE_TOOLS]{% endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'user' %}[INST]{{ message.content }}[/INST]"
    "{%- elif message.role == 'assistant' and message.tool_calls %}[TOOL_CALLS]["
    "{%- for tc in message.tool_calls %}" + _MISTRAL_ID_CHECK.replace("{id}", "tc.id") + '{"name": "'
    '{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}, "id": "{{ tc.id }}"}'
    "{% if not loop.last %}, {% endif %}{%- endfor %}]</s>"
    "{%- elif message.role == 'assistant' %}{{ message.content }}</s>"
    "{%- elif message.role == 'tool' %}" + _MISTRAL_ID_CHECK.replace("{id}", "message.tool_call_id") + ""
    '[TOOL_RESULTS]{"content": {{ message.content | tojson }}, "call_id": "{{ message.tool_call_id }}"}'
    "[/TOOL_RESULTS]{%- endif %}{%- endfor %}"
)
DEEPSEEK_TEMPLATE = (
    "{%- if tools %}## Tools\n{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}{% endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'user' %}<｜User｜>{{ message.content }}"
    "{%- elif message.role == 'assistant' and message.tool_calls %}<｜Assistant｜><｜tool▁calls▁begin｜>"
    "{%- for tool in message.tool_calls %}<｜tool▁call▁begin｜>"
    "{{ tool.function.name + '<｜tool▁sep｜>' + tool.function.arguments }}<｜tool▁call▁end｜>{% endfor %}"
    "<｜tool▁calls▁end｜><｜end▁of▁sentence｜>"
    "{%- elif message.role == 'assistant' %}<｜Assistant｜>{{ message.content }}<｜end▁of▁sentence｜>"
    "{%- elif message.role == 'tool' %}<｜tool▁output▁begin｜>{{ message.content }}<｜tool▁output▁end｜>"
    "{%- endif %}{%- endfor %}{%- if add_generation_prompt %}<｜Assistant｜>{% endif %}"
)
# Llama 2's rules on the conversation format: no system turn, user and assistant alternating.
STRICT_PLAIN_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- if message.role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{%- if (message.role == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n"
    "{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _call_ids(step: GenerationRequest) -> list[tuple[str, str]]:
    return [
        (tool_call["id"], tool_call["function"]["name"])
        for message in step.messages
        for tool_call in message.get("tool_calls") or []
    ]


@pytest.mark.parametrize("family", ["kimi", "mistral", "deepseek"])
def test_a_familys_own_template_gets_the_history_as_it_takes_it(tokenizer: Any, family: str) -> None:
    template = {"kimi": KIMI_TEMPLATE, "mistral": MISTRAL_TEMPLATE, "deepseek": DEEPSEEK_TEMPLATE}[family]
    family_tokenizer = _with_template(tokenizer, template)
    adapter = format_for_template("auto", template)
    assert adapter.name == family
    for step in _steps():
        prompt = build_prompt(family_tokenizer, adapter, "auto", step)
        assert prompt.native
        _assert_in_order(prompt.text, step.messages)
        calls = _call_ids(step)
        if family == "kimi":  # the name is in the id, and the result says which call it returns
            for number, (_, name) in enumerate(calls):
                assert (
                    f"<|tool_call_begin|>functions.{name}:{number}<|tool_call_argument_begin|>" in prompt.text
                )
                assert f"## Return of functions.{name}:{number}\n" in prompt.text
        if family == "mistral":
            ids = re.findall(r'"(?:id|call_id)": "([^"]*)"', prompt.text)
            assert len(ids) == 2 * len(calls) and all(re.fullmatch(r"[A-Za-z0-9]{9}", id_) for id_ in ids)
        if family == "deepseek":  # arguments written as the JSON text they came as
            for message in step.messages:
                for tool_call in message.get("tool_calls") or []:
                    assert "<｜tool▁sep｜>" + tool_call["function"]["arguments"] in prompt.text


def _cut_by_the_step_cap(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history with the first turn's closing text taken out, as when the step cap ended it:
    an observation, then the next user turn."""
    for index in range(1, len(messages) - 1):
        roles = [message["role"] for message in messages[index - 1 : index + 2]]
        if roles == ["tool", "assistant", "user"] and not messages[index].get("tool_calls"):
            return messages[:index] + messages[index + 1 :]
    return messages


@pytest.mark.parametrize(("template", "model_format"), [("strict", "pythonic"), ("strict", "hermes"),
                                                        ("mistral", "auto")])  # fmt: skip
def test_templates_refusing_a_system_turn_or_two_user_turns_in_a_row_still_render(
    tokenizer: Any, template: str, model_format: str
) -> None:
    chat_template = STRICT_PLAIN_TEMPLATE if template == "strict" else MISTRAL_TEMPLATE
    strict = _with_template(tokenizer, chat_template)
    adapter = format_for_template(model_format, chat_template)
    cut = [
        GenerationRequest(messages=_cut_by_the_step_cap(step.messages), tools=step.tools)
        for step in _last_steps()
    ]
    cut = [step for step, full in zip(cut, _last_steps(), strict=True) if step.messages != full.messages]
    assert cut  # some episode has a turn to cut
    for step in [*cut, *_steps()]:
        prompt = build_prompt(strict, adapter, model_format, step)
        _assert_in_order(prompt.text, step.messages)
        assert adapter.system_prompt(step.tools)[:40] in prompt.text or prompt.native


# --- the transformers backend answers --------------------------------------------------------------


@pytest.fixture(scope="module")
def long_tiny_model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with room for a long-context episode's history (its positions are rotary:
    the same weights serve a longer context)."""
    folder = tmp_path_factory.mktemp("tiny-llama-long") / "model"
    shutil.copytree(tiny_model_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 16384}))
    return folder


async def _started(folder: Path, **options: Any) -> TransformersBackend:
    backend = build_backend(ModelOptions(path=str(folder), batch_wait_ms=50, max_batch=8, **options))
    assert isinstance(backend, TransformersBackend)
    await backend.start()
    return backend


async def test_the_backend_answers_the_longest_history_of_each_episode_in_every_format(
    long_tiny_model_dir: Path,
) -> None:
    """Every format answers two of the longest histories at once, taken in turn, so each
    episode's longest history is answered in several formats (all of them in every format
    prefilled the long-context one 17 times over: a minute of CPU for nothing more)."""
    backend = await _started(long_tiny_model_dir, max_new_tokens=6)
    options = backend.options
    try:
        longest = _last_steps()
        for index, model_format in enumerate(MODEL_FORMATS):
            steps = [longest[index % len(longest)], longest[(index + 1) % len(longest)]]
            backend.options = dataclasses.replace(options, format=model_format)
            backend.adapter = format_for_template(model_format, backend.tokenizer.chat_template)
            results = await asyncio.gather(*(backend.generate(step) for step in steps))
            for step, result in zip(steps, results, strict=True):
                prompt = build_prompt(backend.tokenizer, backend.adapter, model_format, step)
                tokens = backend.tokenizer(prompt.text, add_special_tokens=False)["input_ids"]
                assert result.usage.prompt_tokens == len(tokens), model_format
                assert result.finish_reason in ("stop", "length", "tool_calls")
                assert result.tool_calls or result.content is not None
    finally:
        await backend.close()


# --- guided modes over several turns ---------------------------------------------------------------


def _conversation_text(step: GenerationRequest) -> str:
    return "\n".join(
        m["content"] for m in step.messages if m["role"] in ("user", "tool") and m.get("content")
    )


def _enum_values(schema: Any) -> list[Any]:
    """Every value an ``enum`` anywhere in `schema` (tools, parameters, items) offers."""
    if isinstance(schema, list):
        return [value for item in schema for value in _enum_values(item)]
    if not isinstance(schema, dict):
        return []
    found = list(schema.get("enum", [])) if isinstance(schema.get("enum"), list) else []
    return found + [value for item in schema.values() for value in _enum_values(item)]


def _assert_valid_for_the_turn(step: GenerationRequest, tool_calls: list[dict[str, Any]]) -> None:
    functions = {tool["function"]["name"]: tool["function"] for tool in step.tools}
    for tool_call in tool_calls:
        name = tool_call["function"]["name"]
        assert name in functions, (name, sorted(functions))
        arguments = json.loads(tool_call["function"]["arguments"])
        # the episode runner's own check: what a validator dispatches rather than refuses
        assert schema_error(arguments, functions[name]["parameters"]) is None, (name, arguments)


def test_values_may_be_copied_from_what_earlier_calls_returned() -> None:
    for step in _steps():
        source = Extraction.of_messages(step.messages)
        assert source is not None
        for message in step.messages:
            if message["role"] in ("user", "tool"):
                assert message["content"] in source.text


@pytest.mark.parametrize("guided", ["on", "forced", "grounded"])
async def test_guided_calls_stay_schema_valid_for_the_turns_tools_after_earlier_calls(
    long_tiny_model_dir: Path, guided: str
) -> None:
    backend = await _started(long_tiny_model_dir, max_new_tokens=160, guided=guided)
    steps = [steps[min(1, len(steps) - 1)] for steps in map(_steps_of, _episodes())]
    try:
        for format_name in sorted(GUIDED_FORMATS):
            backend.adapter = ADAPTERS[format_name]
            requests = [dataclasses.replace(step, tool_choice="required") for step in steps]
            requests += [dataclasses.replace(step, tool_choice="auto") for step in steps]
            results = await asyncio.gather(*(backend.generate(request) for request in requests))
            for request, result in zip(requests, results, strict=True):
                if request.tool_choice == "required" or guided == "forced":
                    assert result.tool_calls, (format_name, result.raw_text)
                    assert decode(ADAPTERS[format_name].clean(result.raw_text)), result.raw_text
                if result.tool_calls:
                    _assert_valid_for_the_turn(request, result.tool_calls)
                if result.tool_calls and guided != "on":  # copied from the user turns or the results
                    text = _conversation_text(request)
                    # an enum's values are the schema's, not copied (a design's `action` parameter)
                    choices = set(_enum_values(request.tools))
                    for tool_call in result.tool_calls:
                        for value in _leaves(json.loads(tool_call["function"]["arguments"])):
                            copied = not isinstance(value, str) or value in text or value in choices
                            assert copied, (value, result.raw_text)
    finally:
        await backend.close()


# --- the openai backend forwards the history ---------------------------------------------------------


def _engine_answer(sent: dict[str, Any]) -> web.Response:
    name = sent["tools"][0]["function"]["name"]
    call = {"id": "engine_1", "type": "function", "function": {"name": name, "arguments": "{}"}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return web.json_response({"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]})


def _assert_calls_paired_with_results(messages: list[dict[str, Any]]) -> None:
    ids: list[str] = []
    for message in messages:
        for tool_call in message.get("tool_calls") or []:
            assert isinstance(tool_call["function"]["arguments"], str)
            json.loads(tool_call["function"]["arguments"])
            ids.append(tool_call["id"])
        if message["role"] == "tool":
            assert message["tool_call_id"] in ids
    assert ids


def _with_object_arguments(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def parsed(tool_call: dict[str, Any]) -> dict[str, Any]:
        function = tool_call["function"]
        return {**tool_call, "function": {**function, "arguments": json.loads(function["arguments"])}}

    return [
        {**message, "tool_calls": [parsed(tool_call) for tool_call in message["tool_calls"]]}
        if message.get("tool_calls")
        else message
        for message in messages
    ]


def _arguments(message: dict[str, Any]) -> list[Any]:
    return [json.loads(tool_call["function"]["arguments"]) for tool_call in message.get("tool_calls") or []]


async def test_the_openai_backend_forwards_each_history_as_it_came(
    serve_engine: Callable[..., Awaitable[str]],
) -> None:
    received: list[dict[str, Any]] = []

    async def chat(request: web.Request) -> web.Response:
        received.append(await request.json())
        return _engine_answer(received[-1])

    base_url = await serve_engine(chat)  # tests/miner/conftest.py
    backend = OpenAIBackend(ModelOptions(backend="openai", base_url=base_url, name="engine-model"))
    await backend.start()
    try:
        for step in _steps():
            result = await backend.generate(step)
            assert result.tool_calls and result.tool_calls[0]["id"] == "engine_1"
            sent = received[-1]
            assert sent["messages"] == step.messages and sent["tools"] == step.tools
            _assert_calls_paired_with_results(sent["messages"])
        # a history whose earlier arguments are objects goes out as OpenAI has them: JSON text
        step = _last_steps()[0]
        await backend.generate(dataclasses.replace(step, messages=_with_object_arguments(step.messages)))
        sent_messages = received[-1]["messages"]
        _assert_calls_paired_with_results(sent_messages)
        assert [_arguments(message) for message in sent_messages] == [
            _arguments(message) for message in step.messages
        ]
    finally:
        await backend.close()


# --- the signed endpoint, end to end -------------------------------------------------------------------


@pytest.fixture(scope="module")
def episode_wallets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bt.Wallet]:
    root = tmp_path_factory.mktemp("episode-wallets")
    wallets = {}
    for role in ("miner", "validator"):
        wallet = bt.Wallet(name=role, hotkey="default", path=str(root))
        wallet.create_new_coldkey(use_password=False, suppress=True)
        wallet.create_new_hotkey(use_password=False, suppress=True)
        wallets[role] = wallet
    return wallets


@pytest.fixture
async def signed_post(
    episode_wallets: dict[str, bt.Wallet],
) -> AsyncIterator[Callable[[Any, bytes], Awaitable[tuple[int, dict[str, Any]]]]]:
    """Serves a started backend behind the real gate; posts bodies signed by a validator."""
    servers: list[MinerServer] = []
    http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
    miner = episode_wallets["miner"].hotkey.ss58_address
    validator = episode_wallets["validator"]

    async def post(backend: Any, body: bytes) -> tuple[int, dict[str, Any]]:
        if not servers:
            app = build_miner_app(
                hotkey_ss58=miner,
                directory=StaticDirectory(
                    [DirectoryEntry(uid=1, hotkey=validator.hotkey.ss58_address, stake=1.0)]
                ),
                policy=ServerPolicy(handler_timeout_s=60.0, per_caller_rate=1e6, per_caller_burst=1e6),
                handler=MinerModel(backend).handle,
            )
            servers.append(MinerServer(app, host="127.0.0.1", port=0))
            await servers[0].start()
        headers = bt.http_auth.sign(
            validator.hotkey, method="POST", path=CHAT_PATH, body=body, receiver_ss58=miner
        )
        headers["Content-Type"] = "application/json"
        url = f"http://127.0.0.1:{servers[0].port}{CHAT_PATH}"
        async with http.post(url, data=body, headers=headers) as response:
            return response.status, await response.json()

    yield post
    for server in servers:
        await server.stop(drain_timeout=2.0)
    await http.close()


def _wire_body(step: GenerationRequest) -> bytes:
    """The step as a validator sends it (the wire models' canonical body)."""
    payload = {"messages": step.messages, "tools": step.tools, "tool_choice": "auto", "max_tokens": 8}
    return ChatCompletionRequest.model_validate(payload).to_body()


@pytest.mark.parametrize("backend_name", ["transformers", "openai"])
async def test_the_signed_endpoint_serves_an_episode_step(
    signed_post: Callable[[Any, bytes], Awaitable[tuple[int, dict[str, Any]]]],
    serve_engine: Callable[..., Awaitable[str]],
    long_tiny_model_dir: Path,
    backend_name: str,
) -> None:
    received: list[dict[str, Any]] = []

    async def chat(request: web.Request) -> web.Response:
        received.append(await request.json())
        return _engine_answer(received[-1])

    if backend_name == "openai":
        options = ModelOptions(backend="openai", base_url=await serve_engine(chat), name="engine-model")
    else:
        options = ModelOptions(path=str(long_tiny_model_dir), max_new_tokens=8, batch_wait_ms=5)
    backend = build_backend(options)
    await backend.start()
    try:
        for step in _last_steps():
            status, answer = await signed_post(backend, _wire_body(step))
            assert status == 200, answer
            message = answer["choices"][0]["message"]
            assert message.get("tool_calls") or message.get("content") is not None
            assert answer["usage"]["prompt_tokens"] > 0 or backend_name == "openai"
            if backend_name == "openai":  # the engine got the history the validator sent
                without_nulls = [{k: v for k, v in m.items() if v is not None} for m in step.messages]
                assert received[-1]["messages"] == without_nulls
                _assert_calls_paired_with_results(received[-1]["messages"])
    finally:
        await backend.close()
