"""Benchmark of the scorer: decode+check throughput and the worst case on adversarial inputs.

    .venv/bin/python bench/decode_check.py [--outputs 4000] [--repeat 5]

Throughput: one process, one core, over a deterministic mixed corpus (every output format,
categories simple / multiple / parallel / parallel_multiple / irrelevance, valid answers and the
common mistakes). Worst case: inputs built to be expensive, at the 64 KiB size cap, each timed
several times; the slowest run counts. Targets (issue 2): >= 30,000 outputs/s, worst case < 5 ms.

The corpus repeats a few schemas and answers; in production every output has its own task variant.
The scorer keeps nothing from one check to the next (no cache keyed on a task, an answer or an
output), so each timed check does all of its work, reading of the task included.
"""

from __future__ import annotations

import ast
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scoring import Call
from scoring.checking import check
from scoring.rendering import FORMATS, NATIVE_FORMATS, render
from subnet.cli import OneLineParser, user_errors
from subnet.config import int_arg

_WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "dict",
        "properties": {
            "city": {"type": "string", "description": "City and country"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
        },
        "required": ["city"],
    },
}
_HYPOT = {
    "name": "math.hypot",
    "description": "Euclidean norm.",
    "parameters": {
        "type": "dict",
        "properties": {"x": {"type": "float"}, "y": {"type": "float"}, "z": {"type": "float"}},
        "required": ["x", "y"],
    },
}
_BOOK = {
    "name": "book_flight",
    "description": "Book a flight.",
    "parameters": {
        "type": "object",
        "properties": {
            "origin": {"type": "string"},
            "destination": {"type": "string"},
            "passengers": {"type": "array", "items": {"type": "string"}},
            "options": {
                "type": "dict",
                "properties": {"seat": {"type": "string"}, "bags": {"type": "integer"}},
            },
            "refundable": {"type": "boolean"},
        },
        "required": ["origin", "destination", "passengers"],
    },
}
_SEARCH = {
    "name": "search_web",
    "description": "Search the web.",
    "parameters": {
        "type": "dict",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"],
    },
}
_CITIES = ["Paris, France", "San Francisco, CA", "Tokyo", "Lagos", "São Paulo", "Zürich"]
_NAMES = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra"]


@dataclass(frozen=True)
class _Task:
    category: str
    functions: list[dict[str, Any]]
    answer: list[dict[str, Any]]
    truth: list[Call]


def _weather(rng: random.Random) -> tuple[Call, dict[str, Any]]:
    city, days = rng.choice(_CITIES), rng.randint(1, 9)
    return Call("get_weather", {"city": city, "unit": "celsius", "days": days}), {
        "get_weather": {"city": [city, city.split(",")[0]], "unit": ["", "celsius"], "days": [days]}
    }


def _hypot(rng: random.Random) -> tuple[Call, dict[str, Any]]:
    x, y = float(rng.randint(1, 50)), round(rng.uniform(0, 9), 2)
    return Call("math.hypot", {"x": x, "y": y}), {"math.hypot": {"x": [x], "y": [y], "z": ["", 0.0]}}


def _book(rng: random.Random) -> tuple[Call, dict[str, Any]]:
    people = rng.sample(_NAMES, rng.randint(1, 3))
    bags = rng.randint(0, 3)
    call = Call(
        "book_flight",
        {
            "origin": "SFO",
            "destination": "NRT",
            "passengers": people,
            "options": {"seat": "aisle", "bags": bags},
        },
    )
    return call, {
        "book_flight": {
            "origin": ["SFO"],
            "destination": ["NRT", "Tokyo Narita"],
            "passengers": [people],
            "options": [{"seat": ["aisle"], "bags": [bags]}],
            "refundable": ["", False],
        }
    }


def _search(rng: random.Random) -> tuple[Call, dict[str, Any]]:
    query = rng.choice(["best ramen in tokyo", "python 3.11 release notes", "weather radar"])
    return Call("search_web", {"query": query, "limit": 5}), {
        "search_web": {"query": [query], "limit": [5, ""]}
    }


