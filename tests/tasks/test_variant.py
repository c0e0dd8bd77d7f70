"""variant() and tool_shuffle: same task, new surface; answers do not carry across surfaces."""

from __future__ import annotations

import json
from random import Random

from scoring import Call
from scoring.checking import check
from tasks import generate, variant
from tasks.answers import reference_calls
from tasks.model import Task
from tasks.shuffle import shuffle_surface, split_words


def _calls(task: Task) -> list[Call]:
    return [Call(name, args) for name, args in reference_calls(task.expected)]


def _passes(answer_from: Task, on: Task) -> bool:
    return check(_calls(answer_from), on.tools, on.expected, on.scoring_category).valid


def test_variant_is_the_same_task_with_a_different_surface() -> None:
    for task in generate("surface", 200):
        other = variant(task, b"miner-a")
        assert other.id == task.id and other.category == task.category
        assert other.messages == task.messages and other.source == task.source
        assert len(other.tools) == len(task.tools) and len(other.expected) == len(task.expected)
        assert not set(other.tool_names) & set(task.tool_names), "every function is renamed"
        assert variant(task, b"miner-a") == other, "deterministic"
        for old, new in zip(task.expected, other.expected, strict=True):
            (old_args,) = old.values()
            (new_args,) = new.values()
            assert sorted(map(repr, old_args.values())) == sorted(map(repr, new_args.values()))


def test_answers_do_not_transfer_between_surfaces() -> None:
    with_surface = [task for task in generate("relay", 600) if task.expected]
    transferred = 0
    for task in with_surface:
        mine, theirs = variant(task, b"miner-a"), variant(task, b"miner-b")
        assert _passes(task, task) and _passes(mine, mine)
        transferred += _passes(mine, task) or _passes(task, mine) or _passes(theirs, mine)
    assert transferred <= 0.05 * len(with_surface)


def test_no_call_tasks_stay_no_call() -> None:
    for task in generate("quiet", 60, mix={"irrelevance": 1, "missing_param": 1}):
        assert variant(task, "m").expected == []


def test_shuffle_renames_parameters_reorders_and_rewrites() -> None:
    tasks_ = generate("perturb", 300)
    renamed_params = reordered = rewritten = enums_moved = 0
    for task in tasks_:
        other = variant(task, "v")
        for before, after in zip(task.expected, other.expected, strict=True):
            renamed_params += list(next(iter(before.values()))) != list(next(iter(after.values())))
        reordered += [len(t["function"]["parameters"]["properties"]) for t in task.tools] != [
            len(t["function"]["parameters"]["properties"]) for t in other.tools
        ] or task.tool_names != other.tool_names
        descriptions = {t["function"]["description"] for t in task.tools}
        rewritten += any(t["function"]["description"] not in descriptions for t in other.tools)
        enums = sorted(
            tuple(p["enum"])
            for t in task.tools
            for p in t["function"]["parameters"]["properties"].values()
            if "enum" in p
        )
        other_enums = sorted(
            tuple(p["enum"])
            for t in other.tools
            for p in t["function"]["parameters"]["properties"].values()
            if "enum" in p
        )
        enums_moved += enums != other_enums
    assert renamed_params > 150 and reordered > 150 and rewritten > 100 and enums_moved > 30


def test_shuffle_handles_dotted_names_keywords_and_keeps_required_consistent() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "math.hypot",
                "description": "Calculate the norm.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "from": {"type": "string", "description": "a keyword"},
                        "x": {"type": "integer", "description": "x"},
                        "mode": {"type": "string", "enum": ["a", "b", "c"], "description": "m"},
                    },
                    "required": ["from", "x"],
                },
            },
        },
    ]
    expected = [{"math.hypot": {"from": ["k"], "x": [3], "mode": ["", "a"]}}]
    for seed in range(50):
        surface = shuffle_surface(tools, expected, Random(seed))
        function = surface.tools[0]["function"]
        assert function["name"].isidentifier() and function["name"] != "math.hypot"
        properties = function["parameters"]["properties"]
        assert "from" not in properties and all(name.isidentifier() for name in properties)
        assert set(function["parameters"]["required"]) <= set(properties)
        ((name, args),) = surface.expected[0].items()
        assert name == function["name"] and set(args) == set(properties)
        assert sorted(properties[surface.parameter_names[name]["mode"]]["enum"]) == ["a", "b", "c"]
    assert tools[0]["function"]["name"] == "math.hypot", "inputs are not mutated"


def test_split_words() -> None:
    assert split_words("getWeatherForecast") == ("get", "weather", "forecast")
    assert split_words("math.hypot") == ("math", "hypot")
    assert split_words("HTTPRequest_v2") == ("http", "request", "v2")


def test_awkward_external_names_always_get_a_valid_new_name() -> None:
    names = ["1st_place", "get-data", "x", "class", "_private", "a.b.c", "Trains_1_FindTrains", "über"]
    tools = [
        {"type": "function", "function": {"name": name, "description": "", "parameters": {"properties": {}}}}
        for name in names
    ]
    for seed in range(30):
        surface = shuffle_surface(tools, [], Random(seed))
        new_names = [tool["function"]["name"] for tool in surface.tools]
        assert len(set(new_names)) == len(names) and not set(new_names) & set(names)
        assert all(name.isidentifier() for name in new_names), new_names


def test_variant_does_not_depend_on_where_the_task_object_came_from() -> None:
    # variant() keeps the plans of a task's tools for the next miner; a task read back from
    # JSON (new dicts, no kept plans) and a repeated call must give the very same variant.
    for task in generate("plans", 150):
        first = variant(task, b"miner-a")
        again = variant(task, b"miner-a")
        reloaded = variant(Task.from_dict(json.loads(json.dumps(task.to_dict()))), b"miner-a")
        assert first == again == reloaded
        assert variant(task, b"miner-b") != first
