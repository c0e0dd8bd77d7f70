"""The format registry (scoring.formats): every format has every piece, and every reader of the
registry (renderer, decoder, miner adapters, --model.format, localnet, guided decoding, the
guided benchmark, docs/miner.md) offers the same formats."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from scoring import Call
from scoring.decoding import NATIVE_MARKERS, NATIVE_MAY_HOLD_NO_CALL, decode
from scoring.formats import (
    REGISTRY,
    fingerprint_order,
    format_names,
    formats_markdown,
    generic_formats,
    guided_formats,
    markers,
    native_formats,
    prompted_call_biases,
    template_format,
    tool_free_formats,
)
from scoring.rendering import FORMATS, NATIVE_FORMATS, render

ROOT = Path(__file__).resolve().parents[2]

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "code": {"type": "string"},
                    "metric": {"type": "boolean"},
                    "ratio": {"type": "number"},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book_hotel",
            "description": "Book a room.",
            "parameters": {
                "type": "object",
                "properties": {
                    "guests": {"type": "array", "items": {"type": "string"}},
                    "options": {"type": "object"},
                },
            },
        },
    },
]

SAMPLE_CALLS: list[list[Call]] = [
    [Call("get_weather", {"city": "Paris"})],
    [Call("get_weather", {"city": "Rio de Janeiro", "days": 3, "code": "42", "metric": False, "ratio": 0.5})],
    [
        Call("get_weather", {"city": "Tokyo"}),
        Call("book_hotel", {"guests": ["Ann", "Bo"], "options": {"late": True, "floor": 2}}),
    ],
    [Call("book_hotel", {})],
]


@pytest.mark.parametrize("name", list(REGISTRY))
@pytest.mark.parametrize("calls", SAMPLE_CALLS, ids=["one", "typed", "parallel", "no-arguments"])
def test_every_format_reads_back_what_it_renders(name: str, calls: list[Call]) -> None:
    rendered = render(calls, name)
    assert decode(rendered, tools=TOOLS) == calls, rendered
    if not REGISTRY[name].decode_needs_tools:
        assert decode(rendered) == calls, rendered


def test_the_registry_is_split_into_what_decode_needs() -> None:
    assert set(FORMATS) | set(NATIVE_FORMATS) == set(REGISTRY)
    assert not set(FORMATS) & set(NATIVE_FORMATS)
    assert (tool_free_formats(), native_formats()) == (FORMATS, NATIVE_FORMATS)
    assert all(name.isidentifier() and name == name.lower() for name in REGISTRY)


def test_each_formats_markers_open_its_own_rendering() -> None:
    assert tuple(marker.text for marker in markers()) == tuple(text for text, _ in NATIVE_MARKERS)
    assert all(
        marker.reader in (None, reader) for marker, (_, reader) in zip(markers(), NATIVE_MARKERS, strict=True)
    )
    assert {m.text for m in markers() if m.may_hold_no_call} == NATIVE_MAY_HOLD_NO_CALL
    for name, spec in REGISTRY.items():
        if spec.markers:
            rendered = str(render(SAMPLE_CALLS[0], name))
            assert any(marker.text in rendered for marker in spec.markers), name
            assert spec.decode_needs_tools, name  # a family's own markup


# A call as a chat template shows one: "func_name" as the BFCL prompt's example names it.
_TEMPLATE_CALL = [Call("func_name", {"parameter": "value"})]


@pytest.mark.parametrize("name", fingerprint_order())
def test_a_formats_own_markup_is_told_as_itself(name: str) -> None:
    """Fingerprints are tried by rank: a format whose markup also holds another format's
    fingerprint must rank before it (GLM's and Qwen3-Coder's <tool_call> before Hermes')."""
    markup = str(render(_TEMPLATE_CALL, name))
    assert template_format(markup) == name, (markup, template_format(markup))
    assert REGISTRY[name].prompting is not None


def test_fingerprint_ranks_are_distinct_and_formats_without_one_are_never_told() -> None:
    ranks = [REGISTRY[name].fingerprint_rank for name in fingerprint_order()]
    assert len(set(ranks)) == len(ranks) and ranks == sorted(ranks)
    for name, spec in REGISTRY.items():
        if not spec.fingerprints and spec.prompting is not None:
            markup = str(render(_TEMPLATE_CALL, name))
            assert template_format(markup) is None, (name, markup)
    assert template_format(None) is None and template_format("") is None


@pytest.mark.parametrize("name", format_names())
def test_every_model_format_has_its_prompting_pieces(name: str) -> None:
    from subnet.miner.adapters import ADAPTERS

    adapter = ADAPTERS[name]
    prompt = adapter.system_prompt(TOOLS)
    assert "get_weather" in prompt and "book_hotel" in prompt
    forced_any, forced_named = adapter.forced_prefix(None), adapter.forced_prefix("get_weather")
    assert forced_any and forced_named.startswith(forced_any) and "get_weather" in forced_named
    # A call written back into a history opens as a forced call does.
    assert adapter.render_calls([("get_weather", {"city": "Paris"})]).startswith(forced_named)
    assert adapter.render_tool_result("get_weather", "sunny").count("sunny") == 1
    assert adapter.clean("<think>hm</think> plain words") == "plain words"
    assert REGISTRY[name].writes and REGISTRY[name].families and REGISTRY[name].auto_when


@pytest.mark.parametrize("name", format_names())
def test_a_call_python_cannot_name_is_written_back_all_the_same(name: str) -> None:
    """A history call whose name the format cannot hold (python syntax: llama4, pythonic, codeact)
    is written as JSON, which says the same; it never fails the request."""
    from subnet.miner.adapters import ADAPTERS

    written = ADAPTERS[name].render_calls([("look up", {"city": "Paris"})])
    assert "look up" in written and "Paris" in written


def test_model_format_choices_are_the_registry_names() -> None:
    from subnet import config
    from subnet.miner.adapters import ADAPTERS, MODEL_FORMATS

    assert tuple(ADAPTERS) == format_names()
    assert ("auto", *format_names()) == MODEL_FORMATS
    assert ("auto", *format_names()) == config.MODEL_FORMATS
    assert "auto" not in REGISTRY


def test_localnet_offers_every_model_format() -> None:
    from subnet.localnet.settings import miner_formats

    assert tuple(miner_formats()) == format_names()


def test_guided_decoding_covers_the_formats_the_registry_says() -> None:
    from subnet.miner.guided import GUIDED_FORMATS, PROMPTED_CALL_BIAS

    assert set(GUIDED_FORMATS) == set(guided_formats())
    assert prompted_call_biases() == PROMPTED_CALL_BIAS
    assert set(prompted_call_biases()) <= set(guided_formats())


def test_the_guided_benchmark_offers_the_prompted_formats(load_bench: Callable[[str], ModuleType]) -> None:
    bench = load_bench("guided_calls")
    assert set(bench.FORMATS) == set(generic_formats())
    assert set(guided_formats()) <= set(generic_formats())


def _docs_table() -> str:
    text = (ROOT / "docs" / "miner.md").read_text(encoding="utf-8")
    section = text[text.index("## Output adapters (`--model.format`)") :]
    match = re.search(r"^\| format \|.*?\n(?=\n)", section, re.DOTALL | re.MULTILINE)
    assert match is not None, "docs/miner.md lost its table of formats"
    return match.group(0)


def test_docs_table_lists_every_format_in_the_order_auto_tries_them() -> None:
    assert _docs_table() == formats_markdown(), (
        "regenerate docs/miner.md's table of formats with scoring.formats.formats_markdown()"
    )
    listed = re.findall(r"^\| `(\w+)` \|", formats_markdown(), re.MULTILINE)
    assert sorted(listed) == sorted(format_names())
