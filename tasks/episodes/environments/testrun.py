"""The workspace's simulated test runner: nothing runs.

The tests are the ``def test_*`` functions of ``tests/**/test_*.py``; one fails while the planted
bug's line (see ``repository.py``) is in its function, and a test whose import no longer
resolves errors. ``run_suite`` gives the run as data (the workspace's ``run_tests`` tool);
``pytest_lines`` as pytest's console output (the shell's ``pytest`` command).
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Mapping
from typing import Any

from tasks.episodes.environment import ToolError
from tasks.episodes.environments.patching import files_under, is_directory, normalise_path
from tasks.episodes.environments.repository import PlantedBug

__all__ = ["function_body", "pytest_lines", "run_suite"]


def function_body(content: str, name: str) -> list[str] | None:
    """The lines of the top-level function ``name`` (its ``def`` to the next top-level line)."""
    lines = content.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f"def {name}(")), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and (not lines[end] or lines[end][0] in " \t)"):
        end += 1
    return [line.rstrip() for line in lines[start:end]]


# -- the simulated test suite --------------------------------------------------------------------

_TEST = re.compile(r"^(?:async )?def (test_\w+)\(", re.MULTILINE)
_WORD = re.compile(r"\w+")
_DOTTED = re.compile(r"\w+(?:\.\w+)*")


def _imports(content: str) -> list[tuple[str, list[str]]]:
    """The ``from MODULE import a, b`` lines of a test file (split by hand: no regular expression
    that could backtrack over a long line)."""
    found = []
    for line in content.splitlines():
        if not line.startswith("from ") or " import " not in line:
            continue
        head, _, tail = line[5:].partition(" import ")
        names = [name.strip() for name in tail.strip().strip("()").split(",")]
        if _DOTTED.fullmatch(head.strip()) and all(_WORD.fullmatch(name) for name in names):
            found.append((head.strip(), names))
    return found


#: A top-level definition: ``def NAME(``, ``class NAME`` or ``NAME =`` / ``NAME:`` at a line's start.
_DEFINITION = re.compile(r"^(?:def (\w+)\(|class (\w+)\b|(\w+)\s*[:=])", re.MULTILINE)


def _definitions(content: str) -> frozenset[str]:
    """Every name a module defines at top level, read in one pass (a test file may import
    thousands of names from one large module; searching the module once per name is quadratic)."""
    return frozenset(next(name for name in match.groups() if name) for match in _DEFINITION.finditer(content))


def _import_problem(
    files: Mapping[str, str], content: str, defined: dict[str, frozenset[str]] | None = None
) -> str | None:
    """Why a test file's imports from the project fail (a module or a name gone), or None;
    ``defined`` keeps each module's definitions across the test files of one run."""
    defined = {} if defined is None else defined
    for module, names in _imports(content):
        path = "src/" + module.replace(".", "/") + ".py"
        package = "src/" + module.split(".")[0]
        if path not in files:
            if is_directory(files, package):
                return f"ModuleNotFoundError: No module named '{module}'"
            continue  # a third-party import (pytest): always there
        if path not in defined:
            defined[path] = _definitions(files[path])
        for name in names:
            if name not in defined[path]:
                return f"ImportError: cannot import name '{name}' from '{module}' ({path})"
    return None


def _is_test_file(path: str) -> bool:
    return path.startswith("tests/") and fnmatch.fnmatchcase(posixpath.basename(path), "test_*.py")


def bug_present(files: Mapping[str, str], bug: PlantedBug) -> bool:
    """Whether the planted bug is still in its function (the fix restores the correct line)."""
    body = function_body(files.get(bug.path, ""), bug.function)
    return body is None or bug.buggy_line in body or bug.fixed_line not in body


def _outcomes(
    files: Mapping[str, str], bug: PlantedBug | None, path: str | None, keyword: str | None
) -> list[tuple[str, str | None]]:
    """(node id, failure message or None) of every selected test, in collection order."""
    target, selector = "", ""
    if path:
        raw, _, selector = path.partition("::")
        target = normalise_path(raw)
    chosen = [name for name in files_under(files, target) if _is_test_file(name)]
    if target and not chosen and target not in files and not is_directory(files, target):
        raise ToolError(f"ERROR: file or directory not found: {path}")
    outcomes: list[tuple[str, str | None]] = []
    defined: dict[str, frozenset[str]] = {}
    for test_file in chosen:
        content = files[test_file]
        problem = _import_problem(files, content, defined)
        for name in _TEST.findall(content):
            if (selector and name != selector) or (keyword and keyword not in name):
                continue
            message = problem
            if message is None and bug is not None and name == f"test_{bug.function}":
                imported = any(
                    "src/" + module.replace(".", "/") + ".py" == bug.path for module, _ in _imports(content)
                )
                if imported and bug_present(files, bug):
                    message = bug.message
            outcomes.append((f"{test_file}::{name}", message))
    return outcomes


def _summary(passed: int, failed: int) -> str:
    parts = [f"{failed} failed"] if failed else []
    if passed or not failed:
        parts.append(f"{passed} passed")
    return ", ".join(parts) if passed + failed else "no tests ran"


def run_suite(
    files: Mapping[str, str], bug: PlantedBug | None, path: str | None = None, keyword: str | None = None
) -> dict[str, Any]:
    """The simulated pytest report: counts, the failing tests and their messages (exit code as
    pytest's: 0 all passed, 1 some failed, 5 none collected)."""
    outcomes = _outcomes(files, bug, path, keyword)
    failures = [{"test": node, "message": message} for node, message in outcomes if message is not None]
    passed = len(outcomes) - len(failures)
    exit_code = 5 if not outcomes else (1 if failures else 0)
    report: dict[str, Any] = {
        "exit_code": exit_code,
        "collected": len(outcomes),
        "passed": passed,
        "failed": len(failures),
        "failures": failures[:50],
        "summary": _summary(passed, len(failures)),
    }
    return report


def _headline(message: str) -> str:
    """The line of a failure message that says what went wrong (pytest's ``E`` line)."""
    lines = message.splitlines()
    return next((line[1:].strip() for line in lines if line.startswith("E ")), lines[0] if lines else "")


def pytest_lines(
    files: Mapping[str, str], bug: PlantedBug | None, path: str | None, keyword: str | None
) -> tuple[list[str], int]:
    """pytest's console output for the same run, and its exit code."""
    outcomes = _outcomes(files, bug, path, keyword)
    lines = [f"collected {len(outcomes)} items", ""]
    by_file: dict[str, str] = {}
    for node, message in outcomes:
        test_file = node.split("::", 1)[0]
        by_file[test_file] = by_file.get(test_file, "") + ("." if message is None else "F")
    lines.extend(f"{test_file} {marks}" for test_file, marks in by_file.items())
    failures = [(node, message) for node, message in outcomes if message is not None]
    if failures:
        lines.append("=" * 30 + " FAILURES " + "=" * 30)
        for node, message in failures[:20]:
            lines.extend((f"___ {node.split('::')[-1]} ___", message))
        lines.append("=" * 20 + " short test summary info " + "=" * 20)
        lines.extend(f"FAILED {node} - {_headline(message)}" for node, message in failures)
    lines.append(f"{'=' * 10} {_summary(len(outcomes) - len(failures), len(failures))} {'=' * 10}")
    exit_code = 5 if not outcomes else (1 if failures else 0)
    return lines, exit_code
