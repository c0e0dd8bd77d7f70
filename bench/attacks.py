"""Issue 26's attacks on the simulated tool environments: what one hostile call costs.

Each attack runs in its own process (set up first, then the one call timed): its wall time, how
much the process's peak memory grew during the call (ru_maxrss), and how the call ended (an
error observation, a bounded output, or an exception escaping ``Environment.dispatch``). A call
still running after ``--timeout`` seconds is killed and shown as such; memory is capped at
``--memory-gb`` (the call then ends in MemoryError).

    .venv/bin/python bench/attacks.py                       # this checkout
    .venv/bin/python bench/attacks.py --root /tmp/before    # another checkout (e.g. ab2dd68)

``--root`` puts that checkout's packages first on the path, so the same script measures before
and after (``git worktree add /tmp/before ab2dd68``).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from subnet.cli import OneLineParser, user_errors

_WORKSPACE = "from tasks.episodes.environments.workspace import Workspace\n"
_CREATE = (
    "env.dispatch('apply_patch', {{'patch': '--- /dev/null\\n+++ b/{path}\\n@@ -0,0 +1,{count} @@\\n'"
    " + {body}}})\n"
)
_LINE_500 = _CREATE.format(path="g", count=1, body="'+' + 'a' * 500 + '\\n'")
_FILE_49000 = _CREATE.format(path="f", count=49000, body="'+x\\n' * 49000")
_FILE_60000 = _CREATE.format(path="f", count=60000, body="'+x\\n' * 59999 + '+y\\n'")
_BANK = (
    "from tasks.episodes.environments.bank import Bank\nenv = Bank(7)\n"
    "ids = [account['id'] for account in env.accounts]\n"
)

#: (name, what the miner sends, setup code, the attacking call): the code runs in the child with
#: ``env`` bound; ``setup`` builds the state, ``attack`` is the one timed expression.
ATTACKS: tuple[tuple[str, str, str, str], ...] = (
    (
        "transfer_401_digits",
        "bank transfer, amount 10**400",
        _BANK,
        "env.dispatch('transfer', {'from_account': ids[0], 'to_account': ids[1], 'amount': 10**400})",
    ),
    (
        "head_superscript",
        "run_shell `head -n ² README.md`",
        _WORKSPACE + "env = Workspace(3)",
        "env.dispatch('run_shell', {'command': 'head -n ² README.md'})",
    ),
    (
        "tail_superscript",
        "run_shell `tail -³ README.md`",
        _WORKSPACE + "env = Workspace(3)",
        "env.dispatch('run_shell', {'command': 'tail -³ README.md'})",
    ),
    (
        "cron_step_superscript",
        "cron_create `*/² * * * *`",
        _WORKSPACE + "env = Workspace(3)",
        "env.dispatch('cron_create', {'schedule': '*/² * * * *', 'command': 'pytest -q'})",
    ),
    (
        "cron_minute_superscript",
        "cron_create `¹ * * * *`",
        _WORKSPACE + "env = Workspace(3)",
        "env.dispatch('cron_create', {'schedule': '¹ * * * *', 'command': 'pytest -q'})",
    ),
    (
        "grep_a60_x4",
        "grep -E 'a{0,60}a{0,60}a{0,60}a{0,60}b' on one 500-char line",
        _WORKSPACE + "env = Workspace(5)\n" + _LINE_500,
        "env.dispatch('run_shell', {'command': \"grep -E 'a{0,60}a{0,60}a{0,60}a{0,60}b' g\"})",
    ),
    (
        "grep_dot99_x5",
        "grep -E '.{0,99}' x5 (+b) on one 500-char line",
        _WORKSPACE + "env = Workspace(5)\n" + _LINE_500,
        "env.dispatch('run_shell', {'command': \"grep -E '\" + '.{0,99}' * 5 + \"b' g\"})",
    ),
    (
        "patch_49000_lines",
        "apply_patch creating a 49,000-line file",
        _WORKSPACE
        + "env = Workspace(6)\npatch = '--- /dev/null\\n+++ b/f\\n@@ -0,0 +1,49000 @@\\n' + '+x\\n' * 49000",
        "env.dispatch('apply_patch', {'patch': patch})",
    ),
    (
        "cat_995",
        "then `cat f f ... f` (995 times)",
        _WORKSPACE + "env = Workspace(6)\n" + _FILE_49000,
        "env.dispatch('run_shell', {'command': 'cat' + ' f' * 995})",
    ),
    (
        "hunk_30000_identical",
        "one hunk of 30,000 identical context lines, found 30,000 lines below where its header says",
        _WORKSPACE
        + "env = Workspace(8)\n"
        + _FILE_60000
        + "patch = '--- a/f\\n+++ b/f\\n@@ -1,30000 +1,30000 @@\\n' + ' x\\n' * 29999 + '-y\\n+w\\n'",
        "env.dispatch('apply_patch', {'patch': patch})",
    ),
)

_CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
{setup}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
try:
    result = {attack}
    failed = isinstance(result, dict) and "error" in result
    shown = " ".join(str(result["error"]).split())[:60] if failed else ""
    ended = "error: " + shown if failed else "ok, " + str(len(json.dumps(result))) + " chars of JSON"
except BaseException as error:
    ended = "RAISED " + type(error).__name__
wall = time.perf_counter() - started
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({{"wall_s": wall, "grown_mb": grown / 1024, "ended": ended}}))
"""


def _limit_memory(gigabytes: float) -> None:
    limit = int(gigabytes * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _run(root: Path, setup: str, attack: str, timeout: float, memory_gb: float) -> dict[str, Any]:
    code = _CHILD.format(root=str(root), setup=setup, attack=attack)
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=root,
            preexec_fn=lambda: _limit_memory(memory_gb),  # a cap on this child only
            env={**os.environ, "PYTHONPATH": str(root)},
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {
            "wall_s": time.perf_counter() - started,
            "grown_mb": None,
            "ended": f"KILLED after {timeout:.0f} s",
        }
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {"wall_s": None, "grown_mb": None, "ended": f"process failed: {tail[:60]}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a call is killed")
    parser.add_argument("--memory-gb", type=float, default=6.0, help="address-space cap of each attack")
    parser.add_argument("--only", nargs="*", default=None, help="names of the attacks to run")
    with user_errors(parser.prog):
        args = parser.parse_args()
    root = args.root.resolve()
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    print(f"checkout {root} ({head or 'not a git checkout'}), python {sys.version.split()[0]}")
    print(f"{'attack':24} {'wall s':>9} {'+peak MB':>9}  ended")
    for name, _, setup, attack in ATTACKS:
        if args.only and name not in args.only:
            continue
        result = _run(root, setup, attack, args.timeout, args.memory_gb)
        wall = "-" if result["wall_s"] is None else f"{result['wall_s']:.4f}"
        grown = "-" if result["grown_mb"] is None else f"{result['grown_mb']:.1f}"
        print(f"{name:24} {wall:>9} {grown:>9}  {result['ended']}", flush=True)


if __name__ == "__main__":
    main()
