"""Draft: the request written up for the user to review, nothing done (``draft_book_hotel``)."""

from __future__ import annotations

from tasks.distractors.model import WRITE_VERBS, Kind, clause, name_words
from tasks.spec import ToolSpec


def derive(gold: ToolSpec) -> ToolSpec | None:
    words = name_words(gold)
    if not words or words[0] not in WRITE_VERBS:
        return None
    return ToolSpec(
        f"draft_{gold.name}",
        gold.domain,
        f"Writes up a request of this kind (one that {clause(gold)}) as a draft for the user to review "
        "and submit themselves; nothing is sent or done.",
        gold.params,
        (),
    )


KIND = Kind(
    "draft",
    derive,
    asks=(
        "just draft this so I can look it over first, don't submit anything: {request}",
        "write this up for me to review before anything goes out: {request}",
    ),
    keeps=("draft", "review", "look it over"),
)
