"""check(): one test per rule of docs/scoring.md (BFCL's AST checker semantics), then partial credit."""

from __future__ import annotations

from typing import Any

import pytest

from scoring import Call, Verdict
from scoring.category_rules import CATEGORY_RULES, CategoryRule
from scoring.checking import check
from scoring.credit import partial_credit
from scoring.rendering import render
from scoring.schema import function_of
from scoring.value_check import standardize

PARAMS: dict[str, Any] = {
    "type": "dict",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "ratio": {"type": "float"},
        "metric": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "weights": {"type": "array", "items": {"type": "float"}},
        "point": {"type": "tuple", "items": {"type": "integer"}},
        "options": {"type": "dict", "properties": {"lang": {"type": "string"}, "n": {"type": "integer"}}},
        "rows": {"type": "array", "items": {"type": "dict"}},
        "extra": {"type": "any"},
    },
    "required": ["city"],
}
FUNCTIONS = [{"name": "f", "description": "test", "parameters": PARAMS}]


def verdict(arguments: dict[str, Any], expected: dict[str, Any], name: str = "f") -> Verdict:
    return check([Call(name, arguments)], FUNCTIONS, [{"f": expected}], "simple")


def error_of(arguments: dict[str, Any], expected: dict[str, Any], name: str = "f") -> str | None:
    return verdict(arguments, expected, name).error_type


# ---- inputs ---------------------------------------------------------------------------------------


def test_openai_schemas_and_wrapper_are_accepted() -> None:
    openai = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}, "o": {"type": "object"}},
                    "required": ["x"],
                },
            },
        }
    ]
    assert check("[f(x=1.5, o={'a': 1})]", openai, [{"f": {"x": [1.5], "o": [{"a": [1]}]}}], "simple").valid
    assert check("[f(x=2)]", openai, [{"f": {"x": [2.0], "o": [""]}}], "simple").valid  # number is a float
    assert check("[f(x='2')]", openai, [{"f": {"x": [2.0]}}], "simple").error_type == "type_error:simple"


def test_every_category_named_in_the_issue_is_known() -> None:
    names = (
        "simple multiple parallel parallel_multiple irrelevance live_simple live_multiple live_parallel "
        "live_parallel_multiple live_irrelevance live_relevance missing_param"
    )
    assert set(names.split()) <= set(CATEGORY_RULES)


def test_every_task_category_names_a_scoring_rule() -> None:
    """The generator's categories (tasks.categories) each name the rule that judges them; the
    scorer's table is keyed by those names (and BFCL's), not by the task categories."""
    from tasks.categories import CATEGORIES as TASK_CATEGORIES

    for entry in TASK_CATEGORIES.values():
        assert entry.scoring_category in CATEGORY_RULES, entry.name
    assert all(isinstance(rule, CategoryRule) for rule in CATEGORY_RULES.values())


def test_the_package_holds_the_values_and_the_modules_the_scorer() -> None:
    import scoring
    import scoring.checking as checking

    # The scorer's table has one name: CATEGORIES is the tasks' registry (tasks.categories).
    assert not hasattr(checking, "CATEGORIES")
    assert checking.partial_credit is partial_credit and checking.standardize is standardize
    # The package is light (its value types only): the scorer's functions live in their modules.
    assert not hasattr(scoring, "check") and not hasattr(scoring, "CATEGORY_RULES")
    assert scoring.Call is Call and scoring.function_of is function_of


def test_one_schema_type_table_and_tool_unwrapping() -> None:
    from scoring import SCHEMA_TYPES, function_of

    assert SCHEMA_TYPES["object"] is SCHEMA_TYPES["dict"] is dict
    assert SCHEMA_TYPES["number"] is SCHEMA_TYPES["float"] is float
    assert SCHEMA_TYPES["any"] is None
    bare = {"name": "f", "parameters": {"type": "object", "properties": {}}}
    assert function_of({"type": "function", "function": bare}) is bare
    assert function_of(bare) is bare
    assert function_of("not a tool") == "not a tool"


def test_malformed_tasks_raise_value_error() -> None:
    with pytest.raises(ValueError, match="unknown category"):
        check("[f(city='x')]", FUNCTIONS, [{"f": {"city": ["x"]}}], "nonsense")
    with pytest.raises(ValueError, match="needs a non-empty possible answer"):
        check("[f(city='x')]", FUNCTIONS, [], "simple")
    with pytest.raises(ValueError, match="not among the functions"):
        check("[g(city='x')]", FUNCTIONS, [{"g": {"city": ["x"]}}], "simple")
    with pytest.raises(ValueError):
        check("[f(city='x')]", "not a list", [{"f": {"city": ["x"]}}], "simple")
    with pytest.raises(ValueError):
        check("[f(city='x')]", FUNCTIONS, [{"f": {"city": "x"}}], "simple")


