"""Every tool of every environment, and of BFCL's classes, over hostile values (issue 26).

Sequences of calls with huge and negative numbers, superscripts and other scripts' digits, NaN,
infinity, NUL, 100 KB strings, traversal paths, regex bombs and hostile shell commands and
patches: ``dispatch`` never raises (``EnvironmentCorrupted`` is the one documented exception, and
no environment here ever needs it), every observation is JSON, a refused call leaves the state as
it was, and each call stays under a CPU budget. Deterministic (``derandomize``); the default run
is small, ``-m slow`` runs many more examples.
"""

from __future__ import annotations

import importlib.util
import json
import math
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasks.episodes.arguments import schema_error
from tasks.episodes.designs import DESIGNS, designed_class
from tasks.episodes.environment import Environment
from tasks.episodes.environments import drawn_environments, environment_class

CPU_S = 2.0  # per call, generous: the honest calls take well under a millisecond
BOMBS = ["a{0,60}a{0,60}a{0,60}a{0,60}b", ".{0,99}" * 5, "(a+)+$", "(a|aa)*c", "(a)\\1", "(?<!x)y", "[", "\\"]
SCRIPT_DIGITS = ["²", "¹", "³", "٣", "৩", "１", "Ⅻ", "½"]
TRAVERSALS = [
    "../../etc/passwd",
    "/etc/passwd",
    "~/.ssh/id_rsa",
    "src/../../x",
    "..",
    ".",
    "",
    "a\\b",
    "\x00",
]
HUGE = 10**400

_strings = st.one_of(
    st.sampled_from(
        SCRIPT_DIGITS + TRAVERSALS + BOMBS + ["NaN", "inf", "-1", "9" * 401, "\ud800", "README.md"]
    ),
    st.builds(
        lambda char, size: char * size,
        st.sampled_from(["a", "\x00", "²", "\n", "é", "x\n"]),
        st.integers(0, 100_000),
    ),
    st.text(max_size=40),
)
_numbers = st.one_of(
    st.sampled_from([HUGE, -HUGE, 2**63, -(2**63), 0, -1, 1, 10**18]),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, 0.1]),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
)
_scalars = st.one_of(_strings, _numbers, st.booleans(), st.none())
_values = st.one_of(
    _scalars, st.lists(_scalars, max_size=4), st.dictionaries(st.text(max_size=5), _scalars, max_size=3)
)


@st.composite
def _commands(draw: st.DrawFn) -> str:
    """Shell commands a hostile miner would try on the workspace."""
    word = draw(st.sampled_from(["README.md", "src", "tests", ".", "*", "f", "-r", "-n", "-c", "-l"]))
    number = draw(st.sampled_from(["²", "³", "٣", "-1", "0", "9" * 30, "9" * 401, "5"]))
    bomb = draw(st.sampled_from(BOMBS))
    many = " ".join(draw(st.sampled_from(["README.md", "src", "pyproject.toml"])) for _ in range(300))
    return draw(
        st.sampled_from(
            [
                f"head -n {number} README.md",
                f"head -{number} README.md",
                f"tail -{number} README.md",
                f"tail -n {number} {word}",
                f"grep -rE '{bomb}' {word}",
                f"grep -rcE '{bomb}' .",
                f"grep -rw '{bomb}' src",
                f"cat {many}",
                f"ls {many}",
                f"wc -l {many}",
                f"grep -c x {many}",
                f"git diff {word}",
                f"pytest {word} -k {number}",
                "cat ../../etc/passwd",
                "rm -rf /",
            ]
        )
    )


@st.composite
def _patches(draw: st.DrawFn) -> str:
    """Unified diffs with hostile headers, counts and sizes."""
    path = draw(st.sampled_from(["f", "README.md", "../x", "/etc/passwd", "a" * 400, "src", "f/g"]))
    start = draw(st.sampled_from(["0", "1", "999999999", "9" * 20, "²", "٣"]))
    lines = draw(st.sampled_from([1, 3, 1_000, 40_000]))
    body = "".join("+x\n" for _ in range(lines))
    return draw(
        st.sampled_from(
            [
                f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{lines} @@\n{body}",
                f"--- a/{path}\n+++ b/{path}\n@@ -{start},{lines} +{start},{lines} @@\n" + " x\n" * lines,
                f"--- a/README.md\n+++ b/README.md\n@@ -{start} +{start} @@\n-x\n+y\n",
                "".join(
                    f"--- /dev/null\n+++ b/d/{index}\n@@ -0,0 +1 @@\n+x\n" for index in range(lines % 500)
                ),
            ]
        )
    )


