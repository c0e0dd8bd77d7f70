"""Our verdicts against BFCL's official AST checker, one to one, on BFCL's own data.

Needs ``bfcl-eval`` (installed with --no-deps by scripts/setup.sh); skipped with the reason when it
is absent. BFCL's checker module pulls every model handler in through its model-config module, so
that one module is replaced by a stub for the duration of these tests (it is only consulted for
dotted function names, to map "." to "_" for some API models; the stub says no mapping).

For every entry of the AST categories: the ground truth, rendered in every format, is valid for
both checkers; then systematic mistakes (wrong name, missing / extra parameter, wrong type, wrong
value, wrong count, swapped parallel order) get the same validity and error type from both,
except for the deliberate differences documented in scoring/__init__.py.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from scoring import Call
from scoring.category_rules import CATEGORY_RULES
from scoring.checking import check
from scoring.rendering import FORMATS, render

AST_CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
MODEL_NAME = "scoring-agreement-test"

Json = dict[str, Any]
BfclChecker = Callable[[list[Json], list[Json], list[Json], str], Json]


class _NoDotMapping:
    underscore_to_dot = False


class _AnyModel(dict[str, _NoDotMapping]):
    def __missing__(self, key: str) -> _NoDotMapping:
        return _NoDotMapping()


@pytest.fixture(scope="module")
def bfcl() -> Iterator[tuple[BfclChecker, Path]]:
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or spec.origin is None:
        pytest.skip("bfcl-eval is not installed (scripts/setup.sh installs bfcl-eval==2026.3.23 --no-deps)")
    data = Path(spec.origin).parent / "data"
    stub = types.ModuleType("bfcl_eval.constants.model_config")
    stub.MODEL_CONFIG_MAPPING = _AnyModel()  # type: ignore[attr-defined]
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "bfcl_eval.constants.model_config", stub)
        for name in [name for name in sys.modules if name.startswith("bfcl_eval.eval_checker")]:
            patch.delitem(sys.modules, name)
        checker = importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
        language = importlib.import_module("bfcl_eval.constants.enums").Language.PYTHON

        def run(functions: Any, output: Any, answer: Any, category: str) -> dict[str, Any]:
            return checker.ast_checker(functions, output, answer, language, category, MODEL_NAME)

        yield run, data
        for name in [name for name in sys.modules if name.startswith("bfcl_eval")]:
            patch.delitem(sys.modules, name, raising=False)


def _entries(data: Path, category: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    questions = [json.loads(line) for line in (data / f"BFCL_v4_{category}.json").open()]
    answers = {
        entry["id"]: entry["ground_truth"]
        for entry in map(json.loads, (data / "possible_answer" / f"BFCL_v4_{category}.json").open())
    }
    return [(question, answers[question["id"]]) for question in questions]


def _first_acceptable(params: dict[str, list[Any]], omit_optional: bool = False) -> dict[str, Any]:
    """One concrete value per parameter: the first acceptable one (dicts inside answers list
    acceptable values per key too); parameters that may only be omitted are left out, and so are
    all that may be omitted when ``omit_optional``."""
    chosen = {}
    for param, acceptable in params.items():
        if not isinstance(acceptable, list):
            chosen[param] = acceptable  # a plain dict inside a list value, not a list of options
            continue
        options = [item for item in acceptable if item != ""]
        if options and not (omit_optional and "" in acceptable):
            chosen[param] = _concrete(options[0])
    return chosen


def _concrete(value: Any) -> Any:
    if isinstance(value, dict):
        return _first_acceptable(value)
    if isinstance(value, list):
        return [_first_acceptable(item) if isinstance(item, dict) else item for item in value]
    return value


def _ground_truth(answer: list[dict[str, Any]], omit_optional: bool = False) -> list[Call]:
    calls = []
    for entry in answer:
        ((name, params),) = entry.items()
        calls.append(Call(name, _first_acceptable(params, omit_optional)))
    return calls


def _valid_ground_truths(
    run: BfclChecker, data: Path, category: str
) -> tuple[list[tuple[dict[str, Any], list[dict[str, Any]], list[Call]]], int]:
    """Entries with a concrete answer that BFCL's checker accepts, and how many have none (a few
    BFCL answers are unsatisfiable: an empty list of options, or a parameter the schema lacks)."""
    usable = []
    for question, answer in _entries(data, category):
        for omit_optional in (False, True):
            calls = _ground_truth(answer, omit_optional)
            if run(question["function"], _as_bfcl(calls), answer, category)["valid"]:
                usable.append((question, answer, calls))
                break
    return usable, len(_entries(data, category)) - len(usable)


def _as_bfcl(calls: list[Call]) -> list[dict[str, Any]]:
    return [{call.name: dict(call.arguments)} for call in calls]


def _wrong_type(value: Any) -> Any:
    if isinstance(value, bool):
        return "true"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return 12345
    if isinstance(value, list):
        return "not a list"
    if isinstance(value, dict):
        return ["not", "a", "dict"]
    return 1


def _wrong_value(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 7
    if isinstance(value, str):
        return value + " Zz"
    if isinstance(value, list):
        return [*value, value[0] if value else "extra"]
    if isinstance(value, dict):
        return {**value, "unexpected_key_zz": 1}
    return "changed"


def _replace(calls: list[Call], index: int, call: Call) -> list[Call]:
    return [call if i == index else other for i, other in enumerate(calls)]


def _mutations(calls: list[Call], functions: list[dict[str, Any]]) -> Iterator[tuple[str, list[Call]]]:
    schemas = {function["name"]: function for function in functions}
    first = calls[0]
    yield "wrong_name", _replace(calls, 0, Call(first.name + "_zz", first.arguments))
    yield "extra_param", _replace(calls, 0, Call(first.name, {**first.arguments, "zz_extra": 1}))
    yield "extra_call", [*calls, first]
    if len(calls) > 1:
        yield "missing_call", calls[:-1]
        yield "swapped_order", list(reversed(calls))
    for index, call in enumerate(calls[:2]):
        properties = schemas[call.name]["parameters"]["properties"]
        required = schemas[call.name]["parameters"].get("required", [])

        def changed(param: str, value: Any, call: Call = call, index: int = index) -> list[Call]:
            return _replace(calls, index, Call(call.name, {**call.arguments, param: value}))

        for param, value in list(call.arguments.items())[:3]:
            without = {k: v for k, v in call.arguments.items() if k != param}
            kind = "missing_required" if param in required else "missing_optional"
            yield kind, _replace(calls, index, Call(call.name, without))
            yield "wrong_type", changed(param, _wrong_type(value))
            yield "wrong_value", changed(param, _wrong_value(value))
            schema_type = properties.get(param, {}).get("type")
            if schema_type == "float" and isinstance(value, float) and value.is_integer():
                yield "int_for_float", changed(param, int(value))
            if schema_type == "integer" and isinstance(value, int):
                yield "bool_for_int", changed(param, True)
            if isinstance(value, list) and value and isinstance(value[0], float) and value[0].is_integer():
                as_ints = [int(v) if isinstance(v, float) else v for v in value]
                yield "int_in_float_list", changed(param, as_ints)


def _uses_any_type(functions: list[dict[str, Any]]) -> bool:
    return any(
        spec.get("type") == "any" or spec.get("items", {}).get("type") == "any"
        for function in functions
        for spec in function["parameters"]["properties"].values()
    )


def _deliberate(category: str, ours: Any, theirs: Json, functions: list[Json]) -> str | None:
    """The name of the documented difference that explains a disagreement, or None."""
    if "parallel" in category and ours.valid and theirs["error_type"].endswith("cannot_find_match"):
        return "optimal parallel matching"
    if _uses_any_type(functions):
        return "schema type any accepts any value"
    return None


def test_every_category_is_covered_by_our_registry() -> None:
    assert set(AST_CATEGORIES) <= set(CATEGORY_RULES)


@pytest.mark.parametrize("category", AST_CATEGORIES)
def test_ground_truth_is_valid_in_every_format(bfcl: tuple[BfclChecker, Path], category: str) -> None:
    run, data = bfcl
    not_rendered: Counter[str] = Counter()
    entries, unsatisfiable = _valid_ground_truths(run, data, category)
    assert unsatisfiable <= max(2, len(entries) // 50)
    for question, answer, calls in entries:
        for fmt in FORMATS:
            try:
                output = render(calls, fmt)
            except ValueError:
                not_rendered[fmt] += 1  # e.g. a parameter named like a python keyword, in python syntax
                continue
            verdict = check(output, question["function"], answer, category)
            assert verdict.valid, (question["id"], fmt, output, verdict)
    assert all(count <= len(entries) // 50 for count in not_rendered.values()), not_rendered


@pytest.mark.parametrize("category", AST_CATEGORIES)
def test_common_mistakes_get_bfcl_verdicts(bfcl: tuple[BfclChecker, Path], category: str) -> None:
    run, data = bfcl
    compared: Counter[str] = Counter()
    allowed: Counter[str] = Counter()
    disagreements = []
    for question, answer, truth in _valid_ground_truths(run, data, category)[0]:
        functions = question["function"]
        for mutation, calls in _mutations(truth, functions):
            theirs = run(functions, _as_bfcl(calls), answer, category)
            ours = check(calls, functions, answer, category)
            compared[mutation] += 1
            same = ours.valid == theirs["valid"] and (ours.valid or ours.error_type == theirs["error_type"])
            if same:
                continue
            reason = _deliberate(category, ours, theirs, functions)
            if reason is not None:
                allowed[reason] += 1
                continue
            disagreements.append((question["id"], mutation, calls, ours.error_type, theirs.get("error_type")))
    assert not disagreements, disagreements[:5]
    assert compared["wrong_name"] > 10 and compared["wrong_value"] > 10
    assert sum(allowed.values()) <= sum(compared.values()) // 100, allowed
