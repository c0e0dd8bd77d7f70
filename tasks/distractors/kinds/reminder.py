"""Reminder: a note to do the thing later, not the thing (``remind_to_book_hotel``)."""

from __future__ import annotations

from tasks.distractors.model import Kind, clause
from tasks.spec import ToolSpec


def derive(gold: ToolSpec) -> ToolSpec | None:
    if "remind" in gold.name or "clarify" in gold.name or "escalate" in gold.name:
        return None
    return ToolSpec(
        f"remind_to_{gold.name}",
        gold.domain,
        f"Creates a reminder for the user to do this later themselves: {clause(gold)}. "
        "It only sets the reminder; nothing is done now.",
        gold.params,
        (),
    )


KIND = Kind(
    "reminder",
    derive,
    asks=(
        "remind me later to deal with this: {request}",
        "set me a reminder for this, I'll do it myself later: {request}",
        "make sure I don't forget to do this myself tomorrow: {request}",
        "nudge me about this later, I'll handle it on my own: {request}",
        "put this on my to-do list for later: {request}",
    ),
    keeps=("remind me", "reminder", "don't forget", "nudge me", "to-do list"),
)
