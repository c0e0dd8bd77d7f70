"""No test reads a runtime attribute that only tests use.

A method, property or attribute kept in the runtime (scoring/, tasks/, subnet/, neurons/) only so
that a test can look inside is test equipment in the runtime: the test then holds a surface that no
operator and no other code sees, and the runtime carries code for it. Such a figure either matters
to an operator (then the runtime shows it, e.g. on ``/metrics``, and the test reads it there) or the
test asserts the behaviour through what the runtime does show.

The check reads names, not types (the syntax trees of every file): a name counts as *defined* in the
runtime when a class there defines it (a method, a property, a class-level field, ``self.NAME = ...``)
and as *read* where an attribute of that name is loaded (``obj.NAME``), a string ``"NAME"`` is handed
to ``getattr`` or a registry, a dashboard template names it, or a class writes itself out whole
(``asdict(self)``). A name defined in the runtime that tests read and the runtime never reads is
flagged. A name shared with another class that the runtime does read passes: the check is coarse on
purpose, and cheap.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ("scoring", "tasks", "subnet", "neurons")
# Read by the runtime but not defining what the check looks at: the migrations (they read the
# models), the dashboard's Jinja2 templates (they read the snapshot's fields).
READERS = ("migrations",)
TEMPLATE_SUFFIX = ".html"

# Names the runtime defines for callers outside it, that no runtime code needs to read back. Each
# needs a reason; keep this short.
ALLOWED: dict[str, str] = {
    # The devchain is a Substrate for the bittensor SDK (subnet/devchain/chain.py): the SDK calls these.
    "get_block": "bittensor's Substrate protocol (block headers)",
    "constant": "bittensor's Substrate protocol (runtime constants)",
    "account_next_index": "bittensor's Substrate protocol (a signer's nonce)",
    # The miner's replay store (subnet/transport/limits.py) is handed to bittensor.http_auth.verify.
    "check_and_store": "bittensor.http_auth's NonceStore protocol",
    # The readings on /metrics (subnet/metrics.py): prometheus_client calls it on each scrape.
    "collect": "prometheus_client's Collector protocol",
}


_WHOLE_READERS = frozenset({"asdict", "astuple", "vars"})


def _files(root: Path, *tops: str, suffix: str = ".py") -> Iterator[Path]:
    for top in tops:
        yield from sorted(path for path in (root / top).rglob("*") if path.suffix == suffix)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _class_members(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """(name, line) of what the module's classes define: methods, properties, class-level fields
    and attributes set on ``self`` in their methods."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        # A class that writes itself out whole (asdict(self), vars(self)) reads every field it has.
        whole = any(
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id in _WHOLE_READERS
            and any(isinstance(arg, ast.Name) and arg.id == "self" for arg in call.args)
            for call in ast.walk(node)
        )
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                yield item.name, item.lineno
                for inner in ast.walk(item):
                    targets: list[ast.expr] = []
                    if isinstance(inner, ast.Assign):
                        targets = inner.targets
                    elif isinstance(inner, ast.AnnAssign | ast.AugAssign):
                        targets = [inner.target]
                    for target in targets:
                        if (
                            isinstance(target, ast.Attribute)
                            and isinstance(target.value, ast.Name)
                            and target.value.id == "self"
                        ):
                            yield target.attr, inner.lineno
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and not whole:
                yield item.target.id, item.lineno
            elif isinstance(item, ast.Assign):
                for target in item.targets:
                    if isinstance(target, ast.Name):
                        yield target.id, item.lineno


def _reads(tree: ast.Module, *, strings: bool) -> set[str]:
    """Every attribute name the module reads (``obj.NAME``) and, with ``strings``, strings that look
    like names (``getattr(obj, "NAME")``, ``"module:NAME"`` registry entries, tool names a miner
    calls). A bare ``NAME`` is a local or a module's name, never a member: it does not count."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load | ast.Del):
            names.add(node.attr)
        elif strings and isinstance(node, ast.Constant) and type(node.value) is str and len(node.value) < 200:
            names.update(part for part in node.value.replace(":", ".").split(".") if part.isidentifier())
    return names


def _is_special(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def find_test_only_attributes(root: Path = ROOT) -> list[str]:
    """``path:line: NAME`` for each name defined in the runtime that tests read and it never does."""
    defined: dict[str, str] = {}
    runtime_reads: set[str] = set()
    for path in _files(root, *RUNTIME):
        tree = _tree(path)
        runtime_reads |= _reads(tree, strings=True)
        for name, line in _class_members(tree):
            defined.setdefault(name, f"{path.relative_to(root)}:{line}")
    for path in _files(root, *READERS):
        runtime_reads |= _reads(_tree(path), strings=True)
    for path in _files(root, *RUNTIME, suffix=TEMPLATE_SUFFIX):
        runtime_reads |= set(re.findall(r"[A-Za-z_]\w*", path.read_text(encoding="utf-8")))
    test_reads: set[str] = set()
    for path in _files(root, "tests"):
        test_reads |= _reads(_tree(path), strings=False)
    return sorted(
        f"{where}: {name}"
        for name, where in defined.items()
        if name in test_reads and name not in runtime_reads and not _is_special(name) and name not in ALLOWED
    )


# Found and not yet done (take each off when it is done), by file and name: none left.
KNOWN: dict[str, str] = {}


def _unnumbered(entry: str) -> str:
    return re.sub(r":\d+:", ":", entry)


def test_no_test_reads_a_runtime_attribute_that_only_tests_use() -> None:
    found = [name for name in find_test_only_attributes() if _unnumbered(name) not in KNOWN]
    assert found == [], (
        "the runtime keeps these only for tests: show the figure where an operator reads it (and "
        "test it there), or test the behaviour through what the runtime shows, and drop the name:\n"
        + "\n".join(found)
    )
    assert set(KNOWN) <= {_unnumbered(name) for name in find_test_only_attributes()}, "done: off KNOWN"


def test_the_check_names_a_new_test_only_attribute(tmp_path: Path) -> None:
    (tmp_path / "subnet").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "subnet" / "pool.py").write_text(
        "class Pool:\n"
        "    def __init__(self):\n"
        "        self.size = 2\n"
        "        self.spawned = 0  # only the test reads it\n"
        "    def grow(self):\n"
        "        self.spawned += 1\n"
        "        return self.size\n"
        "    def peek(self):  # only the test calls it\n"
        "        return self.size\n"
        "def serve(pool):\n"
        "    return pool.grow()\n"
    )
    (tmp_path / "tests" / "test_pool.py").write_text(
        "from subnet.pool import Pool\n"
        "def test_pool():\n"
        "    pool = Pool()\n"
        "    pool.grow()\n"
        "    assert pool.spawned == 1 and pool.peek() == pool.size\n"
    )
    assert find_test_only_attributes(tmp_path) == ["subnet/pool.py:4: spawned", "subnet/pool.py:8: peek"]
