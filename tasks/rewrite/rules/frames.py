"""Frames: the whole (reworded) description set in a sentence of another shape.

``{C}`` is the core text with a capital, ``{l}`` the same with a small first letter (acronyms
kept); neither has the final full stop. Every frame works for any core: the library's tool
descriptions are third-person clauses ("Books a visit ..."), its parameter descriptions noun
phrases or imperatives ("Number of nights.", "Stop at the first failure.").

A tool description is always framed (no bare "{C}." among the tool frames): tool_shuffle swaps a
leading verb phrase for another of its group, which could turn a bare reworded description back
into the library's own text.
"""

from __future__ import annotations

from tasks.rewrite.model import RuleSet

RULES = RuleSet(
    "frames",
    tool_frames=(
        "This function {l}.",
        "Tool that {l}.",
        "{C}. Call it only when that is what the user wants.",
        "When called, it {l}.",
        "Purpose: {l}.",
        "{C} (one call does one such action).",
    ),
    param_frames=(
        "{C}.",
        "{C} (from the request).",
        "Meaning: {l}.",
        "Purpose: {l}.",
        "{C}, as stated.",
        "What it holds: {l}.",
    ),
)
