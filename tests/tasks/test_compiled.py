"""The compiled generator (tasks.compiled): when a build may run, how it is found and loaded,
how a build is made and checked, and the command line around it.

Everything but the last test runs without a C compiler: builds are fake folders, and mypyc's run
and the output check are replaced where a test makes a build. The last test compiles for real
(about a minute) and is slow.
"""

from __future__ import annotations

import importlib.machinery
import json
import logging
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from subnet.tasks_cli import main
from tasks import compiled

SUFFIX = compiled._extension_suffix()
ROOT = compiled.source_root()


def _root(tmp_path: Path) -> Path:
    """A small source tree with the two packages a build depends on."""
    root = tmp_path / "src"
    for package in compiled.SOURCE_PACKAGES:
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text(f'"""{package}"""\n')
    (root / "tasks" / "builtin.py").write_text("X = 1\n")
    return root


def _fake_build(folder: Path, root: Path, **changes: Any) -> dict[str, Any]:
    """A build folder as ``build`` leaves it, with placeholder files for the extensions."""
    modules = {name: compiled._module_path(name).as_posix() + SUFFIX for name in compiled.MODULES}
    shared = {"abc__mypyc": "abc__mypyc" + SUFFIX}
    for relative in (*modules.values(), *shared.values()):
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(b"not an extension")
    manifest = {
        "format": 1,
        "python": compiled._python_tag(),
        "modules_built": list(compiled.MODULES),
        "fingerprint": compiled.fingerprint(root),
        "modules": modules,
        "shared": shared,
        **changes,
    }
    (folder / compiled.MANIFEST).write_text(json.dumps(manifest))
    return manifest


def _built(tmp_path: Path) -> tuple[Path, Path]:
    """(a small source tree, a fake build of it that ``check`` accepts)."""
    root = _root(tmp_path)
    folder = tmp_path / "build"
    _fake_build(folder, root)
    return root, folder


@pytest.fixture
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """``install`` as if it had not run in this process, and no finder left behind."""
    monkeypatch.setattr(compiled, "_STATE", None)
    monkeypatch.setattr(compiled, "_FINDER", None)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.delenv("SUBNET_COMPILED", raising=False)
    monkeypatch.delenv("SUBNET_COMPILED_DIR", raising=False)


# --- whether a build may run ------------------------------------------------------------------


def test_a_matching_build_may_run_and_every_kind_of_mismatch_says_why(tmp_path: Path) -> None:
    root = _root(tmp_path)
    folder = tmp_path / "build"
    missing = compiled.check(folder, root)
    assert not missing.active and "no compiled build" in missing.reason and missing.folder is None

    _fake_build(folder, root)
    assert compiled.check(folder, root).active

    (root / "scoring" / "new.py").write_text("Y = 2\n")  # any file of either package counts
    assert "made from other sources" in compiled.check(folder, root).reason
    (root / "scoring" / "new.py").unlink()
    (root / "tasks" / "builtin.py").write_text("X = 2\n")
    assert "made from other sources" in compiled.check(folder, root).reason
    (root / "tasks" / "builtin.py").write_text("X = 1\n")
    assert compiled.check(folder, root).active

    _fake_build(folder, root, python="cpython-39.cpython-39-x86_64-linux-gnu.so")
    assert "for another Python" in compiled.check(folder, root).reason
    _fake_build(folder, root, modules_built=["tasks.shuffle"])
    assert "another set of modules" in compiled.check(folder, root).reason
    _fake_build(folder, root)
    (folder / ("abc__mypyc" + SUFFIX)).unlink()
    assert "lacks files (abc__mypyc)" in compiled.check(folder, root).reason
    (folder / compiled.MANIFEST).write_text("{not json")
    unusable = compiled.check(folder, root)
    assert not unusable.active and "unusable" in unusable.reason and unusable.folder == folder
    (folder / compiled.MANIFEST).write_text(json.dumps({"format": 99}))
    assert "not one this version writes" in compiled.check(folder, root).reason


def test_the_fingerprint_covers_paths_and_bytes_of_both_packages(tmp_path: Path) -> None:
    root = _root(tmp_path)
    first = compiled.fingerprint(root)
    (root / "tasks" / "builtin.py").rename(root / "tasks" / "other.py")  # same bytes, another path
    assert compiled.fingerprint(root) != first
    (root / "tasks" / "other.py").rename(root / "tasks" / "builtin.py")
    assert compiled.fingerprint(root) == first
    (root / "tasks" / "notes.txt").write_text("not a source")
    assert compiled.fingerprint(root) == first


