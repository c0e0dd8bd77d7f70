"""What a tool-call format is: the :class:`Format` each module of this package defines.

A format is the way one model family (or one prompt) writes function calls. Its module says
- how calls are written (``render``: the scorer renders expected answers with it, the miner
  writes earlier calls back into a text history with it),
- how they are read where the family has markers of its own (``markers``: the decoder finds the
  first marker in a text and hands it to that marker's reader),
- how a chat template shows that its model was trained on it (``fingerprints``),
- and, for the formats a miner can be started with (``--model.format``), how a model is asked
  for it (:class:`Prompting`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scoring.formats.reading import AnswerReader, NativeReader, Reading, Schemas, TextDecoder
from scoring.model import Call, Limits
from scoring.schema import function_of

Renderer = Callable[[list[Call]], str | list[dict[str, Any]]]


@dataclass(frozen=True)
class Marker:
    """Text that opens a family's call markup wherever it stands, and the reader of that markup:
    ``reader``, or ``answer_reader`` for markup that holds an answer of its own, read by the
    decoder of answer text it is handed (:meth:`reader_with`). ``may_hold_no_call``: markup that
    may be all reasoning and answer (Harmony's channels); for any other marker, markup without a
    complete call is a decode error."""

    text: str
    reader: NativeReader | None = None
    may_hold_no_call: bool = False
    answer_reader: AnswerReader | None = None

    def __post_init__(self) -> None:
        if (self.reader is None) == (self.answer_reader is None):
            raise ValueError(f"marker {self.text!r}: give it a reader or an answer_reader, not both")

    def reader_with(self, decode_text: TextDecoder) -> NativeReader:
        """The marker's reader, for a decoder whose answer text reads with ``decode_text``."""
        if self.reader is not None:
            return self.reader
        answer_reader = self.answer_reader
        assert answer_reader is not None  # __post_init__: one of the two

        def read(text: str, at: int, limits: Limits, schemas: Schemas) -> Reading:
            return answer_reader(text, at, limits, schemas, decode_text)

        return read


def functions_of(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The function schemas of OpenAI tools (plain function dicts are accepted too)."""
    return [function_of(tool) for tool in tools]


def tool_lines(tools: list[dict[str, Any]]) -> str:
    """The tools as JSON, one per line."""
    return "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)


def result_line(name: str, content: str) -> str:
    """A tool result in a text history, for formats with no result markup of their own."""
    return f"Result of {name or 'the function'}: {content}"


@dataclass(frozen=True)
class CallMarkup:
    """A family's calls as guided decoding constrains them (subnet.miner.guided builds an xgrammar
    structural tag from it): ``opening``, then calls joined by ``separator``, then ``closing``.
    One call is ``begin`` (``{name}`` is the function's name; ``{index}`` a call number, digits),
    the arguments in ``arguments`` style (xgrammar's names: ``json`` for a JSON object,
    ``qwen_xml``, ``glm_xml``, ``deepseek_xml``, ``deepseek_v4_1_xml``, ``kimi_k3_xml`` for the
    families' parameter markup), then ``end``. Plain data: scoring never needs xgrammar."""

    begin: str
    end: str = ""
    arguments: str = "json"
    opening: str = ""
    separator: str = ""
    closing: str = ""


@dataclass(frozen=True)
class Prompting:
    """How the miner asks a model for a format, when the model's chat template cannot take the
    tools itself, and how it reads the answer (subnet.miner.adapters applies it).

    - ``system_prompt(tools)``: our tool prompt, in the format's idiom;
    - ``forced_prefix(name)``: the start of an answer that must call ``name`` (None: any function);
      ``tool_choice`` required or named starts the answer with it;
    - ``tool_result(name, content)``: a tool result written back into a text history;
    - ``history_calls(calls)``: earlier calls written back into a text history; None: ``render``,
      or JSON where the format cannot hold a name;
    - ``clean(text)``: the format's own clean-up of an answer, after reasoning and Llama's
      end-of-message tokens are taken out; ``content_of(text)``: the words of an answer without a
      call (Harmony's final channel);
    - ``keeps_special_tokens``: the markers are special tokens, which a tokenizer's
      ``skip_special_tokens`` would remove;
    - ``history_call_id(name, number)``: the id of an earlier call as the family's template wants it;
    - ``guided``: ``--model.guided`` can constrain answers in this format with the miner's own
      grammar (every mode; subnet.miner.guided); ``markup``: the family's call markup, which
      ``--model.guided on`` constrains through xgrammar's structural tags;
    - ``call_bias``: with guided decoding, the logit bias of the call opener when the model is
      taught the format by ``system_prompt`` only (measured on the demo model: docs/miner.md).
    """

    system_prompt: Callable[[list[dict[str, Any]]], str]
    forced_prefix: Callable[[str | None], str]
    tool_result: Callable[[str, str], str] = result_line
    history_calls: Callable[[list[tuple[str, Any]]], str] | None = None
    clean: Callable[[str], str] | None = None
    content_of: Callable[[str], str] | None = None
    keeps_special_tokens: bool = False
    history_call_id: Callable[[str, int], str] | None = None
    guided: bool = False
    call_bias: float | None = None
    markup: CallMarkup | None = None


@dataclass(frozen=True)
class Format:
    """One tool-call format.

    - ``name``: its ``--model.format`` name and ``render`` name;
    - ``render``: calls -> the text a model of the format writes (OpenAI ``tool_calls`` dicts for
      ``openai``); ``decode`` reads it back;
    - ``decode_needs_tools``: some values do not survive the text without the offered schema (a
      string "42" in Qwen3-Coder's XML reads back as 42 unless the schema says string), so
      ``decode(text, tools=...)`` reads it back (scoring's ``NATIVE_FORMATS``);
    - ``markers``: where the family's markup opens, for the decoder (formats read inside
      ``<tool_call>`` blocks or as whole texts have none: scoring.decoding reads those);
    - ``fingerprints``: groups of strings; a chat template holding every string of one group was
      written for this format (``--model.format auto``);
    - ``fingerprint_rank``: fingerprints are tried in rank order, lowest first: a format whose
      markup also holds another's fingerprint (GLM's and Qwen3-Coder's ``<tool_call>``, Hermes'
      fingerprint) ranks before it; a test checks that each format's own markup is told as itself;
    - ``prompting``: how the miner asks for it; None for output shapes no miner is started with.
    - ``writes``, ``families``, ``auto_when``: the row of docs/miner.md's table (markdown).
    """

    name: str
    render: Renderer
    writes: str = ""
    families: str = ""
    auto_when: str = ""
    decode_needs_tools: bool = False
    markers: tuple[Marker, ...] = ()
    fingerprints: tuple[tuple[str, ...], ...] = ()
    fingerprint_rank: int = 0
    prompting: Prompting | None = None

    def shown_by(self, chat_template: str) -> bool:
        """Whether the chat template shows this format (holds every string of a fingerprint)."""
        return any(all(part in chat_template for part in group) for group in self.fingerprints)


def family_prompt(render: Renderer) -> Callable[[list[dict[str, Any]]], str]:
    """The tool prompt of a family whose template teaches its own markup, for the rare template
    that cannot render tools itself: the tools, and one call in the family's markup."""

    def system_prompt(tools: list[dict[str, Any]]) -> str:
        example = render([Call("function_name", {"parameter": "value"})])
        return (
            "You may call functions to answer the user. The functions, as JSON schemas:\n"
            f"{tool_lines(tools)}\n"
            f"To call a function, write:\n{example}\n"
            "Take argument values from the user's words; do not invent them. If no function fits the "
            "request, or a required argument is missing, answer in plain text and call nothing."
        )

    return system_prompt


def forced_markup(any_call: str, named_call: str) -> Callable[[str | None], str]:
    """A forced call's start in a family's markup: ``any_call``, then, for a named function,
    ``named_call`` with ``{name}`` filled in."""

    def forced_prefix(function_name: str | None) -> str:
        if function_name is None:
            return any_call
        return any_call + named_call.format(name=function_name)

    return forced_prefix


def family_prompting(
    render: Renderer,
    forced: tuple[str, str],
    *,
    content_of: Callable[[str], str] | None = None,
    history_call_id: Callable[[str, int], str] | None = None,
    markup: CallMarkup | None = None,
) -> Prompting:
    """The prompting of a family whose markers are special tokens of its own."""
    return Prompting(
        system_prompt=family_prompt(render),
        forced_prefix=forced_markup(*forced),
        content_of=content_of,
        keeps_special_tokens=True,
        history_call_id=history_call_id,
        markup=markup,
    )