_MAKERS = {"get_weather": _weather, "math.hypot": _hypot, "book_flight": _book, "search_web": _search}
_SCHEMAS = {"get_weather": _WEATHER, "math.hypot": _HYPOT, "book_flight": _BOOK, "search_web": _SEARCH}


def _task(rng: random.Random, category: str) -> _Task:
    names = list(_MAKERS)
    if category == "irrelevance":
        return _Task(category, [_SCHEMAS[rng.choice(names)]], [], [])
    count = rng.randint(2, 3) if category.startswith("parallel") else 1
    chosen = (
        [rng.choice(names) for _ in range(count)]
        if category == "parallel_multiple"
        else [rng.choice(names)] * count
    )
    made = [_MAKERS[name](rng) for name in chosen]
    functions = [_SCHEMAS[name] for name in dict.fromkeys(chosen)]
    if category in ("multiple", "parallel_multiple"):
        functions += [_SCHEMAS[name] for name in names if name not in chosen][:2]
    return _Task(category, functions, [answer for _, answer in made], [call for call, _ in made])


def _mistakes(truth: list[Call], rng: random.Random) -> list[list[Call] | str]:
    first = truth[0]
    key = rng.choice(list(first.arguments))
    return [
        [Call(first.name + "_v2", first.arguments), *truth[1:]],
        [Call(first.name, {k: v for k, v in first.arguments.items() if k != key}), *truth[1:]],
        [Call(first.name, {**first.arguments, "verbose": True}), *truth[1:]],
        [Call(first.name, {**first.arguments, key: 12345}), *truth[1:]],
        [*truth, first],
        "I'm sorry, I can't do that without more details.",
    ]


def corpus(size: int, seed: int = 2) -> list[tuple[Any, _Task]]:
    """At least ``size`` (output, task) pairs: every format, every category, valid and mistaken."""
    rng = random.Random(seed)
    categories = ["simple", "multiple", "parallel", "parallel_multiple", "irrelevance"]
    items: list[tuple[Any, _Task]] = []
    while len(items) < size:
        task = _task(rng, rng.choice(categories))
        if task.category == "irrelevance":
            refusal = "None of the available functions can answer that."
            items += [
                (refusal, task),
                (render([Call("search_web", {"query": "x"})], rng.choice(FORMATS)), task),
            ]
            continue
        for fmt in FORMATS:
            items.append((render(task.truth, fmt), task))
        for mistake in _mistakes(task.truth, rng):
            items.append(
                (mistake if isinstance(mistake, str) else render(mistake, rng.choice(FORMATS)), task)
            )
    return items


def throughput(items: list[tuple[Any, _Task]], repeat: int) -> dict[str, float]:
    """Outputs per second over ``repeat`` passes: best and median by wall clock, and by this
    process's CPU time (which other processes sharing the core do not inflate)."""
    wall, cpu = [], []
    for _ in range(repeat):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        for output, task in items:
            check(output, task.functions, task.answer, task.category)
        wall.append(len(items) / (time.perf_counter() - start_wall))
        cpu.append(len(items) / (time.process_time() - start_cpu))
    return {
        "wall best": max(wall),
        "wall median": statistics.median(wall),
        "cpu best": max(cpu),
        "cpu median": statistics.median(cpu),
    }


def family_rates(repeat: int, per_family: int = 600, seed: int = 3) -> dict[str, float]:
    """decode+check per CPU second for each model family's native format (and Hermes), over the
    same valid answers rendered in each: what a miner hosting that family costs the validator."""
    rng = random.Random(seed)
    categories = ["simple", "multiple", "parallel", "parallel_multiple"]
    tasks = [_task(rng, rng.choice(categories)) for _ in range(per_family)]
    rates = {}
    for fmt in ("hermes", *NATIVE_FORMATS):
        items = [(render(task.truth, fmt), task) for task in tasks]
        for output, task in items[:20]:  # the renderings are right, as the tests say
            assert check(output, task.functions, task.answer, task.category).valid, (fmt, output)

        def run(items: list[tuple[Any, _Task]] = items) -> None:
            for output, task in items:
                check(output, task.functions, task.answer, task.category)

        rates[fmt] = rate_of(len(items), run, repeat)
    return rates


