"""A mark for tests that replace an attribute of a generator module: where the suite runs the
compiled modules (``SUBNET_COMPILED=1``, tasks.compiled), their callers call each other directly
and do not see the replacement, so such a test is skipped there with the reason shown."""

from __future__ import annotations

import pytest

from tasks import compiled

__all__ = ["python_modules_only"]

python_modules_only = pytest.mark.skipif(
    bool(compiled.running()),
    reason="replaces a generator module's attribute, which compiled callers do not see (SUBNET_COMPILED=1)",
)
