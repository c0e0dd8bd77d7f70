"""The task generator's hot modules compiled with mypyc: the same code, run as C extensions.

Generating a task is pure Python spread thin over a few modules (the devices that state values,
template filling, description rewriting, tool_shuffle). mypyc, the compiler that comes with mypy,
turns those modules unchanged into C extensions that give the same tasks, byte for byte, for
about 30% fewer instructions (``bench/generation_cost.py``) and 1.3-1.7x the tasks per CPU second
(``bench/generation.py``). It is optional and off until built::

    .venv/bin/python -m tasks compile            # build/compiled/, a minute or two; needs a C compiler
    .venv/bin/python -m tasks compile --status   # which modules a process would run, and why
    .venv/bin/python -m tasks compile --clean    # remove the build

``build`` checks a new build before keeping it: a process running it must generate the same tasks,
variants and episodes as one running the Python modules (``tasks.digest``), or it is thrown away.

``import tasks`` imports this module first thing, and importing it runs ``install``. That loads
the compiled modules only when the build was made for this Python and from the sources exactly
as they are now: every ``.py`` file under ``tasks/`` and ``scoring/`` is fingerprinted, because
compiled code trusts the types of what it imports. After any edit the build is stale:
``install`` logs one warning and the Python modules run, so an edit never silently stops taking
effect. All or none: the compiled modules call each other directly, so one stale module would
still run through the others.

Environment: ``SUBNET_COMPILED=0`` runs the Python modules even where a fresh build exists (the
test suite sets it: its tests replace module attributes, which compiled callers do not see);
``SUBNET_COMPILED_DIR`` names another build folder.

Only the standard library is imported here: this module runs before any other of the package.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

__all__ = [
    "MODULES",
    "CompileError",
    "State",
    "build",
    "clean",
    "default_dir",
    "install",
    "settle",
    "state",
]

log = logging.getLogger(__name__)

#: The modules compiled, by where generation spends its time (profiles of ``generate`` and
#: ``variant``). Any other module, compiled or not, may be added: the build checks the output.
MODULES: tuple[str, ...] = (
    "tasks.builtin",
    "tasks.categories",
    "tasks.devices",
    "tasks.devices._choice",
    "tasks.devices._words",
    "tasks.devices.aside",
    "tasks.devices.attributed",
    "tasks.devices.compared",
    "tasks.devices.eliminated",
    "tasks.devices.revised",
    "tasks.devices.sequence",
    "tasks.filling",
    "tasks.rand",
    "tasks.rewrite",
    "tasks.seeding",
    "tasks.shuffle",
    "tasks.task_sets",
    "tasks.value_generators",
)

#: The packages whose sources a build depends on (what the compiled modules import, and mypyc
#: type-checks them against): any change to one of their files makes a build stale.
SOURCE_PACKAGES: tuple[str, ...] = ("tasks", "scoring")

MANIFEST = "manifest.json"
_MANIFEST_FORMAT = 1
#: The packages that are compiled as packages (their ``__init__``).
_PACKAGES = frozenset({"tasks.devices", "tasks.rewrite"})
_OFF_VALUES = frozenset({"0"})
_ENV_SWITCH = "SUBNET_COMPILED"
_ENV_DIR = "SUBNET_COMPILED_DIR"


class CompileError(Exception):
    """A build that cannot be made or kept: the message says why in one line."""


class State(NamedTuple):
    """Whether this process runs the compiled modules, and why (or why not), in words."""

    active: bool
    reason: str
    folder: Path | None = None


def source_root() -> Path:
    """The folder that holds the ``tasks`` and ``scoring`` packages."""
    return Path(__file__).resolve().parent.parent


def default_dir() -> Path:
    """Where builds go and are looked for: ``build/compiled`` beside the packages, unless
    ``SUBNET_COMPILED_DIR`` says otherwise."""
    named = os.environ.get(_ENV_DIR, "").strip()
    return Path(named) if named else source_root() / "build" / "compiled"


def _source_files(root: Path) -> list[Path]:
    return sorted(path for package in SOURCE_PACKAGES for path in (root / package).rglob("*.py"))


def fingerprint(root: Path) -> str:
    """SHA-256 over every source file a build depends on: relative paths and bytes."""
    digest = hashlib.sha256()
    for path in _source_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _module_path(name: str) -> Path:
    """``tasks.devices`` -> ``tasks/devices/__init__``, ``tasks.shuffle`` -> ``tasks/shuffle``
    (without a suffix)."""
    path = Path(*name.split("."))
    return path / "__init__" if name in _PACKAGES else path


def _extension_suffix() -> str:
    return str(sysconfig.get_config_var("EXT_SUFFIX") or importlib.machinery.EXTENSION_SUFFIXES[0])


def _python_tag() -> str:
    return f"{sys.implementation.cache_tag}{_extension_suffix()}"


# --- loading ---------------------------------------------------------------------------------


def settle() -> None:
    """Give each compiled package that is loaded its source folder as ``__path__``: mypyc sets
    the extension's folder, which holds no ``.py`` file (the finder finds their other modules
    either way; this is for anything that reads ``__path__``)."""
    finder = _FINDER
    if finder is None:
        return
    for name, source in finder.sources.items():
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__path__", None) != [source]:
            module.__path__ = [source]
            if module.__spec__ is not None:
                module.__spec__.submodule_search_locations = [source]


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the compiled modules (and mypyc's shared library) in the build, and every other
    module of a compiled package in the package's source folder."""

    def __init__(self, files: dict[str, Path], sources: dict[str, str]) -> None:
        self.files = files
        #: compiled package -> its source folder
        self.sources = sources

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        settle()
        file = self.files.get(fullname)
        if file is not None:
            source = self.sources.get(fullname)
            loader = importlib.machinery.ExtensionFileLoader(fullname, str(file))
            return importlib.util.spec_from_file_location(
                fullname, file, loader=loader, submodule_search_locations=[source] if source else None
            )
        parent = fullname.rpartition(".")[0]
        source = self.sources.get(parent)
        if source is not None:
            return importlib.machinery.PathFinder.find_spec(fullname, [source])
        return None