# ---- checking one call, rules 1 to 6 in order -------------------------------------------------------


def test_rule_1_function_name_must_match_exactly() -> None:
    assert error_of({"city": "x"}, {"city": ["x"]}, name="F") == "simple_function_checker:wrong_func_name"
    assert error_of({"city": "x"}, {"city": ["x"]}, name="f_") == "simple_function_checker:wrong_func_name"


def test_rule_2_required_parameters_must_be_present() -> None:
    assert error_of({"days": 1}, {"city": ["x"], "days": [1]}) == "simple_function_checker:missing_required"


def test_rule_3_parameters_must_exist_in_schema_and_answer() -> None:
    assert error_of({"city": "x", "zzz": 1}, {"city": ["x"]}) == "simple_function_checker:unexpected_param"
    # in the schema but not in the expected answer: also unexpected
    assert error_of({"city": "x", "days": 1}, {"city": ["x"]}) == "simple_function_checker:unexpected_param"


def test_rule_4_types_follow_the_schema() -> None:
    assert error_of({"city": 5}, {"city": ["5"]}) == "type_error:simple"
    assert error_of({"city": "x", "days": 1.0}, {"city": ["x"], "days": [1]}) == "type_error:simple"
    assert (
        error_of({"city": "x", "days": True}, {"city": ["x"], "days": [1]}) == "type_error:simple"
    )  # bool≠int
    assert error_of({"city": "x", "metric": 1}, {"city": ["x"], "metric": [True]}) == "type_error:simple"
    assert error_of({"city": "x", "tags": "a"}, {"city": ["x"], "tags": [["a"]]}) == "type_error:simple"
    assert error_of({"city": "x", "options": "a"}, {"city": ["x"], "options": [{"lang": ["a"]}]}) == (
        "type_error:simple"
    )


def test_rule_4_int_is_a_float_at_the_top_level_only() -> None:
    assert verdict({"city": "x", "ratio": 2}, {"city": ["x"], "ratio": [2.0]}).valid
    assert error_of({"city": "x", "weights": [1, 2]}, {"city": ["x"], "weights": [[1.0, 2.0]]}) == (
        "type_error:nested"
    )
    assert verdict({"city": "x", "weights": [1.0, 2.5]}, {"city": ["x"], "weights": [[1.0, 2.5]]}).valid


def test_rule_4_element_types_are_checked_one_level_deep() -> None:
    assert (
        error_of({"city": "x", "tags": ["a", 1]}, {"city": ["x"], "tags": [["a", "b"]]})
        == "type_error:nested"
    )
    assert verdict({"city": "x", "point": [1, 2]}, {"city": ["x"], "point": [[1, 2]]}).valid  # tuple -> list


def test_rule_4_any_accepts_any_type() -> None:
    assert verdict({"city": "x", "extra": 5}, {"city": ["x"], "extra": [5]}).valid
    assert verdict({"city": "x", "extra": "Some Thing"}, {"city": ["x"], "extra": ["some thing"]}).valid


def test_rule_4_an_answer_of_another_type_than_the_schema_is_compared_exactly() -> None:
    # BFCL's "variable" case: the schema says integer, the possible answer is a string.
    assert verdict({"city": "x", "days": "n_days"}, {"city": ["x"], "days": ["n_days"]}).valid
    assert (
        error_of({"city": "x", "days": "N_days"}, {"city": ["x"], "days": ["n_days"]}) == "value_error:others"
    )
    assert verdict({"city": "x", "days": 3}, {"city": ["x"], "days": ["n_days", 3]}).valid


def test_rule_5_strings_are_normalised() -> None:
    assert standardize("San Francisco, CA.") == "sanfranciscoca"
    assert standardize("It's") == 'it"s'
    assert verdict({"city": "new-york_city/NY*^."}, {"city": ["New York City NY"]}).valid
    assert verdict({"city": "It's"}, {"city": ['it"s']}).valid
    assert error_of({"city": "Boston"}, {"city": ["New York"]}) == "value_error:string"


def test_rule_5_lists_are_compared_in_order_with_normalised_strings() -> None:
    assert verdict({"city": "x", "tags": ["A b", "c-d"]}, {"city": ["x"], "tags": [["ab", "cd"]]}).valid
    assert error_of({"city": "x", "tags": ["cd", "ab"]}, {"city": ["x"], "tags": [["ab", "cd"]]}) == (
        "value_error:list/tuple"
    )
    assert (
        error_of({"city": "x", "tags": ["ab"]}, {"city": ["x"], "tags": [["ab", "cd"]]})
        == "value_error:list/tuple"
    )


