"""The tool-call formats, one module each, in one registry.

Each module of this package defines ``FORMAT``, a :class:`~scoring.formats.spec.Format`: its
name, how calls are rendered in it, how its markers are read, the chat-template fingerprints
that show it, and, for the formats a miner can be started with (``--model.format``), how a
model is prompted for it (:class:`~scoring.formats.spec.Prompting`: tool prompt, forced-call
start, clean-up, history ids, whether guided decoding covers it and its call bias).

Why everything sits here, in the lowest layer: the scorer renders expected answers in every
format and decodes every family's markers, so the rendering and reading halves must live in
scoring/, which imports nothing above it. The miner's half (prompts, forced-call starts,
clean-up) is plain strings and pure functions with no miner dependency, so it stays in the same
file rather than in a second per-format file under subnet/miner/: one file per format, read by
the renderers (scoring.rendering), the decoder (scoring.native's markers), the miner's
adapters (subnet.miner.adapters), config's ``--model.format`` choices (:func:`format_names`),
localnet and the benchmarks. What only the miner can do with a format (its guided-decoding
grammar) stays in subnet/miner/guided/grammar.py, registered there by format name (``GUIDED_FORMATS``).

Adding a format: a module here defining ``FORMAT``, one line in ``_MODULES``, docs/miner.md's
table regenerated with :func:`formats_markdown` (and, only if it is to be guided, its grammar in
subnet/miner/guided). tests/scoring/test_formats_registry.py says what is missing.
"""

from __future__ import annotations

from scoring.formats import (
    busybeaver,
    codeact,
    deepseek,
    deepseek_dsml,
    deepseek_dsml_v41,
    gemma4,
    glm,
    harmony,
    hermes,
    json,
    kimi,
    kimi_k3,
    llama3,
    llama4,
    mistral,
    openai,
    pythonic,
    qwen3_coder,
)
from scoring.formats.spec import Format, Marker, Prompting

# The order of --model.format's choices (and of render's formats): output shapes first, then the
# families whose decoding needs the offered tools.
_MODULES = (
    openai,
    hermes,
    pythonic,
    json,
    codeact,
    busybeaver,
    qwen3_coder,
    llama3,
    llama4,
    mistral,
    deepseek,
    deepseek_dsml,
    deepseek_dsml_v41,
    kimi,
    kimi_k3,
    glm,
    harmony,
    gemma4,
)

REGISTRY: dict[str, Format] = {module.FORMAT.name: module.FORMAT for module in _MODULES}

# Chat-template fingerprints in the order they are tried (the most specific markup first).
_BY_FINGERPRINT_RANK: tuple[Format, ...] = tuple(
    sorted((spec for spec in REGISTRY.values() if spec.fingerprints), key=lambda spec: spec.fingerprint_rank)
)


def format_names() -> tuple[str, ...]:
    """The formats a miner can be started with: ``--model.format``'s choices besides ``auto``."""
    return tuple(name for name, spec in REGISTRY.items() if spec.prompting is not None)


def generic_formats() -> tuple[str, ...]:
    """The ``--model.format`` formats that are no family's special-token markup (hermes, pythonic,
    json, codeact): any instruct model can be prompted into them (the guided benchmark's formats)."""
    return tuple(name for name in format_names() if not REGISTRY[name].decode_needs_tools)


def tool_free_formats() -> tuple[str, ...]:
    """The formats whose renderings ``decode`` reads back without the offered tools."""
    return tuple(name for name, spec in REGISTRY.items() if not spec.decode_needs_tools)


def native_formats() -> tuple[str, ...]:
    """The model families' own markups, read back with ``decode(text, tools=...)``."""
    return tuple(name for name, spec in REGISTRY.items() if spec.decode_needs_tools)


def guided_formats() -> tuple[str, ...]:
    """The formats ``--model.guided`` covers."""
    return tuple(name for name, spec in REGISTRY.items() if spec.prompting and spec.prompting.guided)


def prompted_call_biases() -> dict[str, float]:
    """Guided decoding's call-opener bias per format, for a model taught the format by our prompt."""
    return {
        name: spec.prompting.call_bias
        for name, spec in REGISTRY.items()
        if spec.prompting is not None and spec.prompting.call_bias is not None
    }


def template_format(chat_template: str | None) -> str | None:
    """The format a chat template was written for, when it shows one (first by fingerprint rank)."""
    if not chat_template:
        return None
    for spec in _BY_FINGERPRINT_RANK:
        if spec.shown_by(chat_template):
            return spec.name
    return None


def fingerprint_order() -> tuple[str, ...]:
    """The formats with fingerprints, in the order ``template_format`` tries them."""
    return tuple(spec.name for spec in _BY_FINGERPRINT_RANK)


def markers() -> tuple[Marker, ...]:
    """Every family's call markers with their readers, in registry order."""
    return tuple(marker for spec in REGISTRY.values() for marker in spec.markers)


def formats_markdown() -> str:
    """docs/miner.md's table of ``--model.format``'s formats, in the order ``auto`` tries them
    (formats without fingerprints last)."""
    named = [name for name in format_names() if not REGISTRY[name].fingerprints]
    rows = [
        "| format | the model writes | families | `auto` picks it when the template shows |",
        "| --- | --- | --- | --- |",
    ]
    for name in (*(n for n in fingerprint_order() if n in format_names()), *named):
        spec = REGISTRY[name]
        rows.append(f"| `{name}` | {spec.writes} | {spec.families} | {spec.auto_when} |")
    return "\n".join(rows) + "\n"


__all__ = [
    "REGISTRY",
    "Format",
    "Marker",
    "Prompting",
    "fingerprint_order",
    "format_names",
    "formats_markdown",
    "generic_formats",
    "guided_formats",
    "markers",
    "native_formats",
    "prompted_call_biases",
    "template_format",
    "tool_free_formats",
]