_STATE: State | None = None
_FINDER: _Finder | None = None


def _read_manifest(folder: Path) -> dict[str, Any] | None:
    """The build's manifest; None when there is no build. Raises ValueError when unreadable."""
    path = folder / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"its {MANIFEST} cannot be read ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != _MANIFEST_FORMAT:
        raise ValueError(f"its {MANIFEST} is not one this version writes")
    modules = manifest.get("modules")
    shared = manifest.get("shared")
    if not isinstance(modules, dict) or not isinstance(shared, dict):
        raise ValueError(f"its {MANIFEST} lists no modules")
    return manifest


def check(folder: Path, root: Path | None = None) -> State:
    """Whether the build in ``folder`` may run here (without loading anything)."""
    root = source_root() if root is None else root
    try:
        manifest = _read_manifest(folder)
    except ValueError as error:
        return State(False, f"the build in {folder} is unusable: {error}", folder)
    if manifest is None:
        return State(False, f"no compiled build in {folder} (`python -m tasks compile` makes one)", None)
    if manifest.get("python") != _python_tag():
        return State(
            False,
            f"the build in {folder} is for another Python "
            f"({manifest.get('python')}, this is {_python_tag()})",
            folder,
        )
    if manifest.get("modules_built") != list(MODULES):
        return State(False, f"the build in {folder} compiled another set of modules", folder)
    if manifest.get("fingerprint") != fingerprint(root):
        return State(
            False,
            f"the build in {folder} was made from other sources (tasks/ or scoring/ changed since)",
            folder,
        )
    names = {**manifest["modules"], **manifest["shared"]}
    missing = [name for name, relative in names.items() if not (folder / str(relative)).is_file()]
    if missing:
        return State(False, f"the build in {folder} lacks files ({', '.join(sorted(missing))})", folder)
    return State(True, f"compiled: {len(manifest['modules'])} modules from {folder}", folder)