def test_rule_5_dicts_have_no_extra_keys_and_miss_only_optional_ones() -> None:
    expected = {"city": ["x"], "options": [{"lang": ["en", "EN-US"], "n": ["", 1]}]}
    assert verdict({"city": "x", "options": {"lang": "en-us"}}, expected).valid
    assert verdict({"city": "x", "options": {"lang": "en", "n": 1}}, expected).valid
    assert error_of({"city": "x", "options": {"lang": "en", "z": 1}}, expected) == "value_error:dict_key"
    assert error_of({"city": "x", "options": {"n": 1}}, expected) == "value_error:dict_key"
    assert error_of({"city": "x", "options": {"lang": "fr"}}, expected) == "value_error:dict_value"


def test_rule_5_lists_of_dicts_are_compared_element_by_element() -> None:
    expected = {"city": ["x"], "rows": [[{"a": [1]}, {"a": [2]}]]}
    assert verdict({"city": "x", "rows": [{"a": 1}, {"a": 2}]}, expected).valid
    assert error_of({"city": "x", "rows": [{"a": 1}]}, expected) == "value_error:list_dict_count"
    assert error_of({"city": "x", "rows": [{"a": 2}, {"a": 1}]}, expected) == "value_error:dict_value"


def test_rule_5_numbers_compare_by_value() -> None:
    assert verdict({"city": "x", "ratio": 5}, {"city": ["x"], "ratio": [5.0]}).valid
    assert verdict({"city": "x", "ratio": 5.0}, {"city": ["x"], "ratio": [5]}).valid
    assert error_of({"city": "x", "days": 4}, {"city": ["x"], "days": [5]}) == "value_error:others"
    assert error_of({"city": "x", "metric": False}, {"city": ["x"], "metric": [True]}) == "value_error:others"


def test_rule_6_missing_parameters_must_be_optional() -> None:
    assert verdict({"city": "x"}, {"city": ["x"], "days": ["", 3]}).valid
    assert error_of({"city": "x"}, {"city": ["x"], "days": [3]}) == "simple_function_checker:missing_optional"


def test_the_first_failing_rule_decides_the_error_type() -> None:
    # wrong name beats everything; a missing required parameter beats a wrong type
    assert (
        error_of({"days": "x"}, {"city": ["x"], "days": [1]}, name="g")
        == "simple_function_checker:wrong_func_name"
    )
    assert error_of({"days": "x"}, {"city": ["x"], "days": [1]}) == "simple_function_checker:missing_required"
    # parameters are checked in the output's order
    assert error_of({"city": 1, "zzz": 2}, {"city": ["1"]}) == "type_error:simple"
    assert error_of({"zzz": 2, "city": 1}, {"city": ["1"]}) == "simple_function_checker:unexpected_param"


def test_schema_without_required_has_no_required_parameters() -> None:
    functions = [{"name": "g", "parameters": {"type": "dict", "properties": {"a": {"type": "integer"}}}}]
    assert check("[g()]", functions, [{"g": {"a": ["", 1]}}], "simple").valid


# ---- categories -------------------------------------------------------------------------------------


def test_simple_and_multiple_need_exactly_one_call() -> None:
    answer = [{"f": {"city": ["x"]}}]
    assert check("[f(city='x'), f(city='x')]", FUNCTIONS, answer, "simple").error_type == (
        "simple_function_checker:wrong_count"
    )
    assert check("[]", FUNCTIONS, answer, "simple").error_type == "simple_function_checker:wrong_count"
    two = [*FUNCTIONS, {"name": "g", "parameters": {"type": "dict", "properties": {}, "required": []}}]
    assert check("[f(city='x')]", two, answer, "multiple").valid
    assert check("[g()]", two, answer, "multiple").error_type == "simple_function_checker:wrong_func_name"
    assert check("[g(), f(city='x')]", two, answer, "live_multiple").error_type == (
        "multiple_function_checker:wrong_count"
    )


def test_parallel_order_does_not_matter() -> None:
    answer = [{"f": {"city": ["a"]}}, {"f": {"city": ["b"]}}]
    assert check("[f(city='b'), f(city='a')]", FUNCTIONS, answer, "parallel").valid
    assert check("[f(city='a'), f(city='b')]", FUNCTIONS, answer, "parallel").valid
    assert check("[f(city='a'), f(city='a')]", FUNCTIONS, answer, "parallel").error_type == (
        "parallel_function_checker_no_order:cannot_find_match"
    )
    assert check("[f(city='a')]", FUNCTIONS, answer, "parallel").error_type == (
        "parallel_function_checker_no_order:wrong_count"
    )


