"""History: past requests of the same kind, read-only (``list_past_search_flights``)."""

from __future__ import annotations

from tasks.distractors.model import Kind, clause
from tasks.spec import ToolSpec


def derive(gold: ToolSpec) -> ToolSpec | None:
    if "history" in gold.name or "historical" in gold.name:
        return None
    return ToolSpec(
        f"list_past_{gold.name}",
        gold.domain,
        f"Lists earlier requests like this one, each of which {clause(gold)}, that match these details. "
        "Read-only: it does nothing new.",
        gold.params,
        (),
    )


KIND = Kind(
    "history",
    derive,
    asks=(
        "show me the past ones like this, nothing new: {request}",
        "list what I asked for before along these lines, don't redo it: {request}",
    ),
    keeps=("past ones", "before"),
)
