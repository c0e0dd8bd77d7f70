"""The configuration's one error: a bad flag, value, environment variable or wallet."""

from __future__ import annotations

from subnet.cli import UsageError

__all__ = ["ConfigError", "UserError"]

# A mistake the user can fix: subnet.cli's UsageError under the name the chain's, the dashboard's
# and the validator's own errors derive from.
UserError = UsageError


class ConfigError(UsageError):
    """A bad flag, value, environment variable or wallet."""
