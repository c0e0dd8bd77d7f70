"""The workspace's parts: the planted bug fixed (found from the failing test or by its function),
files located and measured, facts kept in memory and passed on to teammates, and conditions on
the test suite (red until the bug is fixed) and on files' lengths."""

from __future__ import annotations

from tasks.episodes.environments.workspace import (
    _FACTS,
    _STAND_INS,
    Workspace,
    _fixing_patch,
    _withheld,
)
from tasks.episodes.goals import Abandon, Context, Part, Probe, Withhold, condition, goal
from tasks.episodes.scenario import stated
from tasks.library.common import CronSchedule
from tasks.rand import between, choose

#: A tool another offered tool can stand in for (``run_shell`` runs pytest too): a missing-function
#: episode that holds back the first must not offer the second (tasks.episodes.goals reads this).
STAND_INS = _STAND_INS
_KEYS = ("bug_location", "module_to_review", "where_it_lives", "file_of_interest")


def _workspace(ctx: Context) -> Workspace:
    env = ctx.env
    assert isinstance(env, Workspace)
    return env


def _fixed(env: Workspace) -> bool:
    return env.bug.buggy_line + "\n" not in env.files[env.bug.path]


@goal("workspace", 1.2, longest=5)
def fix_the_suite(ctx: Context) -> Part | None:
    """Red tests: the failing test names the module (its import), which is read and patched."""
    env = _workspace(ctx)
    if _fixed(env):
        return None
    bug = env.bug
    patch = _fixing_patch(env)
    ctx.note("run_tests")
    ctx.note("read_file", path=bug.test_path)
    ctx.note("read_file", path=bug.path)
    ctx.run("apply_patch", patch=patch)
    ctx.note("run_tests")
    text = "get the failing test passing by fixing the code (not the test), and tell me which test it was"
    return Part(text, [], [bug.test_name], "get the tests green")


@goal("workspace")
def fix_function(ctx: Context) -> Part | None:
    env = _workspace(ctx)
    if _fixed(env):
        return None
    bug = env.bug
    patch = _fixing_patch(env)
    ctx.note("run_shell", command=f"grep -rn 'def {bug.function}(' src")
    ctx.note("read_file", path=bug.path)
    ctx.run("apply_patch", patch=patch)
    ctx.note("run_tests")
    values = [stated("function", "the function that gives wrong results", bug.function)]
    text = f"fix {bug.function}, which gives wrong results, check the tests pass and tell me its file"
    return Part(text, values, [bug.path], "fix a function")


@goal("workspace")
def locate(ctx: Context) -> Part | None:
    env, rng = _workspace(ctx), ctx.rng
    function = choose(rng, sorted(env.functions))
    path = env.functions[function]
    ctx.note("run_shell", command=f"grep -rn 'def {function}(' src")
    ctx.note("run_shell", command=f"wc -l {path}")
    lines = env.files[path].count("\n")
    values = [stated("function", "the function to look up", function)]
    text = f"tell me which file defines {function} and how many lines that file has"
    return Part(text, values, [path, lines], "find a function")


@goal("workspace")
def note_definition(ctx: Context) -> Part | None:
    """Save the path of the file defining a function: found by a search, not stated."""
    env, rng = _workspace(ctx), ctx.rng
    function = choose(rng, sorted(env.functions))
    key = choose(rng, _KEYS)
    ctx.note("run_shell", command=f"grep -rn 'def {function}(' src")
    ctx.run("remember", key=key, value=env.functions[function])
    values = [stated("function", "the function to look up", function), stated("key", "the memory key", key)]
    text = f"save the path of the file that defines {function} in your memory under the key {key}"
    return Part(text, values, purpose="note where code lives")


