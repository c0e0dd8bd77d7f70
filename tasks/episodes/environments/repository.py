"""The workspace's repository, drawn per seed: its files, its functions and the one planted bug.

``draw_repository`` builds the in-memory repository: ``src/<package>/`` modules of a few
real-looking functions, a ``tests/test_<module>.py`` for each, a README and a ``pyproject.toml``;
``size`` multiplies the modules (about 8 files at size 1, a few hundred at size 30). The functions
are drawn from ``KINDS``, each with its test and the one-line bug that may be planted in it (an
off-by-one, a wrong operator or constant); exactly one function carries it, described by a
``PlantedBug`` with the message pytest gives while it is there (the simulated suite in
``shell.py`` reports it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from random import Random

from tasks.rand import between, choose, permute

__all__ = [
    "KINDS",
    "FunctionKind",
    "PlantedBug",
    "Repository",
    "draw_repository",
    "failure_message",
    "fill",
]

_NOUNS = (
    "invoice", "order", "user", "session", "token", "payment", "ticket", "report", "upload", "event",
    "message", "account", "shipment", "refund", "booking", "device", "job", "metric", "request", "label",
    "comment", "review", "coupon", "webhook", "license", "project", "task", "alert", "backup", "cart",
    "build", "deploy", "lease", "quota", "route", "price",
)  # fmt: skip
_STEMS = (
    "parser", "config", "client", "handlers", "schema", "routes", "cache", "auth", "retry", "metrics",
    "loader", "billing", "invoices", "orders", "users", "sessions", "payments", "reports", "uploads",
    "events", "notify", "search", "storage", "pricing", "inventory", "shipping", "audit", "limits",
    "webhooks", "exports",
)  # fmt: skip
_AREAS = ("api", "core", "jobs", "workers", "integrations", "admin", "internal", "web")
_PACKAGES = (
    ("ledger", "Invoicing and payments service."), ("orbit", "Job scheduler for batch workloads."),
    ("beacon", "Alerting and notification hub."), ("harbor", "Container image registry helpers."),
    ("quill", "Document rendering pipeline."), ("relay", "Webhook delivery service."),
    ("atlas", "Inventory and shipping backend."), ("tally", "Usage metering and quotas."),
    ("kestrel", "Booking engine for small clinics."), ("canopy", "Feature-flag service."),
)  # fmt: skip
_README = """# {package}

{description}

## Development

    pip install -e '.[dev]'
    pytest -q

## Layout

