"""Watch: an alert for later changes, not the answer now (``watch_get_current_weather``)."""

from __future__ import annotations

from tasks.distractors.model import Kind, clause
from tasks.spec import ToolSpec


def derive(gold: ToolSpec) -> ToolSpec | None:
    if "alert" in gold.name or "watch" in gold.name or "monitor" in gold.name:
        return None
    return ToolSpec(
        f"watch_{gold.name}",
        gold.domain,
        f"Subscribes the user to alerts about requests of this kind (one that {clause(gold)}): it notifies "
        "them when something changes later and returns nothing now.",
        gold.params,
        (),
    )


KIND = Kind(
    "watch",
    derive,
    asks=(
        "alert me whenever anything changes about this: {request}",
        "notify me later if this changes, nothing now: {request}",
        "keep an eye on this and ping me when it moves: {request}",
        "let me know down the line if this shifts at all: {request}",
    ),
    keeps=("alert me", "notify me", "keep an eye", "let me know"),
)
