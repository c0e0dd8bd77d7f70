"""generate(): determinism, mixes, the Task contract and the JSON round trip."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest

import tasks
from tasks import CATEGORIES, Task, TaskConfigError, generate
from tests.support.generator import python_modules_only

_DIGEST_SCRIPT = (
    "import hashlib, json, tasks\n"
    "ts = tasks.generate(b'cross-machine', 200)\n"
    "vs = [tasks.variant(t, 'miner-hotkey') for t in ts]\n"
    "blob = json.dumps([t.to_dict() for t in ts + vs], sort_keys=True)\n"
    "print(hashlib.sha256(blob.encode()).hexdigest())\n"
)


def _digest(task_list: list[Task]) -> str:
    return hashlib.sha256(json.dumps([t.to_dict() for t in task_list], sort_keys=True).encode()).hexdigest()


def test_same_seed_same_tasks_different_seed_different_tasks() -> None:
    assert _digest(generate("alpha", 120)) == _digest(generate("alpha", 120))
    assert _digest(generate("alpha", 120)) != _digest(generate("beta", 120))
    assert _digest(generate(42, 10)) == _digest(generate("42", 10))


def test_same_seed_same_tasks_under_other_hash_seeds() -> None:
    outputs = set()
    for hash_seed in ("0", "12345", "random"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        result = subprocess.run(
            [sys.executable, "-c", _DIGEST_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        outputs.add(result.stdout.strip())
    ts = generate(b"cross-machine", 200)
    here = [t.to_dict() for t in ts + [tasks.variant(t, "miner-hotkey") for t in ts]]
    assert outputs == {hashlib.sha256(json.dumps(here, sort_keys=True).encode()).hexdigest()}


def test_default_mix_follows_the_registry_shares() -> None:
    counts = Counter(task.category for task in generate("mix", 100))
    for name, entry in CATEGORIES.items():
        assert counts[name] == round(entry.share * 100), name
    assert sum(counts.values()) == 100


@pytest.mark.parametrize("category", sorted(CATEGORIES))
def test_single_category_mix(category: str) -> None:
    produced = generate("one", 30, mix={category: 1.0})
    assert {task.category for task in produced} == {category}
    for task in produced:
        assert task.scoring_category == CATEGORIES[category].scoring_category
        if category in ("irrelevance", "missing_param"):
            assert task.expected == []
        else:
            assert task.expected


def test_task_contract_and_gold_tools_present() -> None:
    produced = generate("contract", 300)
    assert len({task.id for task in produced}) == len(produced)
    for task in produced:
        assert task.source == "builtin" and task.generator_version == tasks.GENERATOR_VERSION
        assert bytes.fromhex(task.seed)
        assert task.messages[-1]["role"] == "user" and task.request
        names = task.tool_names
        assert len(set(names)) == len(names)
        for tool in task.tools:
            assert tool["type"] == "function"
            function = tool["function"]
            assert set(function) >= {"name", "description", "parameters"}
            assert function["parameters"]["type"] == "object"
        for call in task.expected:
            ((name, args),) = call.items()
            assert name in names, "the gold tool is never dropped"
            (tool,) = [t for t in task.tools if t["function"]["name"] == name]
            assert set(args) <= set(tool["function"]["parameters"]["properties"])
            assert all(isinstance(values, list) and values for values in args.values())
        if task.category == "multiple":
            assert 3 <= len(task.tools) <= 5 and len(task.expected) == 1
        if task.category == "parallel":
            assert len(task.tools) == 1 and len(task.expected) >= 2
        if task.category == "parallel_multiple":
            assert len({next(iter(call)) for call in task.expected}) >= 2


def test_json_round_trip() -> None:
    for task in generate("json", 60):
        again = Task.from_dict(json.loads(json.dumps(task.to_dict())))
        assert again == task
        assert again.scoring_category == task.scoring_category


def test_zero_tasks_and_bad_mixes() -> None:
    assert generate("x", 0) == []
    with pytest.raises(TaskConfigError, match="unknown categories"):
        generate("x", 5, mix={"nonsense": 1.0})
    with pytest.raises(TaskConfigError, match="all be zero"):
        generate("x", 5, mix={"simple": 0.0})
    with pytest.raises(TaskConfigError, match="non-negative"):
        generate("x", 5, mix={"simple": -1.0})
    with pytest.raises(TaskConfigError):
        generate("x", -1)
    with pytest.raises(TypeError):
        generate(1.5, 3)  # type: ignore[arg-type]


def test_registry_entries() -> None:
    assert set(CATEGORIES) == {
        "simple",
        "multiple",
        "parallel",
        "parallel_multiple",
        "irrelevance",
        "missing_param",
    }
    assert abs(sum(entry.share for entry in CATEGORIES.values()) - 1.0) < 1e-9
    no_call = CATEGORIES["irrelevance"].share + CATEGORIES["missing_param"].share
    assert no_call <= 0.2, "refusing everything must not pay"
    for name, entry in CATEGORIES.items():
        assert entry.name == name and callable(entry.build) and entry.description
    assert CATEGORIES["missing_param"].scoring_category == "irrelevance"


def test_building_tasks_makes_no_reference_cycles() -> None:
    """What lets ``generate`` pause the cyclic collector: nothing it builds needs it to be freed."""
    gc.collect()
    gc.disable()
    try:
        for seed in ("cycles-a", "cycles-b"):
            generate(seed, 400)
            assert gc.collect() == 0
    finally:
        gc.enable()


@python_modules_only
def test_the_collector_is_off_while_tasks_are_built_and_left_as_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tasks.task_sets as task_sets

    enabled: list[bool] = []
    make_task = task_sets._make_task

    def watched(*args: Any) -> Task:
        enabled.append(gc.isenabled())
        return make_task(*args)

    monkeypatch.setattr(task_sets, "_make_task", watched)
    try:
        generate("paused", 20)
        assert enabled == [False] * 20
        assert gc.isenabled()
        gc.disable()
        generate("paused-off", 5)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_batches_built_on_several_threads_leave_the_collector_on() -> None:
    import threading

    import tasks.task_sets as task_sets

    results: list[int] = []
    threads = [
        threading.Thread(target=lambda seed=seed: results.append(len(generate(seed, 60))))
        for seed in ("thread-a", "thread-b", "thread-c")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [60, 60, 60]
    assert gc.isenabled() and task_sets._pauses == 0
