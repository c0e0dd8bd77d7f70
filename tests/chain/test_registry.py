"""subnet.registry: every entry builds what it names, and every backend or phrasing engine written
is registered. A new backend or engine is its module and one entry; this names what was forgotten."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

from subnet.config import FLAGS_BY_NAME, ModelSettings, PhrasingSettings
from subnet.registry import BACKENDS, ENGINES, PluginMissing, engine_rewrites, engines_help, load

ROOT = Path(__file__).resolve().parents[2]

# What a class must have to serve as one (subnet.miner.base.Backend, tasks.phrasing.PhrasingEngine).
BACKEND_METHODS = ("start", "generate", "close", "describe")
ENGINE_METHODS = ("start", "close", "write", "solve")


def _classes_named(folder: str, suffix: str) -> set[str]:
    """``module:Class`` of the public classes in ``folder`` whose name ends in ``suffix``."""
    found = set()
    for path in sorted((ROOT / folder).rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.ClassDef)
                and node.name.endswith(suffix)
                and not node.name.startswith("_")
            ):
                found.add(f"{module}:{node.name}")
    return found


def _load(target: str) -> Any:
    try:
        loaded = load(target)
    except PluginMissing as missing:  # an optional extra not installed here
        pytest.skip(str(missing))
    assert inspect.isclass(loaded), f"{target} is not a class"
    return loaded


@pytest.mark.parametrize("name", list(BACKENDS))
def test_each_backend_entry_names_a_backend(name: str) -> None:
    backend = _load(BACKENDS[name].target)
    missing = [method for method in BACKEND_METHODS if not callable(getattr(backend, method, None))]
    assert not missing, f"{BACKENDS[name].target} lacks {missing} (subnet.miner.base.Backend)"
    assert list(inspect.signature(backend).parameters)[:1] == ["options"], "built with the ModelOptions"


@pytest.mark.parametrize("name", list(ENGINES))
def test_each_engine_entry_names_an_engine(name: str) -> None:
    entry = ENGINES[name]
    engine = _load(entry.target)
    missing = [method for method in ENGINE_METHODS if not callable(getattr(engine, method, None))]
    assert not missing, f"{entry.target} lacks {missing} (tasks.phrasing.PhrasingEngine)"
    assert engine.rewrites == entry.rewrites == engine_rewrites(name), (
        f"ENGINES[{name!r}].rewrites says {entry.rewrites}, its class says {engine.rewrites}"
    )
    assert len(inspect.signature(engine).parameters) >= 1, "built with the PhrasingSettings"


def test_every_backend_written_is_registered() -> None:
    written = _classes_named("subnet/miner", "Backend") - {"subnet.miner.base:Backend"}
    written = {target for target in written if target.split(":")[0].endswith("_backend")}
    registered = {entry.target for entry in BACKENDS.values()}
    assert written <= registered, (
        f"backends in no subnet.registry.BACKENDS entry: {sorted(written - registered)}"
    )


def test_every_engine_written_is_registered() -> None:
    written = _classes_named("subnet/phrasing", "Engine") | {"tasks.phrasing:TemplateEngine"}
    registered = {entry.target for entry in ENGINES.values()}
    assert written <= registered, (
        f"engines in no subnet.registry.ENGINES entry: {sorted(written - registered)}"
    )


def test_the_flags_offer_the_registries() -> None:
    engine = FLAGS_BY_NAME["phrasing.engine"]
    assert [engine.parse(name) for name in ENGINES] == list(ENGINES)
    assert engines_help() in engine.help and all(name in engine.help for name in ENGINES)
    assert PhrasingSettings().engine in ENGINES and ModelSettings().backend in BACKENDS
    assert [FLAGS_BY_NAME["model.backend"].parse(name) for name in BACKENDS] == list(BACKENDS)


def test_an_unregistered_name_is_no_engine_of_templates() -> None:
    # an old round's record names an engine since removed: it was a model, so it rewrote
    assert engine_rewrites("vllm") and not engine_rewrites("templates")


def test_a_missing_module_is_one_line() -> None:
    with pytest.raises(PluginMissing, match=r"^no_such_module:Thing: No module named 'no_such_module'$"):
        load("no_such_module:Thing")
