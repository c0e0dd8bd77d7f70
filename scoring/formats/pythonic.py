"""Pythonic: the BFCL / BitAgent form, a Python list of keyword calls ``[func(a=1), other(b="x")]``.

A template that shows no format of its own gets this one (the default of ``--model.format auto``).
"""

from __future__ import annotations

import json
from typing import Any

from scoring.formats.spec import Format, Prompting, functions_of
from scoring.formats.writing import python_call_list


def system_prompt(tools: list[dict[str, Any]]) -> str:
    listing = json.dumps(functions_of(tools), ensure_ascii=False)
    return (
        "You are an expert at calling functions. Given a question and the functions below, decide "
        "which calls answer it.\n"
        "Answer with the calls only, as a Python list of keyword calls: "
        "[func_name(param1=value1, param2=value2), other_func(param=value)]. "
        "Values are Python literals. Write no other text.\n"
        "If none of the functions fits, or the question lacks a required argument, say so in words "
        "instead of calling.\n"
        f"The functions, in JSON:\n{listing}"
    )


def forced_prefix(function_name: str | None) -> str:
    return "[" if function_name is None else f"[{function_name}("


FORMAT = Format(
    name="pythonic",
    render=python_call_list,
    writes='`[func(a=1), other(b="x")]`',
    families="BFCL prompt, BitAgent-8B, Llama 3.2",
    auto_when="`func_name1(` or `[func_name(`",
    fingerprints=(("func_name1(",), ("[func_name(",)),
    fingerprint_rank=120,
    prompting=Prompting(system_prompt=system_prompt, forced_prefix=forced_prefix, guided=True, call_bias=3.4),
)
