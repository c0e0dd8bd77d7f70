"""Child processes that meet Ctrl-C as a process started from a terminal does.

A child inherits its parent's SIGINT disposition and signal mask, and Python leaves an inherited
ignored SIGINT ignored. A test worker of a loaded suite has now twice passed on an ignored or
blocked SIGINT: both neurons (tests/cli_audit/test_interrupt_at_start.py), and later
``python -m subnet.evaluate``, slept through the signal a test sent. Which earlier test leaves it
so was not found; a test that sends SIGINT starts its child with the terminal's state instead.
"""

from __future__ import annotations

import sys

__all__ = ["SIGINT_AS_IN_A_TERMINAL", "module_command"]

#: Python source that sets SIGINT as a terminal leaves it: Python's default handler, not blocked.
SIGINT_AS_IN_A_TERMINAL = (
    "import signal\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n"
)


def module_command(module: str, *args: str) -> list[str]:
    """The command line of ``python -m module args`` with SIGINT as in a terminal."""
    run = (
        "import runpy, sys\n"
        f"sys.argv[0] = {module!r}\n"
        f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n"
    )
    return [sys.executable, "-c", SIGINT_AS_IN_A_TERMINAL + run, *args]