def reference_loop_us(repeat: int = 200) -> float:
    """CPU microseconds of a fixed pure-Python loop (``sum(range(1000))``), to compare machines:
    an idle recent x86 core takes about 8 us."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(20):
            sum(range(1000))
        best = min(best, (time.process_time() - start) / 20)
    return best * 1e6


def bfcl_comparison(items: list[tuple[Any, _Task]], repeat: int) -> str | None:
    """BFCL's own AST checker on the same corpus, pre-decoded (its prompt decoder pulls in
    tree-sitter and vendor SDKs), next to ours on the same pre-decoded calls; None without
    bfcl-eval. Its model-config module (every vendor SDK) is replaced by a stub, as in the tests."""
    import importlib
    import importlib.util
    import types

    from scoring import DecodeError
    from scoring.decoding import decode

    if importlib.util.find_spec("bfcl_eval") is None:
        return None

    class _NoDots:
        underscore_to_dot = False

    class _AnyModel(dict[str, _NoDots]):
        def __missing__(self, key: str) -> _NoDots:
            return _NoDots()

    stub = types.ModuleType("bfcl_eval.constants.model_config")
    stub.MODEL_CONFIG_MAPPING = _AnyModel()  # type: ignore[attr-defined]
    sys.modules.setdefault("bfcl_eval.constants.model_config", stub)
    ast_checker = importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker").ast_checker
    python = importlib.import_module("bfcl_eval.constants.enums").Language.PYTHON
    decoded = []
    for output, task in items:
        if task.category == "irrelevance":
            continue
        try:
            calls = decode(output)
        except DecodeError:
            continue
        decoded.append((calls, [{call.name: dict(call.arguments)} for call in calls], task))

    def rate(run: Callable[[], object]) -> float:
        best = 0.0
        for _ in range(repeat):
            start = time.process_time()
            run()
            best = max(best, len(decoded) / (time.process_time() - start))
        return best

    theirs = rate(
        lambda: [ast_checker(t.functions, d, t.answer, python, t.category, "m") for _, d, t in decoded]
    )
    ours = rate(lambda: [check(c, t.functions, t.answer, t.category) for c, _, t in decoded])
    # BFCL's own format, the python-call list: the core of its decoder is ast.parse, timed with its checker.
    pythonic = [(str(render(calls, "pythonic")), d, t) for calls, d, t in decoded if calls]

    def bfcl_like() -> None:
        for output, d, t in pythonic:
            ast.parse(output)
            ast_checker(t.functions, d, t.answer, python, t.category, "m")

    def ours_pythonic() -> None:
        for output, _, t in pythonic:
            check(output, t.functions, t.answer, t.category)

    theirs_pythonic = rate_of(len(pythonic), bfcl_like, repeat)
    ours_on_pythonic = rate_of(len(pythonic), ours_pythonic, repeat)
    return (
        f"check only, on the {len(decoded)} decodable outputs of call categories, by CPU time: "
        f"BFCL's ast_checker {theirs:,.0f}/s, ours {ours:,.0f}/s (ours also computes partial credit)\n"
        "the same as python-call lists, decode+check: ast.parse + BFCL's ast_checker "
        f"{theirs_pythonic:,.0f}/s (a lower bound for BFCL: its decoder does more than ast.parse), "
        f"ours {ours_on_pythonic:,.0f}/s"
    )


def rate_of(count: int, run: Callable[[], object], repeat: int) -> float:
    """Best ``count`` per CPU second over ``repeat`` runs of ``run``."""
    best = 0.0
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = max(best, count / (time.process_time() - start))
    return best


def adversarial(cap: int = 64 * 1024) -> dict[str, str]:
    """Inputs meant to be slow: at (or just under) the size cap, or just under the syntax-item cap."""
    call = 'get_weather(city="San Francisco, CA", unit="celsius", days=3), '
    json_call = json.dumps({"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}) + ", "
    hermes = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>\n'

    def fill(head: str, unit: str, tail: str) -> str:
        return head + unit * ((cap - len(head) - len(tail)) // len(unit)) + tail

    def fill_bytes(head: str, unit: str) -> str:
        return head + unit * ((cap - len(head.encode())) // len(unit.encode()))

    return {
        "deep brackets": fill("[f(a=", "[", ""),
        "balanced deep brackets": "[f(a=" + "[" * 30000 + "]" * 30000 + ")]",
        "long + chain": fill("[f(a=", "1+", "1)]"),
        "unary minus chain": fill("[f(a=", "-", "1)]"),
        "attribute chain": fill("[", "a.", "b(x=1)]"),
        "many small ints": fill("[f(a=[", "1,", "1])]"),
        "many calls (python)": fill("[", call, "]"),
        "many calls (json)": fill("[", json_call, "{}]"),
        "many hermes blocks": fill("", hermes, ""),
        "huge string": fill('[f(a="', "x", '")]'),
        "escaped quotes, unterminated": fill("'", "\\'", ""),
        "many quotes": fill("", "'", ""),
        "implicit string concatenation": fill("[f(a=", "'a' ", "'b')]"),
        "power tower": fill("[f(a=", "9**", "9)]"),
        "10**10**10": "[f(a=10**10**10)]",
        "big int literal": "[f(a=" + "9" * 4000 + ")]",
        "deep json": fill("", "[", ""),
        "deep json balanced": "[" * 30000 + "]" * 30000,
        "prose": fill("", "I cannot help with that, sorry. ", ""),
        "fences": fill("", "```python\nf(a=1)\n```\n", ""),
        "unclosed fences": fill("", "```", ""),
        "nested calls": fill("[f(a=", "g(", ""),
        "dict keys": fill("[f(a={", "1:2,", "})]"),
        "python list at the item cap": "[f(a=[" + "1," * 1000 + "1])]",
        "python list at the item cap, trailing comma": "[f(a=[" + "1," * 1000 + "1],)]",
        "bare names, 1 KiB": "f(a=1) " + "x " * 509,
        "json list at the item cap": '{"name": "f", "arguments": {"a": [' + "1," * 1000 + "1]}}",
        "strings at the item cap": "[f(a=[" + "'abcdefghijklmnopqrstuvwxyz0123'," * 500 + "'x'])]",
        "many kimi calls": fill("<|tool_calls_section_begin|>", _native_unit("kimi"), ""),
        "many kimi k3 calls": fill("<|open|>tools<|sep|>", _native_unit("kimi_k3"), ""),
        "kimi k3 arguments, unclosed": fill('<|open|>call tool="f"<|sep|>', _K3_ARGUMENT, ""),
        "kimi reasoning tags in values": fill(_KIMI_SECTION, "</think><|tool_call_begin|>", ""),
        # DSML's marker is 3 bytes a character: these fill the byte cap, not 64 Ki characters.
        "many deepseek v4.1 dsml calls": fill_bytes("", _native_unit("deepseek_dsml_v41")),
        "dsml v4.1 parameters, unclosed": fill_bytes('<｜DSML｜ invoke name="f">', _DSML_PARAMETER),
        "dsml self-closing invokes": fill_bytes("", '<｜DSML｜invoke name="f"/>'),
        "many deepseek calls": fill("", _native_unit("deepseek"), ""),
        "many qwen3-coder calls": fill("", _native_unit("qwen3_coder"), ""),
        "many glm calls": fill("", _native_unit("glm"), ""),
        "many harmony messages": fill("", _native_unit("harmony"), ""),
        "many gemma calls": fill("", _native_unit("gemma4"), ""),
        "gemma quotes, unterminated": fill("<|tool_call>call:f{a:", '<|"|>x', ""),
        "mistral calls, cut off": fill("", '[TOOL_CALLS]f[ARGS]{"a": 1}', "[TOOL_CALLS]f[ARGS]{"),
        "think tags": fill("", "<think></think>", "[f(a=[1])]"),
        "openai arguments": json.dumps(
            [{"type": "function", "function": {"name": "f", "arguments": fill('{"a": [', "1,", "1]}")}}]
        ),
    }


_K3_ARGUMENT = '<|open|>argument key="a"<|sep|>1'
_KIMI_SECTION = "<|tool_calls_section_begin|>"
_DSML_PARAMETER = '<｜DSML｜ parameter name="a">'


def _native_unit(fmt: str) -> str:
    return str(render([Call("f", {"a": [1, 2, 3]})], fmt))


def worst_case(inputs: dict[str, str], runs: int) -> list[tuple[str, float, float, str]]:
    """(name, median ms, slowest ms, verdict's error type) per input over ``runs`` timings, CPU
    time, slowest median first."""
    integers = {"type": "array", "items": {"type": "integer"}}
    functions = [{"name": "f", "parameters": {"type": "dict", "properties": {"a": integers}}}]
    answer = [{"f": {"a": [[1, 2, 3]]}}]
    results = []
    for name, text in inputs.items():
        timings = []
        error_type = None
        for _ in range(runs):
            start = time.process_time()
            error_type = check(text, functions, answer, "simple").error_type
            timings.append(time.process_time() - start)
        results.append((name, statistics.median(timings) * 1000, max(timings) * 1000, str(error_type)))
    return sorted(results, key=lambda row: -row[1])


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int_arg(1), default=4000, help="corpus size (at least 2,000)")
    parser.add_argument("--repeat", type=int_arg(1), default=5, help="passes over the corpus")
    parser.add_argument("--runs", type=int_arg(1), default=20, help="timings per adversarial input")
    with user_errors(parser.prog):
        args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    items = corpus(max(args.outputs, 2000))
    formats = {type(output).__name__ for output, _ in items}
    categories = sorted({task.category for _, task in items})
    check(*[items[0][0], items[0][1].functions, items[0][1].answer, items[0][1].category])  # warm up
    rates = throughput(items, args.repeat)
    print(f"corpus: {len(items)} outputs, formats {', '.join(FORMATS)} (python types {sorted(formats)}),")
    print(f"        categories {', '.join(categories)}")
    print(
        "throughput, decode+check on one core (target >= 30,000/s):\n"
        f"  by CPU time:   best {rates['cpu best']:,.0f}/s, median {rates['cpu median']:,.0f}/s\n"
        f"  by wall clock: best {rates['wall best']:,.0f}/s, median {rates['wall median']:,.0f}/s"
    )
    print(f"reference loop sum(range(1000)): {reference_loop_us():.1f} us CPU (about 8 us on an idle core)")
    comparison = bfcl_comparison(items, args.repeat)
    if comparison:
        print(comparison)
    families = family_rates(args.repeat)
    print("decode+check per model family's native format, valid answers, best CPU rate:")
    print("  " + ", ".join(f"{fmt} {rate:,.0f}/s" for fmt, rate in families.items()))
    rows = worst_case(adversarial(), args.runs)
    print(f"adversarial inputs at the 64 KiB cap, CPU time over {args.runs} runs each (target < 5 ms):")
    print("   median     max  input" + " " * 39 + "-> error type")
    for name, median_ms, max_ms, error_type in rows:
        print(f"  {median_ms:7.3f} {max_ms:7.3f}  {name:43s} -> {error_type}")
    print(f"worst case (slowest median): {rows[0][1]:.3f} ms ({rows[0][0]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
