"""The native tool-call formats of open model families, read into :class:`Call` lists.

Each family writes its calls between special markers of its own (see docs/miner.md for the
table); each family's reader lives in its format's module (:mod:`scoring.formats`), and the
shared reading parts in :mod:`scoring.formats.reading`. This module is the decoder's view of
them: the readers and reading parts it calls by name (the markers that open a family's markup,
with their readers, are :data:`scoring.decoding.NATIVE_MARKERS`).

A reader finds its family's markers in the text, reads every complete call, and drops a call
cut off at the end of the text (a parallel answer that ran out of tokens keeps its complete
calls). Values that a family writes as text (Qwen3-Coder's XML parameters, GLM's
``<arg_value>``, DeepSeek's DSML ``string="false"`` parameters) are typed by the offered
function's schema when one is given (:func:`typed_value`), else read as JSON when they are
JSON and kept as text otherwise.

JSON inside markers is read with the JSON scanner from its first character, so a marker that
appears inside a string value (``"Use <tool_call> tags"``) is part of the value, never the end
of the call. Nothing is evaluated; every reader is linear in the text and bounded by the
decoder's :class:`Limits`.
"""

from __future__ import annotations

from scoring.formats.deepseek import CALL_BEGIN as DS_CALL_BEGIN
from scoring.formats.deepseek import CALLS_BEGIN as DS_CALLS_BEGIN
from scoring.formats.deepseek import read as read_deepseek
from scoring.formats.deepseek_dsml import DSML
from scoring.formats.deepseek_dsml import read as read_dsml
from scoring.formats.gemma4 import CALL as GEMMA_CALL
from scoring.formats.gemma4 import gemma_arguments
from scoring.formats.gemma4 import read as read_gemma
from scoring.formats.glm import glm_block_call, is_glm_block
from scoring.formats.harmony import harmony_final_text
from scoring.formats.harmony import read as read_harmony
from scoring.formats.kimi import CALL as KIMI_CALL
from scoring.formats.kimi import SECTION as KIMI_SECTION
from scoring.formats.kimi import read as read_kimi
from scoring.formats.llama3 import json_call_sequence
from scoring.formats.llama3 import read as read_llama3
from scoring.formats.llama4 import read as read_llama4
from scoring.formats.mistral import read as read_mistral
from scoring.formats.qwen3_coder import xml_block_calls
from scoring.formats.reading import (
    NO_SCHEMAS,
    NativeReader,
    Reading,
    Schemas,
    drop_reasoning,
    json_objects,
    json_value_at,
    schemas_of,
    typed_value,
)

__all__ = [
    "DSML",
    "DS_CALLS_BEGIN",
    "DS_CALL_BEGIN",
    "GEMMA_CALL",
    "KIMI_CALL",
    "KIMI_SECTION",
    "NO_SCHEMAS",
    "NativeReader",
    "Reading",
    "Schemas",
    "drop_reasoning",
    "gemma_arguments",
    "glm_block_call",
    "harmony_final_text",
    "is_glm_block",
    "json_call_sequence",
    "json_objects",
    "json_value_at",
    "read_deepseek",
    "read_dsml",
    "read_gemma",
    "read_harmony",
    "read_kimi",
    "read_llama3",
    "read_llama4",
    "read_mistral",
    "schemas_of",
    "typed_value",
    "xml_block_calls",
]