# --- install ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("fresh_state")
def test_install_is_off_with_the_switch_and_silent_without_a_build(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUBNET_COMPILED", "0")
    assert compiled.install(tmp_path / "build", _root(tmp_path)) == compiled.State(
        False, "Python modules: SUBNET_COMPILED=0"
    )
    monkeypatch.setattr(compiled, "_STATE", None)
    monkeypatch.delenv("SUBNET_COMPILED")
    with caplog.at_level(logging.WARNING, logger="tasks.compiled"):
        found = compiled.install(tmp_path / "build", tmp_path / "src")
    assert not found.active and "no compiled build" in found.reason
    assert caplog.records == []  # nothing built: nothing to warn about
    assert compiled.install() is found  # once per process


@pytest.mark.usefixtures("fresh_state")
def test_a_stale_build_is_one_warning_and_the_python_modules(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root, folder = _built(tmp_path)
    (root / "tasks" / "builtin.py").write_text("X = 3\n")
    before = list(sys.meta_path)
    with caplog.at_level(logging.WARNING, logger="tasks.compiled"):
        found = compiled.install(folder, root)
    assert not found.active and found.reason.startswith("Python modules: the build in")
    assert [record.getMessage() for record in caplog.records] == [
        f"the build in {folder} was made from other sources (tasks/ or scoring/ changed since); "
        "running the Python modules (`python -m tasks compile` rebuilds it)"
    ]
    assert sys.meta_path == before


@pytest.mark.usefixtures("fresh_state")
def test_a_fresh_build_is_not_loaded_over_modules_already_imported(tmp_path: Path) -> None:
    # This process has the Python generator modules loaded: mixing in compiled ones would run
    # two copies of each, so the build waits for the next process.
    root, folder = _built(tmp_path)
    before = list(sys.meta_path)
    found = compiled.install(folder, root)
    assert not found.active and "already imported (tasks.builtin" in found.reason
    assert sys.meta_path == before


@pytest.mark.usefixtures("fresh_state")
def test_a_fresh_build_in_a_process_that_has_not_imported_the_modules_puts_its_finder_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, folder = _built(tmp_path)
    for name in compiled.MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    found = compiled.install(folder, root)
    assert found.active and found.reason == f"compiled: {len(compiled.MODULES)} modules from {folder}"
    finder = sys.meta_path[0]
    assert finder is compiled._FINDER
    assert finder.files["tasks.shuffle"] == folder / f"tasks/shuffle{SUFFIX}"
    assert finder.files["abc__mypyc"] == folder / f"abc__mypyc{SUFFIX}"
    assert finder.sources == {
        "tasks.devices": str(root / "tasks" / "devices"),
        "tasks.rewrite": str(root / "tasks" / "rewrite"),
    }


# --- finding and settling ---------------------------------------------------------------------


def test_the_finder_gives_extensions_for_compiled_modules_and_sources_for_their_siblings(
    tmp_path: Path,
) -> None:
    files = {
        "tasks.devices": tmp_path / f"tasks/devices/__init__{SUFFIX}",
        "tasks.shuffle": tmp_path / f"tasks/shuffle{SUFFIX}",
    }
    finder = compiled._Finder(files, {"tasks.devices": str(ROOT / "tasks" / "devices")})
    package = finder.find_spec("tasks.devices")
    assert package is not None and package.origin == str(files["tasks.devices"])
    assert isinstance(package.loader, importlib.machinery.ExtensionFileLoader)
    assert package.submodule_search_locations == [str(ROOT / "tasks" / "devices")]
    module = finder.find_spec("tasks.shuffle")
    assert module is not None and module.submodule_search_locations is None
    # A module of a compiled package that is not compiled: from the package's source folder.
    sibling = finder.find_spec("tasks.devices.decoy")
    assert sibling is not None and sibling.origin == str(ROOT / "tasks" / "devices" / "decoy.py")
    assert finder.find_spec("tasks.categories") is None  # not compiled here: the usual finders
    assert finder.find_spec("json") is None


def test_settle_points_a_loaded_compiled_package_at_its_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    source = str(ROOT / "tasks" / "devices")
    package = types.ModuleType("fake.package")
    package.__path__ = ["/somewhere/build/fake/package"]
    package.__spec__ = importlib.machinery.ModuleSpec("fake.package", None, is_package=True)
    monkeypatch.setitem(sys.modules, "fake.package", package)
    monkeypatch.setattr(compiled, "_FINDER", compiled._Finder({}, {"fake.package": source}))
    compiled.settle()
    assert package.__path__ == [source]
    assert package.__spec__.submodule_search_locations == [source]


# --- building (mypyc's run replaced) -----------------------------------------------------------


def _fake_mypyc(monkeypatch: pytest.MonkeyPatch, status: int = 0) -> list[list[str]]:
    """mypyc's run replaced by one that leaves placeholder extensions where mypyc writes them."""
    calls: list[list[str]] = []

    def run(command: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        if status == 0:
            for name in compiled.MODULES:
                target = Path(cwd) / (compiled._module_path(name).as_posix() + SUFFIX)
                target.write_bytes(b"compiled " + name.encode())
            (Path(cwd) / f"abc__mypyc{SUFFIX}").write_bytes(b"shared")
        kwargs["stdout"].write("mypyc says hello\n")
        return subprocess.CompletedProcess(command, status)

    monkeypatch.setattr(compiled, "_preflight", lambda: None)
    monkeypatch.setattr(compiled.subprocess, "run", run)
    return calls


def _fake_digests(monkeypatch: pytest.MonkeyPatch, compiled_one: str, python_one: str) -> None:
    def digest(env: dict[str, str], cwd: Path) -> tuple[bool, int, str]:
        if env.get("SUBNET_COMPILED") == "0":
            return False, 0, python_one
        return True, len(compiled.MODULES), compiled_one

    monkeypatch.setattr(compiled, "_digest_in_process", digest)


def test_a_build_is_kept_only_when_it_generates_what_the_python_modules_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _root(tmp_path)
    for name in compiled.MODULES:  # the files mypyc is given must exist in the copy
        path = root / compiled._module_path(name).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n")
    folder = tmp_path / "out" / "compiled"
    calls = _fake_mypyc(monkeypatch)
    _fake_digests(monkeypatch, "same", "same")
    said: list[str] = []
    done = compiled.build(folder, root, say=said.append)
    assert done.active and done.folder == folder
    assert calls[0][1:3] == ["-m", "mypyc"] and "tasks/shuffle.py" in calls[0]
    assert "tasks/devices/__init__.py" in calls[0]
    manifest = json.loads((folder / compiled.MANIFEST).read_text())
    assert manifest["fingerprint"] == compiled.fingerprint(root)
    assert manifest["shared"] == {"abc__mypyc": f"abc__mypyc{SUFFIX}"}
    assert (folder / manifest["modules"]["tasks.devices"]).read_bytes() == b"compiled tasks.devices"
    assert said[0].startswith(f"compiling {len(compiled.MODULES)} modules with mypyc")
    assert sorted(path.name for path in folder.parent.iterdir()) == ["compiled"]  # no staging left

    # A build whose output differs is refused, and the build already there is kept as it was.
    (root / "tasks" / "builtin.py").write_text("X = 4\n")
    _fake_digests(monkeypatch, "other", "same")
    with pytest.raises(compiled.CompileError, match="generates other tasks than the Python modules"):
        compiled.build(folder, root, say=said.append)
    assert json.loads((folder / compiled.MANIFEST).read_text()) == manifest
    assert sorted(path.name for path in folder.parent.iterdir()) == ["compiled"]

    # So is one that a process did not load.
    monkeypatch.setattr(compiled, "_digest_in_process", lambda env, cwd: (False, 0, "same"))
    with pytest.raises(compiled.CompileError, match="did not load the build"):
        compiled.build(folder, root, say=said.append)
    assert json.loads((folder / compiled.MANIFEST).read_text()) == manifest


def test_a_failed_mypyc_run_keeps_its_log_and_the_old_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _root(tmp_path)
    folder = tmp_path / "out" / "compiled"
    old = _fake_build(folder, root)
    _fake_mypyc(monkeypatch, status=1)
    with pytest.raises(compiled.CompileError) as raised:
        compiled.build(folder, root, say=lambda line: None)
    log = folder.parent / "mypyc.log"
    assert str(raised.value) == f"mypyc failed (exit status 1); its output is in {log}"
    assert log.read_text() == "mypyc says hello\n"
    assert json.loads((folder / compiled.MANIFEST).read_text()) == old


def test_a_build_never_replaces_a_folder_that_holds_something_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _root(tmp_path)
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    calls = _fake_mypyc(monkeypatch)
    with pytest.raises(compiled.CompileError, match="exists and holds no compiled build"):
        compiled.build(folder, root, say=lambda line: None)
    assert calls == [] and (folder / "notes.txt").read_text() == "mine"


def test_a_build_that_cannot_be_written_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _root(tmp_path)
    (tmp_path / "taken").write_text("a file where the build folder's parent should be")
    _fake_mypyc(monkeypatch)
    folder = tmp_path / "taken" / "compiled"
    with pytest.raises(compiled.CompileError, match=f"^could not make the build in {folder}: "):
        compiled.build(folder, root, say=lambda line: None)


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("mypyc", "mypyc is not installed: it comes with mypy"),
        ("setuptools", "mypyc builds with setuptools, which is not installed"),
        ("compiler", "no C compiler: "),
    ],
)
def test_what_a_build_needs_is_checked_first_in_one_line(
    missing: str,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    real_find_spec = compiled.importlib.util.find_spec

    def find_spec(name: str) -> object:
        if name == missing:
            return None
        return object() if name in ("mypyc", "setuptools") else real_find_spec(name)

    monkeypatch.setattr(compiled.importlib.util, "find_spec", find_spec)
    if missing == "compiler":
        monkeypatch.setattr(compiled.shutil, "which", lambda name: None)
    monkeypatch.setenv("SUBNET_COMPILED_DIR", str(tmp_path / "build"))
    assert main(["compile"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tasks: error: {message}") and err.count("\n") == 1
    assert not (tmp_path / "build").exists()


# --- the command line -------------------------------------------------------------------------


def test_status_and_clean_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "build"
    monkeypatch.setenv("SUBNET_COMPILED_DIR", str(folder))
    monkeypatch.setenv("SUBNET_COMPILED", "0")
    assert main(["compile", "--status"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"no compiled build in {folder} (`python -m tasks compile` makes one)",
        "SUBNET_COMPILED=0 is set: processes with it run the Python modules",
    ]
    assert main(["compile", "--clean"]) == 0
    assert capsys.readouterr().out == f"no build in {folder}\n"
    _fake_build(folder, ROOT)
    assert main(["compile", "--status"]) == 0
    assert (
        capsys.readouterr().out.splitlines()[0] == f"compiled: {len(compiled.MODULES)} modules from {folder}"
    )
    assert main(["compile", "--clean"]) == 0
    assert capsys.readouterr().out == f"removed {folder}\n" and not folder.exists()
    assert main(["compile", "--status", "--clean"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err
    # A folder that holds no build (SUBNET_COMPILED_DIR may name any) is never removed.
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    assert main(["compile", "--clean"]) == 2
    assert capsys.readouterr().err == (
        f"tasks: error: {folder} holds no compiled build (no manifest.json); not removed\n"
    )
    assert (folder / "notes.txt").read_text() == "mine"


# --- a real build -----------------------------------------------------------------------------


def _can_compile() -> bool:
    try:
        compiled._preflight()
    except compiled.CompileError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _can_compile(), reason="needs mypyc, setuptools, a C compiler and Python's headers")
def test_a_real_build_loads_in_a_new_process_and_generates_the_same_tasks(tmp_path: Path) -> None:
    folder = tmp_path / "compiled"
    done = compiled.build(folder, say=lambda line: None)  # compares the output itself
    assert done.active
    env = {key: value for key, value in os.environ.items() if key != "SUBNET_COMPILED"}
    env["SUBNET_COMPILED_DIR"] = str(folder)
    script = (
        "import tasks, tasks.devices.decoy\n"
        "from tasks import compiled, generate\n"
        "generate('x', 50)\n"
        "print(compiled.state().active, len(compiled.running()), tasks.devices.__path__[0])\n"
        "print(tasks.shuffle.__file__)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert shown[0] == f"True {len(compiled.MODULES)} {ROOT / 'tasks' / 'devices'}"
    assert shown[1] == str(folder / f"tasks/shuffle{SUFFIX}")
    shutil.rmtree(folder)
