"""The red team's attackers, as a package beside the bench scripts that run them.

``lexical`` holds ``LexicalMiner`` (single requests, any text), ``agent`` the ``ScriptedAgent``
(episodes) and its baselines. The scripts (bench/redteam.py, bench/redteam_agent.py,
bench/integrity.py, bench/redteam_devices.py) find it in their own folder, first on ``sys.path``
when a script runs; no module in bench/ has the name of a project package, so the project's
packages come from the install, or from ``PYTHONPATH`` (run with another checkout's root there,
that checkout's ``tasks`` is measured with these attackers).

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

__all__ = ["BENCH", "load_sibling"]

#: The folder of the bench scripts (this package's parent).
BENCH = Path(__file__).resolve().parent.parent


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
    sys.path.append(str(BENCH))  # where a script finds its siblings, as when it runs
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    finally:
        sys.path[:] = path  # a script may put the repository root on sys.path when it loads
    return module
