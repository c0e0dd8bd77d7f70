"""Explain: what such a request would involve, nothing done (``explain_book_hotel``)."""

from __future__ import annotations

from tasks.distractors.model import Kind, clause
from tasks.spec import ToolSpec


def derive(gold: ToolSpec) -> ToolSpec | None:
    if gold.name.startswith(("explain", "describe", "help")):
        return None
    return ToolSpec(
        f"explain_{gold.name}",
        gold.domain,
        f"Explains step by step what a request of this kind (one that {clause(gold)}) would involve with "
        "these details and what could go wrong; it does not carry it out or fetch its result.",
        gold.params,
        (),
    )


KIND = Kind(
    "explain",
    derive,
    asks=(
        "walk me through what this would involve, without actually doing it: {request}",
        "before anything happens, explain what this would take: {request}",
    ),
    keeps=("walk me through", "explain"),
)
