"""Test equipment lives in tests/support: no runtime module (scoring/, tasks/, subnet/, neurons/)
imports it, and the runtime holds no test-equipment package."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ("scoring", "tasks", "subnet", "neurons")


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_runtime_module_imports_the_test_equipment() -> None:
    runtime = [path for folder in RUNTIME for path in sorted((ROOT / folder).rglob("*.py"))]
    assert len(runtime) > 100  # the walk found the packages
    offenders = [
        str(path.relative_to(ROOT))
        for path in runtime
        if any(name == "tests" or name.startswith("tests.") for name in _imported_modules(path))
    ]
    assert offenders == []


def test_the_test_equipment_lives_in_tests_support() -> None:
    assert not list((ROOT / "subnet").glob("testing/*.py"))  # (a checkout may keep its __pycache__)
    from tests.support.postgres import start_cluster
    from tests.support.simulation import start_simulated_subnet

    assert callable(start_cluster) and callable(start_simulated_subnet)
