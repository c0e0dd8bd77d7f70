"""Fixtures for the miner tests: a tiny random Llama with a tokenizer trained here (no download)."""

from __future__ import annotations

import random
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web

ChatHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# A ChatML template that renders tools the Hermes way (as Qwen's does), so the backend's
# native `tools=` path and the `auto` format detection both run against a real template.
TINY_CHAT_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n"
    "{%- if messages[0].role == 'system' %}{{ messages[0].content }}\n\n{% endif %}"
    "You may call functions. <tools>\n"
    "{%- for tool in tools %}\n{{ tool | tojson }}{%- endfor %}\n</tools>\n"
    'Answer calls as <tool_call>{"name": ..., "arguments": ...}</tool_call><|im_end|>\n'
    "{%- elif messages[0].role == 'system' %}<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role != 'system' %}<|im_start|>{{ message.role }}\n"
    "{%- if message.content %}{{ message.content }}{% endif %}"
    "{%- for call in message.tool_calls or [] %}\n<tool_call>\n"
    '{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}\n</tool_call>'
    "{%- endfor %}<|im_end|>\n"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# The same conversation format without any tool support: the adapters' own prompts are used.
PLAIN_CHAT_TEMPLATE = (
    "{%- for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n"
    "{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_VOCABULARY = (
    "weather city paris tokyo berlin london unit celsius fahrenheit get set find book flight hotel "
    "date time price stock symbol convert currency amount from to search query limit the a of for "
    "what is in how much please call function tool arguments name result answer user assistant "
    "system value true false null number list json python code block list files read path"
)
_WORDS = _VOCABULARY.split(" ")


def _corpus(rng: random.Random) -> list[str]:
    lines = []
    for _ in range(400):
        words = rng.choices(_WORDS, k=rng.randint(4, 14))
        lines.append(" ".join(words))
    lines += [
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        '[get_weather(city="Tokyo", unit="celsius")]',
        '{"name": "convert_currency", "arguments": {"amount": 10, "from": "EUR", "to": "USD"}}',
        '```python\nbook_flight(date="2024-05-01", city="Berlin")\n```',
    ] * 20
    return lines


def build_tiny_model(
    folder: Path,
    chat_template: str = TINY_CHAT_TEMPLATE,
    seed: int = 0,
    extra_specials: tuple[str, ...] = (),
    positions: int = 2048,
) -> Path:
    """A 2-layer, 32-wide Llama and a BPE tokenizer trained on a small corpus, saved in `folder`.
    ``extra_specials``: more special tokens (a model family's call markers); ``positions``: the
    longest sequence it takes (its 600-token vocabulary spells a prompt with many tools long)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    rng = random.Random(seed)
    specials = ["<pad>", "<|im_start|>", "<|im_end|>", *extra_specials]
    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_corpus(rng), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", bos_token="<|im_start|>", eos_token="<|im_end|>"
    )
    fast.chat_template = chat_template

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=positions,
        # Large initial weights give decisive logits, so greedy choices are far from ties and
        # padded (batched) and unpadded runs pick the same tokens.
        initializer_range=0.5,
        pad_token_id=fast.pad_token_id,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id, bos_token_id=fast.bos_token_id
    )
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama") / "model")


@pytest.fixture(scope="session")
def plain_tiny_model_dir(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Path:
    """The same model with a template that knows nothing of tools (transformers keeps the
    template in chat_template.jinja beside the tokenizer)."""
    folder = tmp_path_factory.mktemp("tiny-llama-plain") / "model"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "chat_template.jinja").write_text(PLAIN_CHAT_TEMPLATE)
    return folder


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Small models are latency-bound: on a shared CPU one intra-op thread is several times faster."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
async def serve_engine() -> AsyncIterator[Callable[[ChatHandler], Awaitable[str]]]:
    """Starts a loopback stand-in for an OpenAI-compatible engine answering chat completions
    with the given handler; returns its base URL (``.../v1``). Stopped after the test."""
    runners: list[web.AppRunner] = []

    async def serve(chat: ChatHandler) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        runner = web.AppRunner(app, shutdown_timeout=0.1)
        await runner.setup()
        runners.append(runner)
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        return f"http://127.0.0.1:{runner.addresses[0][1]}/v1"

    yield serve
    for runner in runners:
        await runner.cleanup()


@pytest.fixture(scope="session")
def tiny_model_builder() -> Callable[..., Path]:
    """`build_tiny_model` itself, for a test that needs its own template or special tokens
    (test modules cannot import conftest under importlib mode)."""
    return build_tiny_model
