"""Moved: the task seam is subnet/validator/task_source.py, the scorer seam subnet/validator/judge.py.

Kept only until the last importer is updated in this refactor (issue 20); import from those.
"""

from subnet.validator.judge import BfclJudge, Judge, Judgement, bfcl_functions, message_output
from subnet.validator.task_source import LibraryTasks, TaskLike, TaskSource

__all__ = [
    "BfclJudge",
    "Judge",
    "Judgement",
    "LibraryTasks",
    "TaskLike",
    "TaskSource",
    "bfcl_functions",
    "message_output",
]
