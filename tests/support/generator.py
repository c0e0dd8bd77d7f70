"""A mark for tests that replace an attribute of a generator module or hand it a stand-in object:
where the suite runs the compiled modules (``SUBNET_COMPILED=1``, tasks.compiled), compiled
callers call each other directly and do not see a replacement, and compiled code checks the
types it was given, so such a test is skipped there with the reason shown."""

from __future__ import annotations

import pytest

from tasks import compiled

__all__ = ["python_modules_only"]

python_modules_only = pytest.mark.skipif(
    bool(compiled.running()),
    reason="replaces a generator module's attribute or passes a stand-in, which compiled code does not "
    "see or accept (SUBNET_COMPILED=1)",
)
