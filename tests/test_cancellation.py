"""Runtime code bounds its awaits with ``asyncio.timeout``, never ``asyncio.wait_for``.

On Python 3.11 (the oldest the project supports) ``asyncio.wait_for`` returns the wrapped call's
answer instead of raising when a cancellation lands in the steps after that call finished: the
cancelled task runs on. A miner's stop waited for ever on its metagraph refresher so (a hung test
run). ``asyncio.timeout`` counts cancellations and passes an outside one on. bench/cancellation.py
measures it on the devchain: a metagraph-reading loop cancelled 300 times, 33 cancellations
swallowed with wait_for on an idle machine (110 beside two test runs), none with timeout.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

from tests.support.cancellation import cancel_after

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ("scoring", "tasks", "subnet", "neurons")


def _wait_for_calls(source: str) -> list[int]:
    """Lines that call asyncio.wait_for (as ``asyncio.wait_for`` or an imported ``wait_for``)."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "asyncio"
        for alias in node.names
        if alias.name == "wait_for"
    }
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = node.func
        if (isinstance(called, ast.Attribute) and called.attr == "wait_for"
                and isinstance(called.value, ast.Name) and called.value.id == "asyncio") or (
            isinstance(called, ast.Name) and called.id in imported
        ):  # fmt: skip
            lines.append(node.lineno)
    return lines


def test_no_runtime_code_calls_asyncio_wait_for() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for top in RUNTIME
        for path in sorted((ROOT / top).rglob("*.py"))
        for line in _wait_for_calls(path.read_text(encoding="utf-8"))
    ]
    assert found == [], (
        "use `async with asyncio.timeout(...)` (this module's docstring says why): " + ", ".join(found)
    )


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("import asyncio\nasync def f(c):\n    return await asyncio.wait_for(c, 1)\n", [3]),
        ("from asyncio import wait_for as w\nasync def f(c):\n    await w(c, 1)\n", [3]),
        ("import asyncio\nasync def f(c):\n    async with asyncio.timeout(1):\n        await c\n", []),
    ],
)
def test_the_check_finds_both_spellings(source: str, lines: list[int]) -> None:
    assert _wait_for_calls(source) == lines


async def test_asyncio_timeout_passes_on_a_cancellation_that_lands_as_the_call_finishes() -> None:
    """The property the rule relies on, on this interpreter: however many steps after the call's
    answer a cancellation lands, a task still running ends cancelled."""
    loop = asyncio.get_running_loop()
    for steps in range(8):
        answer: asyncio.Future[int] = loop.create_future()

        async def bounded(answer: asyncio.Future[int] = answer) -> int:
            async with asyncio.timeout(5):
                return await answer

        task = asyncio.ensure_future(bounded())
        await asyncio.sleep(0)
        answer.set_result(1)
        assert await cancel_after(task, steps) in (None, 1)