- `src/{package}/`: the package
- `tests/`: its tests (pytest)
"""
_PYPROJECT = """[project]
name = "{package}"
version = "{version}"
requires-python = ">=3.11"

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["src"]
"""


@dataclass(frozen=True)
class PlantedBug:
    """The one wrong line the workspace was built with, and how its test reports it."""

    path: str  # the source file
    function: str  # the function holding the bug
    test_path: str  # the test file exercising it
    test_name: str  # the failing test function
    fixed_line: str  # the correct line (the fix puts it back)
    buggy_line: str  # the wrong line (in the file as built)
    message: str  # pytest's failure message while the bug is there


# -- the code the tests check --------------------------------------------------------------------


@dataclass(frozen=True)
class FunctionKind:
    """A kind of function the repository is made of: its code and its test's body (``@NAME@`` and
    ``@NOUN@`` filled in), the line a planted bug replaces, the wrong line, and what the wrong code
    returns for the test's first assertion (for pytest's message)."""

    verbs: tuple[str, str]
    code: str
    test: str
    fixed: str
    buggy: str
    got: str


KINDS = (
    FunctionKind(
        ("clamp", "bound"),
        'def @NAME@(value: float, low: float, high: float) -> float:\n    """Clamp a @NOUN@ value."""\n'
        "    if value < low:\n        return low\n    if value > high:\n        return high\n"
        "    return value\n",
        "    assert @NAME@(5, 0, 10) == 5\n    assert @NAME@(-3, 0, 10) == 0\n"
        "    assert @NAME@(42, 0, 10) == 10\n",
        "    if value > high:",
        "    if value < high:",
        "10",
    ),
    FunctionKind(
        ("page_count", "pages_for"),
        'def @NAME@(total: int, per_page: int) -> int:\n    """Pages a listing of @NOUN@ records needs."""\n'
        '    if per_page <= 0:\n        raise ValueError("per_page must be positive")\n'
        "    return (total + per_page - 1) // per_page\n",
        "    assert @NAME@(10, 3) == 4\n    assert @NAME@(9, 3) == 3\n    assert @NAME@(0, 5) == 0\n",
        "    return (total + per_page - 1) // per_page",
        "    return total // per_page",
        "3",
    ),
    FunctionKind(
        ("recent", "latest"),
        'def @NAME@(items: list[str], count: int) -> list[str]:\n    """The last @NOUN@ entries."""\n'
        "    if count <= 0:\n        return []\n    return items[-count:]\n",
        '    assert @NAME@(["a", "b", "c"], 2) == ["b", "c"]\n    assert @NAME@(["a"], 0) == []\n',
        "    return items[-count:]",
        "    return items[-count + 1 :]",
        "['c']",
    ),
    FunctionKind(
        ("total", "sum"),
        'def @NAME@(start: int, end: int) -> int:\n    """Sum of the @NOUN@ ids from start to end."""\n'
        "    total = 0\n    for value in range(start, end + 1):\n        total += value\n    return total\n",
        "    assert @NAME@(1, 4) == 10\n    assert @NAME@(3, 3) == 3\n",
        "    for value in range(start, end + 1):",
        "    for value in range(start, end):",
        "6",
    ),
    FunctionKind(
        ("percent", "share"),
        'def @NAME@(part: float, whole: float) -> float:\n    """Share of @NOUN@ items in percent."""\n'
        "    if whole == 0:\n        return 0.0\n    return round(part / whole * 100, 1)\n",
        "    assert @NAME@(1, 4) == 25.0\n    assert @NAME@(3, 0) == 0.0\n",
        "    return round(part / whole * 100, 1)",
        "    return round(part / whole * 10, 1)",
        "2.5",
    ),
    FunctionKind(
        ("is_valid", "check"),
        'def @NAME@(code: str) -> bool:\n    """Whether a @NOUN@ code has 3 to 12 letters or dashes."""\n'
        "    if len(code) < 3 or len(code) > 12:\n        return False\n"
        '    return all(ch.isalnum() or ch == "-" for ch in code)\n',
        '    assert @NAME@("ab") is False\n    assert @NAME@("abc-123") is True\n',
        "    if len(code) < 3 or len(code) > 12:",
        "    if len(code) < 3 and len(code) > 12:",
        "True",
    ),
    FunctionKind(
        ("backoff", "retry_delay"),
        'def @NAME@(attempt: int, base: float = 0.5) -> float:\n    """Wait before a @NOUN@ retry."""\n'
        "    delay = base * 2**attempt\n    return min(delay, 60.0)\n",
        "    assert @NAME@(0) == 0.5\n    assert @NAME@(10) == 60.0\n",
        "    return min(delay, 60.0)",
        "    return max(delay, 60.0)",
        "60.0",
    ),
    FunctionKind(
        ("slug", "slugify"),
        'def @NAME@(title: str) -> str:\n    """A URL slug for a @NOUN@ title: lower case, dashes."""\n'
        '    words = title.strip().lower().split()\n    return "-".join(words)\n',
        '    assert @NAME@("Hello Big World") == "hello-big-world"\n    assert @NAME@("  x ") == "x"\n',
        '    return "-".join(words)',
        '    return "_".join(words)',
        "'hello_big_world'",
    ),
    FunctionKind(
        ("average", "mean"),
        'def @NAME@(values: list[float]) -> float:\n    """Mean of the @NOUN@ samples, 0.0 for none."""\n'
        "    if not values:\n        return 0.0\n    return sum(values) / len(values)\n",
        "    assert @NAME@([2.0, 4.0, 6.0]) == 4.0\n    assert @NAME@([]) == 0.0\n",
        "    return sum(values) / len(values)",
        "    return sum(values) / (len(values) - 1)",
        "6.0",
    ),
    FunctionKind(
        ("batches", "chunk"),
        'def @NAME@(items: list[int], size: int) -> list[list[int]]:\n    """Batches of @NOUN@ ids."""\n'
        "    return [items[i : i + size] for i in range(0, len(items), size)]\n",
        "    assert @NAME@([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]\n    assert @NAME@([], 3) == []\n",
        "    return [items[i : i + size] for i in range(0, len(items), size)]",
        "    return [items[i : i + size] for i in range(0, len(items) - 1, size)]",
        "[[1, 2], [3, 4]]",
    ),
    FunctionKind(
        ("is_overdue", "is_stale"),
        'def @NAME@(age_days: int, limit_days: int = 30) -> bool:\n    """Whether a @NOUN@ is overdue."""\n'
        "    return age_days > limit_days\n",
        "    assert @NAME@(30) is False\n    assert @NAME@(31) is True\n",
        "    return age_days > limit_days",
        "    return age_days >= limit_days",
        "True",
    ),
    FunctionKind(
        ("tax", "vat"),
        'def @NAME@(amount_cents: int) -> int:\n    """Tax on a @NOUN@ amount in cents, at 20%."""\n'
        "    return amount_cents * 20 // 100\n",
        "    assert @NAME@(1000) == 200\n    assert @NAME@(0) == 0\n",
        "    return amount_cents * 20 // 100",
        "    return amount_cents * 2 // 100",
        "20",
    ),
)
_ASSERT = re.compile(r"^\s*assert (.+) (==|is) (.+)$")


def fill(text: str, name: str, noun: str) -> str:
    """A kind's code or test with the function's name and noun put in."""
    return text.replace("@NAME@", name).replace("@NOUN@", noun)


def failure_message(name: str, kind: FunctionKind, test_path: str, test_line: int) -> str:
    """pytest's report of a planted bug's test (its first assertion fails)."""
    first = fill(kind.test, name, "").splitlines()[0]
    match = _ASSERT.match(first)
    assert match is not None, first
    call, operator, expected = match.groups()
    return (
        f"    def test_{name}() -> None:\n>   {first}\nE       assert {kind.got} {operator} {expected}\n"
        f"E        +  where {kind.got} = {call}\n\n{test_path}:{test_line}: AssertionError"
    )


# -- drawing the repository ----------------------------------------------------------------------


@dataclass
class _Module:
    """One drawn source module: where it lives, its test file and its functions."""

    path: str  # src/<package>/[<area>/]<stem>.py
    dotted: str  # <package>.[<area>.]<stem>
    test_path: str
    functions: list[tuple[str, FunctionKind, str]]  # (name, kind, noun)


def _function_names(rng: Random, count: int) -> list[tuple[str, FunctionKind, str]]:
    """``count`` distinct (name, kind, noun); past the pool's size names get a numeric suffix."""
    used: set[str] = set()
    drawn: list[tuple[str, FunctionKind, str]] = []
    while len(drawn) < count:
        for _ in range(8):
            kind, noun = choose(rng, KINDS), choose(rng, _NOUNS)
            name = f"{choose(rng, kind.verbs)}_{noun}"
            if name not in used:
                break
        else:
            name = f"{name}_{len(drawn)}"
        used.add(name)
        drawn.append((name, kind, noun))
    return drawn