def test_parallel_matching_is_optimal_not_greedy() -> None:
    # BFCL's greedy first fit gives expected 0 the output x=1 and then fails (docs/scoring.md, parallel).
    functions = [{"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}}}}]
    answer = [{"f": {"x": [1, 2]}}, {"f": {"x": [1]}}]
    assert check("[f(x=1), f(x=2)]", functions, answer, "parallel").valid
    assert check("[f(x=2), f(x=1)]", functions, answer, "parallel_multiple").valid


def test_irrelevance_wants_no_call() -> None:
    for output in ["I can't help with that.", "", "[]", "[{}]", {"role": "assistant", "content": "No."}]:
        assert check(output, FUNCTIONS, [], "irrelevance").valid, output
    made = check("[f(city='x')]", FUNCTIONS, [], "live_irrelevance")
    assert (made.valid, made.error_type, made.score) == (False, "irrelevance_error:decoder_success", 0.0)
    assert check([Call("", {})], FUNCTIONS, None, "irrelevance").valid  # only empty calls


def test_missing_param_behaves_like_irrelevance() -> None:
    assert check("Which city do you mean?", FUNCTIONS, [], "missing_param").valid
    assert (
        check("[f(city='x')]", FUNCTIONS, [], "missing_param").error_type
        == "irrelevance_error:decoder_success"
    )


def test_relevance_wants_some_call_with_any_arguments() -> None:
    assert check("[f(anything=1)]", FUNCTIONS, [], "live_relevance").valid
    assert check("no", FUNCTIONS, [], "relevance").error_type == "relevance_error:decoder_failed"
    assert check("[]", FUNCTIONS, [], "relevance").error_type == "relevance_error:decoder_failed"


def test_undecodable_output_is_a_decoder_failure() -> None:
    result = check("I think the weather is nice", FUNCTIONS, [{"f": {"city": ["x"]}}], "simple")
    assert (result.valid, result.error_type, result.score) == (False, "ast_decoder:decoder_failed", 0.0)
    assert result.components == {"format": 0.0, "schema": 0.0, "tool": 0.0, "args": 0.0, "calls": 0.0}
    assert result.message


def test_every_output_form_gets_the_same_verdict() -> None:
    answer = [{"f": {"city": ["Paris"], "days": ["", 2]}}]
    call = Call("f", {"city": "paris", "days": 2})
    from scoring.rendering import FORMATS

    for fmt in FORMATS:
        assert check(render([call], fmt), FUNCTIONS, answer, "simple").valid, fmt
    assert check([call], FUNCTIONS, answer, "simple").valid  # pre-decoded


# ---- from verdict to score --------------------------------------------------------------------------


def test_valid_scores_one_with_all_components_one() -> None:
    result = verdict({"city": "x"}, {"city": ["x"]})
    assert result.score == 1.0 and result.error_type is None and result.message == ""
    assert result.components == {"format": 1.0, "schema": 1.0, "tool": 1.0, "args": 1.0, "calls": 1.0}
    assert result.calls == (Call("f", {"city": "x"}),)


def test_partial_credit_formula() -> None:
    components = {"format": 1.0, "schema": 0.5, "tool": 1.0, "args": 0.75, "calls": 0.25}
    assert partial_credit(components) == pytest.approx(0.5 * 0.25)
    assert partial_credit(dict.fromkeys(components, 1.0)) == 0.5
    # form, schema, names and a share of right values are reported, not paid: only whole calls earn
    assert partial_credit({"format": 1.0, "schema": 1.0, "tool": 1.0, "args": 0.9, "calls": 0.0}) == 0.0


def test_partial_credit_components() -> None:
    wrong_value = verdict({"city": "y", "days": 3}, {"city": ["x"], "days": [3]})
    assert wrong_value.components == {"format": 1.0, "schema": 1.0, "tool": 1.0, "args": 0.5, "calls": 0.0}
    assert wrong_value.score == 0.0
    wrong_name = verdict({"city": "x"}, {"city": ["x"]}, name="g")
    assert wrong_name.components == {"format": 1.0, "schema": 0.0, "tool": 0.0, "args": 0.0, "calls": 0.0}
    assert wrong_name.score == 0.0
    wrong_type = verdict({"city": "x", "days": "3"}, {"city": ["x"], "days": [3]})
    assert wrong_type.components["schema"] == 0.0 and wrong_type.components["args"] == 0.5


def test_only_whole_calls_earn() -> None:
    """A call with one wrong value does the wrong thing: a single-call answer earns nothing for its
    right values, a parallel answer earns for each call it got entirely right."""
    answer = [{"f": {"city": ["a"], "days": [1]}}, {"f": {"city": ["b"], "days": [2]}}]
    one_right = check("[f(city='b', days=2), f(city='a', days=9)]", FUNCTIONS, answer, "parallel")
    assert one_right.components["calls"] == 0.5 and one_right.components["args"] == pytest.approx(0.75)
    assert one_right.score == pytest.approx(0.25)
    both_half = check("[f(city='b', days=1), f(city='a', days=2)]", FUNCTIONS, answer, "parallel")
    assert both_half.components["args"] == pytest.approx(0.5) and both_half.score == 0.0
    extra = check("[f(city='a', days=1), f(city='z', days=1)]", FUNCTIONS, answer[:1], "simple")
    assert (extra.valid, extra.components["calls"], extra.score) == (False, 0.5, 0.25)


def test_form_alone_earns_nothing() -> None:
    """No credit for an answer with no right value: an empty call list (decodes, names nothing)
    and the right function with junk of the right types both score 0, whatever the optional
    parameters the call leaves out (leaving one out is no skill)."""
    expected = {"city": ["Paris"], "days": [3], "metric": [True, ""], "tags": [[], ""], "ratio": [0.5, ""]}
    empty = check("[]", FUNCTIONS, [{"f": expected}], "simple")
    assert (empty.valid, empty.components["format"], empty.score) == (False, 1.0, 0.0)
    junk = verdict({"city": "x", "days": 1}, expected)
    assert junk.components["schema"] == 1.0 and junk.components["tool"] == 1.0
    assert (junk.components["args"], junk.score) == (0.0, 0.0)
    junk_calls = "[f(city='x', days=1), f(city='y', days=2)]"
    parallel = check(junk_calls, FUNCTIONS, [{"f": expected}] * 2, "parallel")
    assert parallel.score == 0.0


def test_argument_credit_judges_the_values_given_and_those_that_must_be() -> None:
    expected = {"city": ["Paris"], "days": [3], "metric": [True, ""]}
    # a stated value left out counts wrong; an optional one left out counts neither way
    assert verdict({"city": "Paris"}, expected).components["args"] == pytest.approx(1 / 2)

    def args(**given: Any) -> float:
        return verdict(given, expected).components["args"]

    # an optional value given counts, right or wrong
    assert args(city="Paris", days=4, metric=True) == pytest.approx(2 / 3)
    assert args(city="Paris", days=4, metric=False) == pytest.approx(1 / 3)
    # a parameter given but not expected counts wrong
    assert args(city="Paris", days=4, ratio=1.0) == pytest.approx(1 / 3)


def test_partial_credit_counts_extra_and_missing_calls() -> None:
    answer = [{"f": {"city": ["a"]}}, {"f": {"city": ["b"]}}]
    one_missing = check("[f(city='b')]", FUNCTIONS, answer, "parallel")
    assert one_missing.components == {"format": 1.0, "schema": 0.5, "tool": 0.5, "args": 0.5, "calls": 0.5}
    one_extra = check("[f(city='b'), f(city='a'), f(city='c')]", FUNCTIONS, answer, "parallel")
    assert one_extra.components["tool"] == pytest.approx(2 / 3)
    swapped_one_wrong = check("[f(city='b'), f(city='z')]", FUNCTIONS, answer, "parallel")
    assert swapped_one_wrong.components["args"] == pytest.approx(0.5)


def test_scores_order_outputs_sensibly() -> None:
    expected = {"city": ["x"], "days": [3]}
    scores = [
        verdict({"city": "x", "days": 3}, expected).score,
        verdict({"city": "x", "days": 4}, expected).score,
        verdict({"city": "x", "days": "3"}, expected).score,
        verdict({"city": "x", "days": 3}, expected, name="g").score,
        check("not a call", FUNCTIONS, [{"f": expected}], "simple").score,
    ]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] == 1.0 and all(0 <= s < 0.5 for s in scores[1:]) and scores[-1] == 0.0


def test_verdict_to_dict_is_json_ready() -> None:
    import json

    data = verdict({"city": "y"}, {"city": ["x"]}).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["error_type"] == "value_error:string" and data["calls"] == [
        {"name": "f", "arguments": {"city": "y"}}
    ]
