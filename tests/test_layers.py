"""The layers of the house, read from the code's imports.

scoring <- tasks <- subnet <- neurons: a runtime file imports only its own layer or a lower one,
no two files import each other in a loop (an import inside a function closes a loop as surely as
one at the top: it only runs later), and imports sit at the top of their module, except a heavy
optional package that is loaded on first use on purpose (:data:`LAZY_PACKAGES`).

Nothing is imported here: the files are parsed with :mod:`ast`, so the check also covers modules
whose optional packages are not installed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Bottom to top. A file may import its own layer or one below it. The entry points of ``python -m
# scoring`` and ``python -m tasks`` (their __main__.py) sit on top, as neurons/ does: they start the
# command lines, which live in subnet/.
LAYERS = ("scoring", "tasks", "subnet", "neurons")
ENTRY_POINTS = frozenset({"scoring/__main__.py", "tasks/__main__.py"})

# Packages imported inside functions on purpose, so that a process that never uses them neither
# waits for them nor needs them installed: heavy (torch and the model stacks of the [miner] extra,
# xgrammar; bittensor takes seconds to import and the devchain, evaluate and the scorer never need
# it) or optional (asyncpg for PostgreSQL only, uvloop where the platform has it). Top-level names.
LAZY_PACKAGES = frozenset(
    {
        "torch",
        "transformers",
        "xgrammar",
        "bittensor",
        "bittensor_core",
        "asyncpg",
        "uvloop",
    }
)

# Edges of loops not yet removed, so that any NEW loop still fails; none is left. The list only
# shrinks: the test fails while a listed edge no longer exists.
KNOWN_LOOP_EDGES: frozenset[tuple[str, str]] = frozenset()

# Imports that run up a layer, not yet removed (file, imported module). The list only shrinks.
KNOWN_UPWARD: frozenset[tuple[str, str]] = frozenset({})

# Imports inside functions not yet moved to the top of their module (file, imported module). The
# list only shrinks (the test fails when a listed import is gone, so it stays honest); it is empty.
KNOWN_LATE_IMPORTS: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class Import:
    source: str  # the importing file, relative to the root
    target: str  # the imported file, relative to the root
    module: str  # the module as written (resolved when relative)
    line: int
    late: bool  # inside a function or class body: runs on first call, not at import
    implied: bool = False  # an enclosing package's __init__, run before the module written

    def where(self) -> str:
        return f"{self.source}:{self.line}"


def _module_file(module: str) -> str | None:
    """The runtime file that module ``module`` is, or None when it is not one of ours."""
    if module.split(".")[0] not in LAYERS:
        return None
    base = ROOT.joinpath(*module.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py").relative_to(ROOT).as_posix()
    if (base / "__init__.py").is_file():
        return (base / "__init__.py").relative_to(ROOT).as_posix()
    return None


def _package_of(path: str) -> list[str]:
    parts = path.removesuffix(".py").split("/")
    return parts[:-1]  # a module's package; __init__'s package is its folder


def _walk(node: ast.AST, late: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, late
        inner = late or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef)
        yield from _walk(child, inner)


def imports_of(path: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, list[str]]]:
    """Every import statement in file ``path``, whether it is late, and the modules it names."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=path)
    package = _package_of(path)
    for node, late in _walk(tree, late=False):
        if isinstance(node, ast.Import):
            yield node, late, [alias.name for alias in node.names]
            continue
        if node.level:
            base = package[: len(package) - (node.level - 1)]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        # `from package import name`: the submodule when name is one, else the package itself.
        named = [f"{module}.{alias.name}" for alias in node.names]
        yield node, late, [name if _module_file(name) else module for name in named]


def runtime_files() -> list[str]:
    return sorted(
        path.relative_to(ROOT).as_posix() for layer in LAYERS for path in (ROOT / layer).rglob("*.py")
    )


def _outer_packages(module: str, source: str) -> list[tuple[str, str]]:
    """(package, its __init__ file) for each package enclosing ``module`` that does not also
    enclose ``source`` (inside its own package a file's import finds the __init__ already run)."""
    parts = module.split(".")
    found = []
    for end in range(1, len(parts)):
        package = ".".join(parts[:end])
        init = "/".join(parts[:end]) + "/__init__.py"
        if (ROOT / init).is_file() and not source.startswith("/".join(parts[:end]) + "/") and init != source:
            found.append((package, init))
    return found


