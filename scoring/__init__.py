"""Scoring: parse a model's output into function calls and judge them the way BFCL does.

Public API::

    from scoring import Call, Verdict, DecodeError, Limits     # the values (this package, light)
    from scoring.decoding import decode
    from scoring.checking import check
    from scoring.rendering import render, to_openai_tool_calls
    calls = decode(output)    # text in any supported format | OpenAI tool_calls | assistant message
    verdict = check(output, functions, possible_answer, category)
    verdict.valid, verdict.error_type, verdict.score, verdict.components

``import scoring`` loads only the value types and the schema tables (:mod:`scoring.model`,
:mod:`scoring.schema`): a layer above that reads a tool's function or a schema type imports them
at the top of its module without loading the decoder and the checker, which it imports from their
modules where it decodes or judges.

``decode`` reads the native tool-call markup of every major open model family too (Qwen3 /
Hermes, Qwen3-Coder XML, Llama 3 and 4, Mistral, DeepSeek V3-V4 and DSML, Kimi K2, GLM-4.5+,
gpt-oss Harmony, Gemma 4; :mod:`scoring.native`), drops reasoning (``<think>``, ``[THINK]``,
Harmony's analysis channel) first, and keeps the complete calls of an answer cut off in its
last call. ``decode(output, tools=functions)`` types the values that some families write as text
by the offered schema (``check`` passes its functions). ``decode`` never executes anything from
the output and bounds its work (:class:`Limits`: 64 KiB,
nesting depth 32, 64 calls, 1,024 syntax items by default); whatever it cannot read is a
:class:`DecodeError`. ``check`` gives BFCL v4's AST-checker verdict and error type
(``simple_function_checker:wrong_func_name``, ``type_error:simple``, ...; see docs/scoring.md).

Partial credit
--------------
``verdict.components`` holds five numbers in [0, 1]:

* ``format``: the output decodes (1) or not (0);
* ``schema``: the share of output calls that fit the schema of the function they name (known name,
  required parameters present, no unknown parameters, values of the schema's types; a call that
  the checker accepts for an expected call fits);
* ``tool``: the share of calls with the right function name;
* ``args``: the argument credit: for each output call paired with an expected call of the same
  name, the share of its values that are right: every parameter it gives counts (right when its
  value is acceptable, wrong when not or when the expected call has no such parameter), and every
  parameter the answer must state but the call leaves out counts wrong; an optional parameter left
  out counts neither way;
* ``calls``: the share of calls the checker accepts for an expected call (whole calls right).

Shares are over n = max(#output calls, #expected calls), so extra and missing calls both cost.
Output and expected calls are paired greedily: exact matches first, then the best remaining pair.

``score`` is 1.0 for a valid verdict (and then every component is 1.0). For an invalid verdict on
a category that expects calls::

    score = 0.5 * calls     # always < 0.5

Only whole calls earn: a call with one wrong value does the wrong thing, so a single-call answer
with a wrong value scores 0, and a parallel answer earns for the calls it got entirely right. An answer's
form, its fit to the schema, its function names and its share of right values are reported but
earn nothing by themselves (an empty call list, the right function with junk of the right types,
or a call with most values right and one wrong: a keyword program that matches values by type
gets most of them, and must not earn for it). Any valid answer outscores any invalid one, and an
output that does not decode scores 0.
Irrelevance, missing_param and relevance are binary: 1.0 or 0.0. A timeout or transport error is
not an output: the caller scores it 0 without calling ``check``.

Where we differ from BFCL's checker, on purpose
------------------------------------------------
* Parallel matching is an optimal (perfect) matching, not greedy first fit.
* Schema type ``number`` is a float; ``object`` is a dict; a schema without ``required`` has no
  required parameters; a parameter without a (known) type, and type ``any``, accept any value,
  compared as BFCL compares a value of that value's type (BFCL maps ``any`` to ``str``).
* Nothing is evaluated: arithmetic is folded on numeric literals only and within bounds (BFCL
  evals binary operations and lambdas); tuples and sets are read as lists; attribute values,
  lambdas and other non-literals are decode errors.
* More formats decode (JSON, Hermes, CodeAct, fences, OpenAI tool calls) than BFCL's prompt
  decoder reads; for BFCL's own python-call list the calls are the same.
"""

from __future__ import annotations

from scoring.model import DEFAULT_LIMITS, Call, DecodeError, Limits, Verdict
from scoring.schema import SCHEMA_TYPES, function_of

__all__ = [
    "DEFAULT_LIMITS",
    "SCHEMA_TYPES",
    "Call",
    "DecodeError",
    "Limits",
    "Verdict",
    "function_of",
]