def install(folder: Path | None = None, root: Path | None = None) -> State:
    """Load the compiled modules from then on where a fresh build allows it (see the module's
    text); once per process, before any module it replaces is imported. Never raises: a build
    that cannot run is a warning, and the Python modules run."""
    global _STATE, _FINDER
    if _STATE is not None:
        return _STATE
    if os.environ.get(_ENV_SWITCH, "").strip() in _OFF_VALUES:
        _STATE = State(False, f"Python modules: {_ENV_SWITCH}=0")
        return _STATE
    folder = default_dir() if folder is None else folder
    root = source_root() if root is None else root
    try:
        found = check(folder, root)
    except OSError as error:  # a source or build file that cannot be read
        found = State(False, f"the build in {folder} cannot be checked ({error})", folder)
    if not found.active:
        if found.folder is not None:
            log.warning(
                "%s; running the Python modules (`python -m tasks compile` rebuilds it)", found.reason
            )
        _STATE = State(False, f"Python modules: {found.reason}", found.folder)
        return _STATE
    already = sorted(name for name in MODULES if name in sys.modules)
    if already:
        _STATE = State(False, f"Python modules: already imported ({', '.join(already)})", folder)
        return _STATE
    manifest = _read_manifest(folder) or {}
    files = {
        name: folder / str(relative)
        for name, relative in {**manifest["modules"], **manifest["shared"]}.items()
    }
    sources = {name: str(root / Path(*name.split("."))) for name in MODULES if name in _PACKAGES}
    _FINDER = _Finder(files, sources)
    sys.meta_path.insert(0, _FINDER)
    _STATE = found
    return _STATE


def state() -> State:
    """What ``install`` decided for this process (running it when it has not run)."""
    return _STATE if _STATE is not None else install()


def running() -> list[str]:
    """The replaceable modules imported so far that are compiled (their file an extension)."""
    suffix = _extension_suffix()
    return [
        name
        for name in MODULES
        if name in sys.modules and str(getattr(sys.modules[name], "__file__", "")).endswith(suffix)
    ]


# --- checking a build ------------------------------------------------------------------------


_DIGEST_SCRIPT = (
    "from tasks import compiled\n"
    "from tasks.digest import output_digest\n"
    "digest = output_digest()\n"
    "print(compiled.state().active, len(compiled.running()), digest)\n"
)


