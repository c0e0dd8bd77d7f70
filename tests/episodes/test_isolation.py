"""Round isolation inside the environments (issue 26): what a hostile miner's call can do.

Each attack the issue measured on ab2dd68 is replayed through ``Environment.dispatch``: nothing
escapes it, the call ends as an error observation (the state unchanged) or a bounded output, and
it stays within a generous budget (2 s of wall time, 64 MB of Python allocations, measured with
tracemalloc). Then the guarantees behind them: anything a tool raises is an observation and the
call is undone; ``EnvironmentCorrupted`` only when the undo fails, and the runner ends that
episode alone; numbers from miner text are ASCII digits.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
import tracemalloc
from collections.abc import Callable
from random import Random
from typing import Any, ClassVar

import pytest

from tasks.episodes.environment import (
    MAX_OBSERVATION_CHARS,
    Environment,
    EnvironmentCorrupted,
    ToolError,
    ascii_int,
    tool,
)
from tasks.episodes.environments.bank import Bank
from tasks.episodes.environments.shell import MAX_OUTPUT_CHARS
from tasks.episodes.environments.workspace import MAX_FILE_CHARS, MAX_WORKSPACE_CHARS, Workspace
from tasks.episodes.model import Episode, Turn
from tasks.episodes.runner import EpisodeRunner

WALL_S = 2.0
PEAK_BYTES = 64 << 20


def _wall(call: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started


def _peak(call: Callable[[], Any]) -> tuple[Any, int]:
    """``call()``'s result and its tracemalloc peak in bytes (tracemalloc slows allocation several
    times over, so time is measured on a separate run)."""
    tracemalloc.start()
    try:
        result = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def _within_budget(env: Environment, name: str, arguments: dict[str, Any]) -> Any:
    """Dispatch one call under the budget (timed on a copy of the environment, then measured for
    memory on the environment itself); its observation."""
    timed, elapsed = _wall(lambda: copy.deepcopy(env).dispatch(name, arguments))
    assert elapsed < WALL_S, f"{name} took {elapsed:.2f} s"
    observation, peak = _peak(lambda: env.dispatch(name, arguments))
    assert peak < PEAK_BYTES, f"{name} allocated {peak / 2**20:.0f} MB"
    assert observation == timed
    return observation


def _is_error(observation: Any) -> bool:
    return isinstance(observation, dict) and "error" in observation


def _bounded_output(observation: Any) -> bool:
    return isinstance(observation, dict) and len(str(observation.get("output", ""))) <= MAX_OUTPUT_CHARS + 100


def _create(path: str, lines: list[str]) -> str:
    """A patch creating ``path`` with ``lines``."""
    body = "".join(f"+{line}\n" for line in lines)
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}"


# -- the table -----------------------------------------------------------------------------


def test_a_401_digit_transfer_amount_is_an_error_observation() -> None:
    env = Bank(7)
    before = env.fingerprint()
    source, target = env.accounts[0]["id"], env.accounts[1]["id"]
    for amount in (10**400, -(10**400), float("nan"), float("inf"), 1e300):
        arguments = {"from_account": source, "to_account": target, "amount": amount}
        assert _is_error(_within_budget(env, "transfer", arguments)), amount
        pay = {"payee": env.payees[0]["name"], "from_account": source, "amount": amount, "reference": "x"}
        env.forbidden("pay", pay)  # the safety check reads the amount too, and must not raise
        assert _is_error(_within_budget(env, "pay", pay)), amount
    assert env.fingerprint() == before


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("run_shell", {"command": "head -n ² README.md"}),
        ("run_shell", {"command": "head -n² README.md"}),
        ("run_shell", {"command": "tail -³ README.md"}),
        ("run_shell", {"command": "tail -n ٣ README.md"}),
        ("run_shell", {"command": "head -n " + "9" * 401 + " README.md"}),
        ("cron_create", {"schedule": "*/² * * * *", "command": "pytest -q"}),
        ("cron_create", {"schedule": "¹ * * * *", "command": "pytest -q"}),
        ("cron_create", {"schedule": "٣ * * * *", "command": "pytest -q"}),
        ("cron_create", {"schedule": "*/" + "9" * 401 + " * * * *", "command": "pytest -q"}),
    ],
)
def test_numbers_that_are_not_ascii_digits_are_error_observations(
    name: str, arguments: dict[str, Any]
) -> None:
    env = Workspace(3)
    before = env.fingerprint()
    assert _is_error(_within_budget(env, name, arguments))
    assert env.fingerprint() == before


@pytest.mark.parametrize(
    "pattern",
    ["a{0,60}a{0,60}a{0,60}a{0,60}b", ".{0,99}" * 5, "(a{0,60}){0,60}b", "(x+x+)+y", "(a)\\1", "(?<!a)b"],
)
def test_grep_regex_bombs_stay_in_budget(pattern: str) -> None:
    env = Workspace(5)
    line = "a" * 500
    assert not _is_error(env.dispatch("apply_patch", {"patch": _create("g", [line])}))
    observation = _within_budget(env, "run_shell", {"command": f"grep -E '{pattern}' g"})
    assert _is_error(observation) or _bounded_output(observation)
    # The same over a file as large as a file may be (400 such lines): the work is linear.
    assert not _is_error(env.dispatch("apply_patch", {"patch": _create("h", [line] * 390)}))
    observation = _within_budget(env, "run_shell", {"command": f"grep -cE '{pattern}' h g h"})
    assert _is_error(observation) or _bounded_output(observation)


def test_a_huge_patch_then_cat_of_it_995_times_is_bounded() -> None:
    env = Workspace(6)
    observation = _within_budget(env, "apply_patch", {"patch": _create("f", ["x"] * 49_000)})
    assert not _is_error(observation), observation
    command = "cat" + " f" * 995
    assert len(command) <= 2_000
    for shell in (command, "wc -l" + " f" * 994, "head -n 100000 f", "tail -n 99999 f"):
        observation = _within_budget(env, "run_shell", {"command": shell})
        assert not _is_error(observation) and _bounded_output(observation), shell[:40]
    # grep reads every line of every operand: past its work budget, it says so.
    observation = _within_budget(env, "run_shell", {"command": "grep -c x" + " f" * 990})
    assert "too much to search" in observation["error"]
    assert len(json.dumps(_within_budget(env, "git_diff", {}))) <= 2 * MAX_OBSERVATION_CHARS  # escapes twice
    assert _bounded_output(_within_budget(env, "run_shell", {"command": "git diff"}))


def test_one_hunk_of_30000_identical_context_lines_applies_in_linear_time() -> None:
    env = Workspace(8)
    # The quadratic case on ab2dd68: a file twice the hunk's length, every line alike.
    assert not _is_error(env.dispatch("apply_patch", {"patch": _create("f", ["x"] * 59_999 + ["y"])}))
    before = env.fingerprint()
    # Not found: a removed line the file does not have.
    missing = "--- a/f\n+++ b/f\n@@ -1,30000 +1,30000 @@\n" + " x\n" * 29_999 + "-z\n+w\n"
    assert _is_error(_within_budget(env, "apply_patch", {"patch": missing}))
    assert env.fingerprint() == before
    # Found 30,000 lines below where the header says.
    found = "--- a/f\n+++ b/f\n@@ -1,30000 +1,30000 @@\n" + " x\n" * 29_999 + "-y\n+w\n"
    assert not _is_error(_within_budget(env, "apply_patch", {"patch": found}))
    assert env.files["f"].endswith("x\nw\n") and env.files["f"].count("\n") == 60_000


def test_a_file_and_the_workspace_have_a_size_cap() -> None:
    env = Workspace(2)
    too_big = "x" * 1_000
    lines = [too_big] * (MAX_FILE_CHARS // 1_000 + 1)
    observation = env.dispatch("apply_patch", {"patch": _create("big", lines[: len(lines) // 2])})
    assert not _is_error(observation)
    grow = "--- a/big\n+++ b/big\n@@ -1,1 +1,2 @@\n " + too_big + "\n+" + "y" * 150_000 + "\n"
    before = env.fingerprint()
    observation = env.dispatch("apply_patch", {"patch": grow})
    assert _is_error(observation) and "at most" in observation["error"]
    assert env.fingerprint() == before
    created = 0
    while not _is_error(env.dispatch("apply_patch", {"patch": _create(f"more{created}", ["z" * 190_000])})):
        created += 1
    assert sum(len(content) for content in env.files.values()) <= MAX_WORKSPACE_CHARS
    assert (
        created >= 5
        and "workspace would hold"
        in env.dispatch("apply_patch", {"patch": _create("last", ["z" * 190_000])})["error"]
    )


def test_a_patch_touching_thousands_of_files_is_refused() -> None:
    env = Workspace(2)
    patch = "".join(_create(f"d/f{index}", ["x"]) for index in range(2_000))
    observation = _within_budget(env, "apply_patch", {"patch": patch})
    assert _is_error(observation) and "at most" in observation["error"]


# -- what a tool raises is contained ----------------------------------------------------------------


class Fragile(Environment):
    """A counter whose tools raise what the issue found, after changing the state."""

    name: ClassVar[str] = "fragile"
    observable = ("count", "log")
    replay_fails = False

    def build(self, rng: Random, size: int) -> None:
        self.count = rng.randrange(10)
        self.log: list[str] = []

    @tool("Adds one.", mutates=True)
    def bump(self) -> dict[str, Any]:
        if Fragile.replay_fails:
            raise RuntimeError("not deterministic")
        self.count += 1
        self.log.append("bump")
        return {"count": self.count}

    @tool("Adds one, then overflows.", mutates=True)
    def overflow(self) -> dict[str, Any]:
        self.count += 1
        self.log.append("overflow")
        return {"value": float(10**400)}

    @tool("Recurses for ever (after a change).", mutates=True)
    def recurse(self) -> dict[str, Any]:
        self.log.append("recurse")

        def down(depth: int) -> int:
            return down(depth + 1) + 1

        return {"depth": down(0)}

    @tool("Refuses, before any change.", mutates=True)
    def refuse(self) -> dict[str, Any]:
        raise ToolError("no")

    @tool("Reads, then fails in its result.")
    def peek(self) -> dict[str, Any]:
        return {"huge": 10**5000}


def test_anything_a_tool_raises_is_an_observation_and_the_call_is_undone() -> None:
    env = Fragile(1)
    env.begin_turn()
    assert env.dispatch("bump", {}) == {"count": env.count}
    after_bump = env.fingerprint()
    for name in ("overflow", "recurse", "refuse"):
        observation = env.dispatch(name, {})
        assert _is_error(observation), name
        assert env.fingerprint() == after_bump, name
    assert "OverflowError" in env.dispatch("overflow", {})["error"]
    assert "RecursionError" in env.dispatch("recurse", {})["error"]
    assert _is_error(env.dispatch("peek", {}))  # the call ran; only its result cannot be shown
    assert env.dispatch("bump", {}) == {"count": env.count} and env.log == ["bump", "bump"]


def test_environment_corrupted_when_the_undo_cannot_replay() -> None:
    env = Fragile(1)
    env.dispatch("bump", {})
    Fragile.replay_fails = True
    try:
        with pytest.raises(EnvironmentCorrupted, match="could not be undone"):
            env.dispatch("overflow", {})
    finally:
        Fragile.replay_fails = False


def test_the_engine_ends_only_that_episode_when_the_environment_is_corrupted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    episode = Episode(
        id="e",
        category="multi_turn_base",
        environment="bank",
        env_seed="00",
        size=1,
        turns=[Turn(user="Pay.", tools=["list_accounts"], plan=[{"name": "list_accounts", "arguments": {}}])],
        seed="s",
    )

    async def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        call = {"id": "1", "type": "function", "function": {"name": "list_accounts", "arguments": "{}"}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    def corrupted(self: Environment, name: str, arguments: dict[str, Any]) -> Any:
        raise EnvironmentCorrupted("bank: a failed call could not be undone (RuntimeError)")

    monkeypatch.setattr(Bank, "dispatch", corrupted)
    transcript = asyncio.run(EpisodeRunner(episode, ask).play())
    assert transcript.failed is not None and transcript.failed.startswith("environment corrupted")
    assert transcript.turns[0].ended == "failed" and transcript.turns[0].state is not None


def test_a_safety_check_that_raises_refuses_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    episode = Episode(
        id="e",
        category="multi_turn_base",
        environment="bank",
        env_seed="00",
        size=1,
        turns=[Turn(user="List.", tools=["list_accounts"], plan=[])],
        seed="s",
        step_cap=2,
    )
    asked = 0

    async def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        nonlocal asked
        asked += 1
        if asked > 1:
            return "done"
        call = {"id": "1", "type": "function", "function": {"name": "list_accounts", "arguments": "{}"}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    def broken(self: Environment, name: str, arguments: dict[str, Any]) -> str | None:
        raise ValueError("cannot judge")

    monkeypatch.setattr(Bank, "forbidden", broken)
    transcript = asyncio.run(EpisodeRunner(episode, ask).play())
    call = transcript.turns[0].steps[0].calls[0]
    assert transcript.failed is None and _is_error(call.observation) and call.unsafe is None


# -- numbers ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "maximum", "expected"),
    [
        ("12", None, 12),
        ("007", None, 7),
        ("²", None, None),
        ("٣", None, None),
        ("1²", None, None),
        ("", None, None),
        ("-1", None, None),
        (" 1", None, None),
        ("1\n", None, None),
        ("9" * 18, None, 10**18 - 1),
        ("9" * 19, None, None),
        ("9" * 401, None, None),
        ("60", 59, None),
        ("59", 59, 59),
    ],
)
def test_ascii_int_takes_ascii_digits_only(text: str, maximum: int | None, expected: int | None) -> None:
    assert ascii_int(text, maximum) == expected
