"""What a fresh interpreter loads for an import statement (the tests on import costs read it)."""

from __future__ import annotations

import json
import subprocess
import sys

# What ``import scoring`` loads: the value types and the schema tables, never the decoder, the
# formats or the checker. The layers above import these at the top of their modules.
LIGHT_SCORING = frozenset({"scoring", "scoring.model", "scoring.schema"})


def modules_loaded_by(statement: str) -> list[str]:
    """The sorted names in ``sys.modules`` after ``statement`` runs in a new interpreter."""
    script = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(result.stdout)
    return loaded