def _digest_in_process(env: dict[str, str], cwd: Path) -> tuple[bool, int, str]:
    done = subprocess.run(
        [sys.executable, "-c", _DIGEST_SCRIPT], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise CompileError(f"generating with the build failed: {last}")
    active, count, digest = done.stdout.split()
    return active == "True", int(count), digest


# --- building --------------------------------------------------------------------------------


def _preflight() -> None:
    if importlib.util.find_spec("mypyc") is None:
        raise CompileError("mypyc is not installed: it comes with mypy (.venv/bin/pip install 'mypy>=1.10')")
    if importlib.util.find_spec("setuptools") is None:
        raise CompileError(
            "mypyc builds with setuptools, which is not installed (.venv/bin/pip install setuptools)"
        )
    compiler = str(sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        raise CompileError(
            f"no C compiler: {compiler!r} is not on PATH (install gcc, e.g. apt-get install gcc)"
        )
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not headers.is_file():
        raise CompileError(f"Python's C headers are missing ({headers}; e.g. apt-get install python3-dev)")


def build(
    folder: Path | None = None,
    root: Path | None = None,
    say: Callable[[str], None] = print,
) -> State:
    """Compile ``MODULES`` into ``folder`` (default ``default_dir()``), check that a process
    running the build generates what the Python modules generate, and keep it only then."""
    folder = default_dir() if folder is None else folder
    root = source_root() if root is None else root
    _preflight()
    if folder.exists() and not (folder / MANIFEST).is_file():
        # The old build is replaced (removed) at the end: never a folder that holds something else.
        raise CompileError(f"{folder} exists and holds no compiled build (no {MANIFEST}); name a new folder")
    try:
        return _build(folder, root, say)
    except OSError as error:  # an unwritable folder, a full disk, a file mypyc did not write
        raise CompileError(f"could not make the build in {folder}: {error}") from None


def _build(folder: Path, root: Path, say: Callable[[str], None]) -> State:
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging_parent = Path(tempfile.mkdtemp(prefix="compiled-", dir=folder.parent))
    try:
        staging = staging_parent / "src"
        before = fingerprint(root)
        for path in _source_files(root):
            target = staging / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        if fingerprint(staging) != before:
            raise CompileError("the sources changed while they were copied; run it again")
        files = [str(_module_path(name).with_suffix(".py")) for name in MODULES]
        log_path = staging_parent / "mypyc.log"
        say(f"compiling {len(MODULES)} modules with mypyc (a minute or two; output in {log_path})")
        env = {**os.environ, "MYPY_CACHE_DIR": str(staging_parent / "mypy-cache")}
        with log_path.open("w", encoding="utf-8") as out:
            done = subprocess.run(
                [sys.executable, "-m", "mypyc", *files],
                cwd=staging,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        if done.returncode != 0:
            kept = folder.parent / "mypyc.log"
            shutil.copyfile(log_path, kept)
            raise CompileError(f"mypyc failed (exit status {done.returncode}); its output is in {kept}")
        new = staging_parent / "build"
        suffix = _extension_suffix()
        modules: dict[str, str] = {}
        for name in MODULES:
            relative = _module_path(name).as_posix() + suffix
            (new / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(staging / relative, new / relative)
            modules[name] = relative
        shared = {}
        for library in staging.glob(f"*__mypyc{suffix}"):
            shutil.copyfile(library, new / library.name)
            shared[library.name[: -len(suffix)]] = library.name
        manifest = {
            "format": _MANIFEST_FORMAT,
            "python": _python_tag(),
            "modules_built": list(MODULES),
            "fingerprint": before,
            "modules": modules,
            "shared": shared,
        }
        (new / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        say("checking that the build generates what the Python modules generate")
        base_env = {key: value for key, value in os.environ.items() if key not in (_ENV_SWITCH, _ENV_DIR)}
        base_env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])
        active, count, compiled_digest = _digest_in_process({**base_env, _ENV_DIR: str(new)}, root)
        if not active or count != len(MODULES):
            raise CompileError(f"a process did not load the build ({count} of {len(MODULES)} compiled)")
        _, _, python_digest = _digest_in_process({**base_env, _ENV_SWITCH: "0"}, root)
        if compiled_digest != python_digest:
            raise CompileError("the build generates other tasks than the Python modules; it was not kept")
        if fingerprint(root) != before:
            raise CompileError("the sources changed during the build; run it again")
        old = staging_parent / "old"
        if folder.exists():
            folder.rename(old)
        new.rename(folder)
        return check(folder, root)
    finally:
        shutil.rmtree(staging_parent, ignore_errors=True)


def clean(folder: Path | None = None) -> bool:
    """Remove the build; whether there was one. A folder without a build's manifest is left as it
    is (``SUBNET_COMPILED_DIR`` may name any folder): removing it is refused in one line."""
    folder = default_dir() if folder is None else folder
    if not folder.exists():
        return False
    if not (folder / MANIFEST).is_file():
        raise CompileError(f"{folder} holds no compiled build (no {MANIFEST}); not removed")
    try:
        shutil.rmtree(folder)
    except OSError as error:
        raise CompileError(f"could not remove {folder}: {error}") from None
    return True


install()