def _argument(name: str, spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Hostile values for one parameter: mostly of its JSON type (as the runner lets through),
    sometimes anything."""
    kind = spec.get("type")
    if name == "command":
        typed: st.SearchStrategy[Any] = st.one_of(_commands(), _strings)
    elif name == "patch":
        typed = st.one_of(_patches(), _strings)
    elif name == "schedule":
        typed = st.one_of(
            st.sampled_from(
                ["*/² * * * *", "¹ * * * *", "*/0 * * * *", "*/" + "9" * 401 + " * * * *", "@daily"]
            ),
            _strings,
        )
    elif kind == "string":
        typed = _strings
    elif kind in ("integer", "number"):
        typed = _numbers
    elif kind == "boolean":
        typed = st.booleans()
    elif kind == "array":
        typed = st.lists(_scalars, max_size=30)
    else:
        typed = _values
    return st.one_of(typed, typed, typed, _values)


def _calls(env: Environment) -> st.SearchStrategy[list[tuple[str, dict[str, Any]]]]:
    tools = env.tools()

    @st.composite
    def one(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
        name = draw(st.sampled_from(sorted(tools)))
        properties = tools[name].parameters.get("properties") or {}
        arguments = {
            key: draw(_argument(key, spec))
            for key, spec in properties.items()
            if key in (tools[name].parameters.get("required") or ()) or draw(st.booleans())
        }
        return name, arguments

    return st.lists(one(), min_size=1, max_size=6)


def _play(env: Environment, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """Each call: no exception, a JSON observation, under the CPU budget; a refused call changes
    nothing."""
    tools = env.tools()
    for name, arguments in calls:
        before = env.fingerprint()
        if schema_error(arguments, tools[name].parameters) is None:  # what the runner lets through
            env.forbidden(name, arguments)  # the safety check reads the same values: it must not raise
        started = time.process_time()
        observation = env.dispatch(name, arguments)
        spent = time.process_time() - started
        assert spent < CPU_S, f"{name} used {spent:.2f} s of CPU"
        json.dumps(observation, allow_nan=True)
        if isinstance(observation, dict) and "error" in observation:
            assert env.fingerprint() == before, f"{name} was refused but changed the state"


_FUZZ = settings(
    derandomize=True,
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
_FUZZ_MORE = settings(_FUZZ, max_examples=400)


def _generated(name: str, data: st.DataObject) -> None:
    env = environment_class(name)(b"fuzz", data.draw(st.integers(1, 3)))
    env.begin_turn()
    _play(env, data.draw(_calls(env)))


@pytest.mark.parametrize("name", drawn_environments())
@_FUZZ
@given(data=st.data())
def test_every_tool_survives_hostile_values(name: str, data: st.DataObject) -> None:
    _generated(name, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", drawn_environments())
@_FUZZ_MORE
@given(data=st.data())
def test_every_tool_survives_hostile_values_at_length(name: str, data: st.DataObject) -> None:
    _generated(name, data)


_HAVE_BFCL = importlib.util.find_spec("bfcl_eval") is not None
_BFCL_CLASSES = (
    [
        "GorillaFileSystem",
        "MathAPI",
        "MessageAPI",
        "TwitterAPI",
        "TicketAPI",
        "TradingBot",
        "TravelAPI",
        "VehicleControlAPI",
    ]
    if _HAVE_BFCL
    else []
)


def _bfcl(class_name: str, data: st.DataObject) -> None:
    from tasks.episodes.bfcl import BfclEnvironment

    env = BfclEnvironment({"involved_classes": [class_name], "initial_config": {}})
    _play(env, data.draw(_calls(env)))


@pytest.mark.skipif(not _HAVE_BFCL, reason="bfcl-eval is not installed")
@pytest.mark.parametrize("class_name", _BFCL_CLASSES)
@_FUZZ
@given(data=st.data())
def test_every_bfcl_tool_survives_hostile_values(class_name: str, data: st.DataObject) -> None:
    _bfcl(class_name, data)


@pytest.mark.slow
@pytest.mark.skipif(not _HAVE_BFCL, reason="bfcl-eval is not installed")
@pytest.mark.parametrize("class_name", _BFCL_CLASSES)
@_FUZZ_MORE
@given(data=st.data())
def test_every_bfcl_tool_survives_hostile_values_at_length(class_name: str, data: st.DataObject) -> None:
    _bfcl(class_name, data)


_DESIGNED = [(name, design) for name in drawn_environments() for design in DESIGNS if design != "canonical"]


def _designed(name: str, design: str, data: st.DataObject) -> None:
    env = designed_class(name, design)(b"fuzz", data.draw(st.integers(1, 3)))
    env.begin_turn()
    _play(env, data.draw(_calls(env)))  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "design"), _DESIGNED)
@settings(_FUZZ, max_examples=8)
@given(data=st.data())
def test_every_design_tool_survives_hostile_values(name: str, design: str, data: st.DataObject) -> None:
    """A design's tools (an action parameter, pages, gets by key, filters) over the same hostile
    values: an observation, never an exception; a refused call changes nothing."""
    _designed(name, design, data)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "design"), _DESIGNED)
@_FUZZ_MORE
@given(data=st.data())
def test_every_design_tool_survives_hostile_values_at_length(
    name: str, design: str, data: st.DataObject
) -> None:
    _designed(name, design, data)