@goal("workspace", 1.0, withholds=True)
def keep_fact(ctx: Context) -> Part | None:
    env, rng = _workspace(ctx), ctx.rng
    key, about, allusion, _, draw = choose(rng, _FACTS)
    value, forms = draw(rng)
    if env.memory.get(key) == value:
        return None
    ctx.run("remember", key=key, value=value)
    slot = ctx.slot("value")
    fact = stated(slot, about, value)
    values = [stated("key", "the memory key", key), fact]

    def correct(ctx: Context) -> Part | None:
        """ "Actually, it's Y": the key overwritten."""
        other, _ = draw(ctx.rng)
        if other == value:
            return None
        ctx.run("remember", key=key, value=other)
        text = f'actually, {about} is "{other}", not that: fix your note'
        return Part(text, [stated("value", about, other)], purpose="correct a note")

    return Part(
        f'save "{value}" in your memory under the key {key}: that is {about}',
        values,
        correction=correct,
        purpose=f"keep a note of {about}",
        withhold=Withhold(
            f"save {allusion} in your memory under the key {key}",
            _withheld(slot, about, allusion, forms),
            f"It is {value}.",
            [fact],
        ),
    )


@goal("workspace")
def pass_on(ctx: Context) -> Part | None:
    """Message a teammate what is kept under a key: the value is read from memory, not stated."""
    env, rng = _workspace(ctx), ctx.rng
    if not env.memory:
        return None
    key = choose(rng, sorted(env.memory))
    handle = choose(rng, env.team)
    value = ctx.run("retrieve_memory", key=key)["value"]
    ctx.run("message_send", recipient=handle, text=value)
    values = [stated("key", "the memory key", key), stated("recipient", "the teammate", handle)]
    text = f"send {handle} a message with just what your memory holds under {key}, nothing else"
    return Part(text, values, purpose="pass a note on")


@goal("workspace", 0.7)
def count_tests(ctx: Context) -> Part | None:
    count = ctx.run("list_files", directory="tests", pattern="test_*.py")["count"]
    return Part("tell me how many test files there are", [], [count], "size up the tests")


@goal("workspace")
def review_changes(ctx: Context) -> Part | None:
    """Which files changed so far: the diff read (only once something changed)."""
    env = _workspace(ctx)
    changed = sorted(path for path, text in env.files.items() if env.committed.get(path) != text)
    if not changed:
        return None
    ctx.run("git_diff")
    return Part("tell me which files have uncommitted changes now", [], changed, "review the changes")


@goal("workspace")
def schedule_tests(ctx: Context) -> Part | None:
    """A cron job for the tests at a stated schedule; its id is asked."""
    env, rng = _workspace(ctx), ctx.rng
    drawn = CronSchedule().draw(rng)
    mentions = [[kind, list(forms)] for kind, forms in drawn.stated()]
    schedule = {"slot": "schedule", "about": "when the job runs", "said": drawn.text, "mentions": mentions}
    command = choose(rng, ("pytest -q", "pytest tests", "pytest -x -q"))
    job = ctx.run("cron_create", schedule=str(drawn.accepted[0]), command=command)
    del env
    values = [schedule, stated("command", "the command the job runs", command, kind="quoted")]
    text = f"set up a cron job that runs `{command}` {drawn.text}, and tell me the job's id"
    return Part(text, values, [job["id"]], "run the tests on a schedule")


# -- conditions ---------------------------------------------------------------------------


@condition("workspace")
def suite_passes(ctx: Context) -> Probe | None:
    ctx.note("run_tests")
    return Probe("the test suite passes", [], _fixed(_workspace(ctx)))


@condition("workspace")
def file_longer_than(ctx: Context) -> Probe | None:
    env, rng = _workspace(ctx), ctx.rng
    function = choose(rng, sorted(env.functions))
    path = env.functions[function]
    ctx.note("run_shell", command=f"wc -l {path}")
    lines = env.files[path].count("\n")
    limit = max(2, lines + choose(rng, (-3, -1, 1, 3)) * between(rng, 1, 3))
    if limit == lines:
        raise Abandon("no threshold")
    values = [stated("path", "a file", path), stated("limit", "a line count", str(limit), kind="number")]
    return Probe(f"{path} has more than {limit} lines", values, lines > limit)


@condition("workspace")
def more_test_files_than(ctx: Context) -> Probe | None:
    rng = ctx.rng
    count = ctx.run("list_files", directory="tests", pattern="test_*.py")["count"]
    limit = max(1, count + choose(rng, (-1, 1)))
    if limit == count:
        raise Abandon("no threshold")
    value = stated("limit", "a number of files", str(limit), kind="number")
    return Probe(f"there are more than {limit} test files", [value], count > limit)
