"""Module names that say one thing.

Four modules were called ``engine`` (request batching, the episode runner, the database, the
phrasing engines), three ``values.py`` held unrelated things, and the function ``tasks.phrasing.verify``
hid its own module ``tasks/phrasing/verify.py`` (``import tasks.phrasing.verify`` then gave a
function). A benchmark called bench/scoring.py hid the package ``scoring`` from every script in
bench/ (a script's folder comes first on ``sys.path``): seven of them stopped with an ImportError
when run as their docs say. These checks keep such names from coming back.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ("scoring", "tasks", "subnet")

# A stem that several unrelated modules used; each got a name that says what it holds.
VAGUE_STEMS = {
    "engine": "say what it runs: continuous_batching, runner, connection (subnet/phrasing holds the engines)",
    "values": "say which values: value_check, value_generators, flag_types",
    "phrasing": "phrasing is two packages (tasks/phrasing: the stage; subnet/phrasing: the engines)",
}


def _runtime_modules() -> list[Path]:
    return sorted(path for top in RUNTIME for path in (ROOT / top).rglob("*.py"))


def test_no_runtime_module_has_a_vague_name() -> None:
    vague = [
        f"{path.relative_to(ROOT)}: {VAGUE_STEMS[path.stem]}"
        for path in _runtime_modules()
        if path.stem in VAGUE_STEMS
    ]
    assert vague == []


def test_no_bench_script_has_the_name_of_a_project_package() -> None:
    """bench/ is first on ``sys.path`` when one of its scripts runs: a module there named like a
    package of the project would be imported in that package's place."""
    tops = {path.name for path in ROOT.iterdir() if (path / "__init__.py").is_file()} | set(RUNTIME)
    bench = ROOT / "bench"
    names = {path.stem for path in bench.glob("*.py")} | {
        path.name for path in bench.iterdir() if (path / "__init__.py").is_file()
    }
    assert "redteam_kit" in names and "integrity" in names  # it looked where the scripts are
    assert sorted(names & tops) == []


def _packages() -> list[str]:
    names = list(RUNTIME)
    for top in RUNTIME:
        package = importlib.import_module(top)
        names += [info.name for info in pkgutil.walk_packages(package.__path__, f"{top}.") if info.ispkg]
    return names


def test_no_package_attribute_shadows_one_of_its_modules() -> None:
    shadowed = []
    for name in _packages():
        package = importlib.import_module(name)
        for module in pkgutil.iter_modules(package.__path__):
            value = package.__dict__.get(module.name)
            if value is not None and not isinstance(value, types.ModuleType):
                shadowed.append(f"{name}.{module.name} is a {type(value).__name__}, not the module")
    assert shadowed == []


def test_the_checks_see_the_modules_they_guard() -> None:
    """Guards against a check that passes because it looked nowhere."""
    stems = {path.stem for path in _runtime_modules()}
    assert {"continuous_batching", "runner", "connection", "value_check", "value_generators"} <= stems
    assert {"tasks.phrasing", "subnet.phrasing", "subnet.miner"} <= set(_packages())
