"""Schema-guided decoding: keeps each generated row on a well-formed call of an offered tool.

The constraint is xgrammar's, as in vLLM, SGLang and TensorRT-LLM: the offered tools' schemas
and the adapter's format become one EBNF grammar (`grammar`; a family's own markup through
xgrammar's structural tags, `markup`), compiled once per tokenizer,
format and tools, and matched by one `GrammarMatcher` per row that fills a token bitmask each
step (`processor`). ``--model.guided forced`` and ``grounded`` copy argument values from the
request (`extraction`, as grammar alternatives) and, for ``grounded``, keep the call only where
the request grounds it (`grounding`). Nothing the model writes is executed; the guide only
removes tokens from the choice.
"""

from __future__ import annotations

from subnet.config.settings import GuidedMode
from subnet.miner.guided.extraction import Extraction
from subnet.miner.guided.grammar import (
    GUIDED_FORMATS,
    MAX_STRING,
    CallGrammar,
    functions_of,
    guided_format_names,
    markup_formats,
)
from subnet.miner.guided.grounding import (
    GROUNDED_MAX_VALUE_GAP,
    CallEvidence,
    best_fitting,
    content_words,
    tool_words,
    ungrounded_reason,
)
from subnet.miner.guided.processor import (
    CLOSING_WINDOW,
    NATIVE_CALL_BIAS,
    PROMPTED_CALL_BIAS,
    Guidance,
    GuidedCalls,
    RowGuide,
    call_bias_for,
    closing_text,
)

__all__ = [
    "CLOSING_WINDOW",
    "GROUNDED_MAX_VALUE_GAP",
    "GUIDED_FORMATS",
    "MAX_STRING",
    "NATIVE_CALL_BIAS",
    "PROMPTED_CALL_BIAS",
    "CallEvidence",
    "CallGrammar",
    "Extraction",
    "Guidance",
    "GuidedCalls",
    "GuidedMode",
    "RowGuide",
    "best_fitting",
    "call_bias_for",
    "closing_text",
    "content_words",
    "functions_of",
    "guided_format_names",
    "markup_formats",
    "tool_words",
    "ungrounded_reason",
]