@cache  # read once for all the tests here
def read_imports() -> tuple[tuple[Import, ...], tuple[tuple[str, int, str], ...]]:
    """Imports between runtime files, and the late imports of anything else (file, line, module)."""
    ours: list[Import] = []
    others: list[tuple[str, int, str]] = []
    for path in runtime_files():
        for node, late, modules in imports_of(path):
            for module in dict.fromkeys(modules):
                target = _module_file(module)
                if target is not None and target != path:
                    ours.append(Import(path, target, module, node.lineno, late))
                    # Python runs each enclosing package's __init__ first: a file outside such a
                    # package that the __init__ imports back is in a loop with it (the config
                    # package once re-exported the wallets, which import the config's modules).
                    for package in _outer_packages(module, path):
                        ours.append(Import(path, package[1], package[0], node.lineno, late, implied=True))
                elif target is None and late:
                    others.append((path, node.lineno, module))
    return tuple(ours), tuple(others)


def layer_of(path: str) -> int:
    return len(LAYERS) if path in ENTRY_POINTS else LAYERS.index(path.split("/")[0])


def loops(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one file (Tarjan, iterative)."""
    graph: dict[str, list[str]] = {}
    for source, target in sorted(edges):
        graph.setdefault(source, []).append(target)
        graph.setdefault(target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _describe(component: list[str], imports: tuple[Import, ...]) -> str:
    members = set(component)
    ties = sorted(
        {
            f"  {item.where()} imports {item.module}"
            for item in imports
            if {item.source, item.target} <= members
        }
    )
    return f"{len(component)} files: {', '.join(component)}\n" + "\n".join(ties)


def test_no_loops_between_files() -> None:
    imports, _ = read_imports()
    edges = {(item.source, item.target) for item in imports}
    missing = sorted(KNOWN_LOOP_EDGES - edges)
    assert not missing, f"KNOWN_LOOP_EDGES lists edges that are gone (take them off): {missing}"
    found = loops(edges - KNOWN_LOOP_EDGES)
    assert not found, "files that import each other in a loop:\n" + "\n".join(
        _describe(component, imports) for component in found
    )


def test_no_import_runs_up_a_layer() -> None:
    imports, _ = read_imports()
    found = [item for item in imports if layer_of(item.target) > layer_of(item.source)]
    gone = sorted(KNOWN_UPWARD - {(item.source, item.module) for item in found})
    assert not gone, f"KNOWN_UPWARD lists imports that are gone (take them off): {gone}"
    upward = sorted(
        f"{item.where()} ({item.source.split('/')[0]}) imports {item.module} ({item.target.split('/')[0]})"
        for item in found
        if (item.source, item.module) not in KNOWN_UPWARD
    )
    assert not upward, f"imports that run up a layer ({' <- '.join(LAYERS)}):\n" + "\n".join(upward)


def test_imports_sit_at_the_top() -> None:
    imports, others = read_imports()
    late = [(item.source, item.line, item.module) for item in imports if item.late and not item.implied] + [
        (path, line, module) for path, line, module in others if module.split(".")[0] not in LAZY_PACKAGES
    ]
    seen = {(path, module) for path, _, module in late}
    gone = sorted(KNOWN_LATE_IMPORTS - seen)
    assert not gone, f"KNOWN_LATE_IMPORTS lists imports that are gone (take them off): {gone}"
    new = sorted(
        f"{path}:{line} imports {module}"
        for path, line, module in late
        if (path, module) not in KNOWN_LATE_IMPORTS
    )
    assert not new, (
        "imports inside a function (move them to the top of the module; only a heavy optional package "
        "named in LAZY_PACKAGES is loaded late):\n" + "\n".join(new)
    )


def test_the_check_reads_what_it_should() -> None:
    """The reader itself: it finds a loop and resolves relative imports (a check that reads
    nothing passes everything)."""
    assert loops({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == [["a", "b", "c"]]
    assert loops({("a", "b"), ("b", "c")}) == []
    imports, _ = read_imports()
    assert len(imports) > 500
    assert any(item.late for item in imports) or not KNOWN_LATE_IMPORTS
    assert _module_file("scoring.formats") == "scoring/formats/__init__.py"
    assert _module_file("scoring.decoding") == "scoring/decoding.py"
    assert _module_file("json") is None
