"""The red team's attackers, as a package beside the bench scripts that run them.

``lexical`` holds ``LexicalMiner`` (single requests, any text), ``agent`` the ``ScriptedAgent``
(episodes) and its baselines. The scripts (bench/redteam.py, bench/redteam_agent.py,
bench/integrity.py, bench/redteam_devices.py) put their own folder LAST on ``sys.path``, after
the project's packages, so that ``import redteam_kit`` finds this package in the folder of the
script that runs (run from another checkout, that checkout's ``tasks`` is measured with these
attackers) while bench/scoring.py and bench/tasks.py never hide the packages of those names.

``load_sibling`` is the one loader of a bench script as a module (bench/ is no package); the
stand-in phrasing engine (bench/phrasing_standin.py) it takes from the checkout under test, since
it stands for that checkout's validator model, not for the red team.

The rule of the game: the attackers may read everything the project publishes (tasks/, scoring/,
subnet/, the phrasing prompt, the generator's tables) and general English, but never
bench/phrasing_standin.py. It stands for the validator's language model, whose choices are no
table anyone can read; in production that model writes the text. So nothing here imports it or
copies its wording: what the lexical miner knows of phrased text is general English (negation,
time, roles, superlatives: ``lexical.generic``) and the forms the generator declares must stay.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["BENCH", "load_sibling", "script_path"]

#: The folder of the bench scripts (this package's parent).
BENCH = Path(__file__).resolve().parent.parent


def script_path() -> None:
    """``sys.path`` for a bench script: its folder off the front (bench/scoring.py would hide the
    package of that name) and at the end (where only names no package has resolve to it)."""
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != BENCH] + [str(BENCH)]


#: Bench scripts that belong to the checkout under test, not to the red team: the stand-in
#: phrasing engine stands for the validator's language model, so a red team's script run from
#: another checkout phrases that checkout's round with that checkout's stand-in.
_UNDER_TEST = frozenset({"phrasing_standin"})


def _sibling_path(name: str) -> Path:
    if name in _UNDER_TEST:
        import tasks  # the checkout measured: the first on sys.path (its root, run from there)

        theirs = Path(tasks.__file__).resolve().parent.parent / "bench" / f"{name}.py"
        if theirs.is_file():
            return theirs
    return BENCH / f"{name}.py"


def load_sibling(name: str) -> ModuleType:
    """bench/<name>.py as the module ``bench_<name>``, loaded once per process (whoever asks
    first) so that every caller shares its classes."""
    module_name = f"bench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, _sibling_path(name))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    finally:
        sys.path[:] = path  # a script rewrites sys.path when it loads
    return module
