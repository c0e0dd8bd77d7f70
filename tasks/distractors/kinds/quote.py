"""Quote: what doing it would cost, without doing it (``estimate_book_hotel_cost``)."""

from __future__ import annotations

from tasks.distractors.model import WRITE_VERBS, Kind, clause, name_words
from tasks.spec import ToolSpec


def derive(gold: ToolSpec) -> ToolSpec | None:
    words = name_words(gold)
    if not words or words[0] not in WRITE_VERBS:
        return None
    return ToolSpec(
        f"estimate_{gold.name}_cost",
        gold.domain,
        f"Estimates what it would cost to go ahead with a request of this kind (one that {clause(gold)}), "
        "without doing it.",
        gold.params,
        (),
    )


KIND = Kind(
    "quote",
    derive,
    asks=(
        "how much would this cost? don't do it yet: {request}",
        "just a cost estimate for now, don't go ahead with it: {request}",
        "what would I be paying for this? I'm only pricing it up: {request}",
        "give me a ballpark price before anything happens: {request}",
    ),
    keeps=("cost", "estimate", "paying", "price"),
)
