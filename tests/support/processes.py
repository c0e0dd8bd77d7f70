"""The sandbox's worker processes as the operating system lists them (the sandbox keeps no list of
pids for the tests: they ask the OS, as an operator would with ``ps``)."""

from __future__ import annotations

import psutil

SANDBOX_WORKER = "subnet.validator.sandbox_worker"  # the module a worker runs (python -m ...)


def sandbox_workers() -> list[int]:
    """Pids of this process's live sandbox workers (ended ones not yet reaped left out)."""
    pids = []
    for child in psutil.Process().children():
        try:
            if child.status() != psutil.STATUS_ZOMBIE and SANDBOX_WORKER in child.cmdline():
                pids.append(child.pid)
        except psutil.Error:  # ended between the listing and the look
            continue
    return sorted(pids)
