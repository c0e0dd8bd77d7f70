"""The verifier: template text always passes; each way a rewording can go wrong has its reason."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pytest

import tasks
from tasks.phrasing import intent_of, verify


def _names(task: tasks.Task) -> list[str]:
    names = []
    for tool in task.tools:
        function = tool["function"]
        names.append(function["name"])
        names.extend(function["parameters"]["properties"])
    return names


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_template_text_verifies(seed: int) -> None:
    for task in tasks.generate(seed, 3000):
        checked = verify(task.request, intent_of(task), _names(task))
        assert checked.reason is None, (checked.reason, task.request)


def _first(category: str, predicate: object = None) -> tasks.Task:
    for task in tasks.generate(b"verify", 400, mix={category: 1.0}):
        if predicate is None or predicate(task):  # type: ignore[operator]
            return task
    raise AssertionError("no such task")


def _stated_numbers(task: tasks.Task) -> list[str]:
    intent = intent_of(task)
    return [
        forms[0]
        for ask in intent["asks"]
        for value in ask["values"]
        for kind, forms in value["mentions"]
        if kind == "number"
    ]


def test_a_changed_or_lost_number_is_refused() -> None:
    task = _first("simple", lambda t: any(n.isdigit() and len(n) > 1 for n in _stated_numbers(t)))
    number = next(n for n in _stated_numbers(task) if n.isdigit() and len(n) > 1)
    changed = task.request.replace(number, str(int(number) + 1), 1)
    assert verify(changed, intent_of(task)).reason in ("lost_value", "invented_value")
    assert verify(task.request.replace(number, "", 1), intent_of(task)).reason == "lost_value"


def test_a_duplicated_value_and_an_invented_number_are_refused() -> None:
    task = _first("simple", lambda t: bool(_stated_numbers(t)) and "2" not in t.request)
    number = _stated_numbers(task)[0]
    assert verify(f"{task.request} ({number} again)", intent_of(task)).reason == "duplicated_value"
    assert verify(f"{task.request} I have 2 kids.", intent_of(task)).reason == "invented_value"


def test_quoted_text_must_stay_verbatim() -> None:
    def has_quote(task: tasks.Task) -> bool:
        return any(
            kind == "quoted"
            for ask in intent_of(task)["asks"]
            for v in ask["values"]
            for kind, _ in v["mentions"]
        )

    task = _first("simple", has_quote)
    body = next(
        forms[0]
        for ask in intent_of(task)["asks"]
        for v in ask["values"]
        for kind, forms in v["mentions"]
        if kind == "quoted"
    )
    assert verify(task.request.replace(body, body.upper() + "x", 1), intent_of(task)).reason == "lost_value"


def test_a_withheld_value_must_stay_unstated() -> None:
    def withholds_a_pick(task: tasks.Task) -> bool:
        # Alluded to by a phrase alone: an allusion with mentions to keep (tasks.devices.unsaid)
        # replaced by the value is refused as lost first.
        return any(
            entry["forbidden"] and not entry.get("mentions")
            for ask in intent_of(task)["asks"]
            for entry in ask["withheld"]
        )

    task = _first("missing_param", withholds_a_pick)
    entry = next(entry for ask in intent_of(task)["asks"] for entry in ask["withheld"])
    stated = task.request.replace(entry["said"], entry["forbidden"][0], 1)
    assert verify(stated, intent_of(task)).reason == "withheld_value_stated"

    def withholds_free_text(task: tasks.Task) -> bool:
        return any(
            not entry["forbidden"]
            and not entry.get("mentions")
            and not any(ch.isdigit() for ch in task.request)
            for ask in intent_of(task)["asks"]
            for entry in ask["withheld"]
        )

    task = _first("missing_param", withholds_free_text)
    entry = next(entry for ask in intent_of(task)["asks"] for entry in ask["withheld"])
    assert verify(task.request.replace(entry["said"], '"rm -rf build"', 1), intent_of(task)).reason in (
        "withheld_value_stated",
        "invented_value",
    )


def test_tool_names_and_talk_about_tools_are_refused() -> None:
    task = _first("multiple")
    names = _names(task)
    identifier = next(  # a name with a digit ("...V3") would first be an invented number
        name
        for name in names
        if ("_" in name or any(c.isupper() for c in name[1:])) and not any(c.isdigit() for c in name)
    )
    assert verify(f"{task.request} via {identifier}", intent_of(task), names).reason == "names_a_tool"
    assert verify(f"{task.request} Please call the function for it.", intent_of(task), names).reason == (
        "addresses_the_model"
    )
    assert verify(f"Sure! {task.request}", intent_of(task), names).reason == "addresses_the_model"


def test_length_bounds() -> None:
    task = _first("simple")
    assert verify("", intent_of(task)).reason == "empty"
    assert verify("hi", intent_of(task)).reason == "too_short"
    assert verify(task.request + " blah" * 2000, intent_of(task)).reason == "too_long"


def test_dates_and_times_may_change_form_but_not_value() -> None:
    def has(kind: str) -> Callable[[tasks.Task], bool]:
        def check(task: tasks.Task) -> bool:
            return any(
                k == kind for ask in intent_of(task)["asks"] for v in ask["values"] for k, _ in v["mentions"]
            )

        return check

    task = _first("simple", has("date"))
    forms = next(
        forms
        for ask in intent_of(task)["asks"]
        for v in ask["values"]
        for k, forms in v["mentions"]
        if k == "date"
    )
    said = next(form for form in forms if form in task.request)
    other = next(form for form in forms if form != said)
    assert verify(task.request.replace(said, other), intent_of(task)).reason is None
    iso = next(form for form in forms if form[:4].isdigit() and form[4] == "-")
    wrong_day = iso[:-2] + ("01" if iso[-2:] != "01" else "02")
    assert verify(task.request.replace(said, wrong_day), intent_of(task)).reason in (
        "lost_value",
        "invented_value",
    )


def test_the_prompt_lists_a_yes_no_values_opposite_only_as_what_not_to_say() -> None:
    import json

    from tasks.phrasing.prompt import phrasing_messages
    from tasks.phrasing.style import Style

    def has_flag_with_opposite(task: tasks.Task) -> bool:
        asks = intent_of(task)["asks"]
        return any(kind == "absent" for ask in asks for v in ask["values"] for kind, _ in v["mentions"])

    task = _first("simple", has_flag_with_opposite)
    content = phrasing_messages(intent_of(task), Style("plain", "short", "none", "", 0))[1]["content"]
    body = json.loads(content[content.index("{") :])
    entries = [entry for request in body["requests"] for entry in request["state"] if "not" in entry]
    assert entries
    for entry in entries:
        stated = {form for forms in entry["forms"] for form in forms}
        assert stated and not stated & set(entry["not"])


def test_the_per_task_caches_stay_bounded_however_many_tasks_are_verified() -> None:
    # A validator phrases new tasks every round for as long as it runs: every cache the verifier
    # keeps per template text or value form has a bound (at most a few thousand entries), not an
    # entry for every task it ever saw.
    verify_module = importlib.import_module("tasks.phrasing.verification")  # not the function verify
    caches = [value for value in vars(verify_module).values() if hasattr(value, "cache_info")]
    assert len(caches) >= 5  # the walk found them
    for cached in caches:
        cached.cache_clear()
    for task in tasks.generate(b"many rounds", 150):
        verify(task.request, intent_of(task), _names(task))
    assert verify_module._example_facts.cache_info().currsize == 150  # one entry per task's text
    for cached in caches:
        info = cached.cache_info()
        assert info.maxsize is not None and info.currsize <= info.maxsize <= 10_000, (cached.__name__, info)