def _modules(rng: Random, package: str, size: int) -> list[_Module]:
    """The source modules: top-level ones first, then ``<area>/`` ones once those run out."""
    stems = list(_STEMS)
    permute(rng, stems)
    nested = [f"{area}/{stem}" for area in _AREAS for stem in _STEMS]
    permute(rng, nested)
    slots = stems + nested
    count = min(between(rng, 2, 3) + 4 * (size - 1), len(slots))
    sizes = [between(rng, 2, 4) for _ in range(count)]
    names = iter(_function_names(rng, sum(sizes)))
    modules = []
    for inner, functions in zip(slots[:count], sizes, strict=True):
        area, _, stem = inner.rpartition("/")
        modules.append(
            _Module(
                f"src/{package}/{inner}.py",
                f"{package}.{inner.replace('/', '.')}",
                f"tests/{area}/test_{stem}.py" if area else f"tests/test_{stem}.py",
                [next(names) for _ in range(functions)],
            )
        )
    return modules


def _files(
    package: str, description: str, version: str, modules: list[_Module], buggy: str
) -> dict[str, str]:
    """The files of the repository as committed, the bug already in function ``buggy``."""
    files = {
        "README.md": _README.format(package=package, description=description),
        "pyproject.toml": _PYPROJECT.format(package=package, version=version),
        f"src/{package}/__init__.py": f'"""{description}"""\n\n__version__ = "{version}"\n',
    }
    for module in modules:
        area, _, stem = module.dotted.removeprefix(package + ".").rpartition(".")
        if area:
            files.setdefault(f"src/{package}/{area}/__init__.py", f'"""The {area} layer of {package}."""\n')
        nouns = ", ".join(sorted({noun for _, _, noun in module.functions}))
        imported = ", ".join(name for name, _, _ in module.functions)
        source = [
            f'"""{stem.capitalize()} helpers: {nouns} rules."""\n\nfrom __future__ import annotations\n'
        ]
        tests = [f'"""Tests of {module.dotted}."""\n\nfrom {module.dotted} import {imported}\n']
        for name, kind, noun in module.functions:
            code = fill(kind.code, name, noun)
            if name == buggy:
                code = code.replace(kind.fixed + "\n", kind.buggy + "\n", 1)
            source.append("\n" + code)
            tests.append(f"\ndef test_{name}() -> None:\n" + fill(kind.test, name, noun))
        files[module.path] = "\n".join(source)
        files[module.test_path] = "\n".join(tests)
    return files


@dataclass(frozen=True)
class Repository:
    """A drawn repository: its files as committed, where each function is defined, the bug."""

    files: dict[str, str]
    functions: dict[str, str]  # function name -> source path
    bug: PlantedBug


def draw_repository(rng: Random, size: int) -> Repository:
    """The repository of ``size`` (at least 1), one of its functions carrying the planted bug."""
    package, description = choose(rng, _PACKAGES)
    version = f"{between(rng, 0, 3)}.{between(rng, 0, 12)}.{between(rng, 0, 9)}"
    modules = _modules(rng, package, size)
    module = choose(rng, modules)
    name, kind, _ = choose(rng, module.functions)
    files = _files(package, description, version, modules, name)
    functions = {function: m.path for m in modules for function, _, _ in m.functions}
    test_line = 2 + files[module.test_path].splitlines().index(f"def test_{name}() -> None:")
    message = failure_message(name, kind, module.test_path, test_line)
    bug = PlantedBug(module.path, name, module.test_path, f"test_{name}", kind.fixed, kind.buggy, message)
    return Repository(files, functions, bug)
