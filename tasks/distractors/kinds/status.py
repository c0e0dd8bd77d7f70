"""Status: how an earlier request of the same kind is going (``check_book_hotel_status``)."""

from __future__ import annotations

from tasks.distractors.model import WRITE_VERBS, Kind, clause, name_words
from tasks.spec import ToolSpec


def derive(gold: ToolSpec) -> ToolSpec | None:
    words = name_words(gold)
    if not words or words[0] not in WRITE_VERBS:
        return None
    return ToolSpec(
        f"check_{gold.name}_status",
        gold.domain,
        f"Checks how far an earlier request of this kind has got (one that {clause(gold)}); "
        "it starts nothing new.",
        gold.params,
        (),
    )


KIND = Kind(
    "status",
    derive,
    asks=(
        "I already asked for this earlier, how far along is it? {request}",
        "where does my earlier request stand? don't start a new one: {request}",
    ),
    keeps=("how far along", "stand"),
)
