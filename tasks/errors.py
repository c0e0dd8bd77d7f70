"""Errors a user can cause (bad flags, missing or malformed files), with readable messages."""

from __future__ import annotations

__all__ = ["SourceFileError", "TaskConfigError"]


class TaskConfigError(ValueError):
    """A bad mix, share list or source selection."""


class SourceFileError(ValueError):
    """A task file that is missing or malformed; the message names the file and, when known, the line."""

    def __init__(self, path: str, reason: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")
