"""One command-line foundation (subnet.cli): one error, one parser, one way out, for every CLI."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from subnet.cli import OneLineParser, UsageError, float_arg, int_arg, run_main

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("subnet", "scoring", "tasks", "neurons")


def _modules() -> list[tuple[str, ast.Module]]:
    found = []
    for package in PACKAGES:
        for file in sorted((ROOT / package).rglob("*.py")):
            relative = file.relative_to(ROOT).as_posix()
            found.append((relative, ast.parse(file.read_text(encoding="utf-8"))))
    return found


def test_no_command_line_declares_its_own_parser_or_usage_error() -> None:
    own = []
    for relative, tree in _modules():
        if relative == "subnet/cli.py":
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {ast.unparse(base) for base in node.bases}
            if node.name == "UsageError" or "argparse.ArgumentParser" in bases:
                own.append(f"{relative}: {node.name}")
    assert own == []


def test_only_the_entry_points_of_scoring_and_tasks_reach_into_subnet() -> None:
    # Their command lines live in subnet/ (subnet.scoring_cli, subnet.tasks_cli); ``python -m``
    # enters through __main__.py, on top of every layer.
    reaching = set()
    for relative, tree in _modules():
        if not relative.startswith(("scoring/", "tasks/")):
            continue
        for node in ast.walk(tree):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [module or ""]
            if any(name == "subnet" or name.startswith("subnet.") for name in names):
                reaching.add(relative)
    assert reaching <= {"scoring/__main__.py", "tasks/__main__.py"}


def test_the_foundation_imports_the_standard_library_only() -> None:
    code = (
        "import sys, subnet.cli\n"
        "ours = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'subnet', 'scoring', 'tasks', 'bittensor', 'torch', 'sqlalchemy'})\n"
        "print(ours)\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "['subnet', 'subnet.cli']"


def test_a_parser_mistake_is_one_usage_error_naming_help() -> None:
    parser = OneLineParser(prog="x")
    parser.add_argument("--n", type=int_arg(1, 3))
    parser.add_argument("--s", type=float_arg(0.0, low_open=True))
    with pytest.raises(UsageError, match=r"^argument --n: expected 1\.\.3, got 4 \(see --help\)$"):
        parser.parse_args(["--n", "4"])
    with pytest.raises(
        UsageError, match=r"^argument --s: expected a number greater than 0, got 0 \(see --help\)$"
    ):
        parser.parse_args(["--s", "0"])
    with pytest.raises(UsageError, match="unrecognized arguments: --m"):
        parser.parse_args(["--m"])


def test_run_main_prints_one_line_and_returns_2(capsys: pytest.CaptureFixture[str]) -> None:
    def broken() -> int:
        raise UsageError("no such\nfile; give another")

    assert run_main("thing", broken) == 2
    assert capsys.readouterr().err == "thing: error: no such file; give another\n"

    def library_error() -> None:
        raise LookupError("missing row")

    assert run_main("thing", library_error, errors=(LookupError,)) == 2
    assert capsys.readouterr().err == "thing: error: missing row\n"
    assert run_main("thing", lambda: None) == 0
    assert run_main("thing", lambda: 1) == 1
    with pytest.raises(KeyError):  # anything else is a bug: its traceback stays
        run_main("thing", lambda: {}["x"])


# Command lines still declaring some of the registry's flags by hand (other changes of the same
# refactor move them onto subnet.config.add_flag); drop each once it lands.
HAND_DECLARED = {"subnet/evaluate/cli.py"}


def test_the_neurons_flags_are_declared_once_in_the_registry() -> None:
    from subnet.config import FLAGS_BY_NAME

    options = {flag.option for flag in FLAGS_BY_NAME.values()}
    # The same spelling for another idea: a filter of the status table; the localnet's own rounds.
    elsewhere = {"subnet/devchain/__main__.py: --netuid", "subnet/localnet/settings.py: --rounds"}
    by_hand = []
    for relative, tree in _modules():
        if relative.startswith("subnet/config/") or relative in HAND_DECLARED:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            called = ast.unparse(node.func)
            if (called.endswith("add_argument") or called == "add") and node.args[0].value in options:
                by_hand.append(f"{relative}: {node.args[0].value}")
    assert sorted(set(by_hand) - elsewhere) == []


@pytest.mark.parametrize(
    ("module", "option"),
    [
        ("subnet.bootstrap", "--subtensor.network"),
        ("subnet.bootstrap", "--netuid"),
        ("subnet.db.__main__", "--db.url"),
        ("subnet.localnet.settings", "--db.url"),
        ("subnet.localnet.settings", "--dashboard.port"),
        ("subnet.localnet.settings", "--model.max_new_tokens"),
        ("subnet.localnet.settings", "--query.timeout"),
        ("subnet.localnet.settings", "--devchain.block_time"),
    ],
)
def test_other_command_lines_take_the_registry_flag(module: str, option: str) -> None:
    import importlib

    from subnet.config import FLAGS_BY_NAME

    parser = importlib.import_module(module).build_parser()
    action = next(action for action in parser._actions if option in action.option_strings)
    assert action.help is not None and action.help.startswith(FLAGS_BY_NAME[option[2:]].help)
    assert action.metavar == FLAGS_BY_NAME[option[2:]].metavar
    with pytest.raises(UsageError, match=f"argument {option}: "):
        parser.parse_args([option, "mysql://x" if option == "--db.url" else "-1"])
