"""subnet.testing is test equipment: the runtime (subnet/, neurons/) never imports it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_runtime_module_imports_the_testing_package() -> None:
    runtime = [
        path
        for folder in ("subnet", "neurons")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "testing" not in path.relative_to(ROOT).parts
    ]
    assert len(runtime) > 20  # the walk found the package
    offenders = [
        str(path.relative_to(ROOT))
        for path in runtime
        if any(
            name == "subnet.testing" or name.startswith("subnet.testing.") for name in _imported_modules(path)
        )
    ]
    assert offenders == []


def test_the_test_equipment_lives_only_in_subnet_testing() -> None:
    assert not (ROOT / "subnet/validator/simulation.py").exists()
    assert not (ROOT / "subnet/db/pgcluster.py").exists()
    from subnet.testing.postgres import start_cluster
    from subnet.testing.simulation import start_simulated_subnet

    assert callable(start_cluster) and callable(start_simulated_subnet)
