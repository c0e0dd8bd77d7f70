"""The tests marked slow are opt-in: skipped, with the reason shown, unless ``--slow`` is given or
a ``-m`` expression names them. The default run is the quick one CI runs on every change.

Hooks for tests/conftest.py (which imports them by name).
"""

from __future__ import annotations

import pytest

SLOW_REASON = "slow: `scripts/test.sh --slow` (make test-all) runs it"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        help="also run the tests marked slow (the local network end to end, the demo model, the long "
        "sweeps); a -m expression that names slow selects them too",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the tests marked slow, with the reason shown, unless asked for: the default run is
    the quick one CI runs on every change."""
    if config.getoption("--slow") or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason=SLOW_REASON)
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
