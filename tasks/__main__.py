"""``python -m tasks``: the command line of the task generator, :mod:`subnet.tasks_cli`.

An entry point sits on top of every layer: it may phrase tasks with the validator's engines.
"""

from __future__ import annotations

import sys

from subnet.tasks_cli import main

if __name__ == "__main__":
    sys.exit(main())
