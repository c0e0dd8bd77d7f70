"""Undo: the opposite action on the same thing (``cancel_hotel`` beside ``book_hotel``)."""

from __future__ import annotations

from tasks.distractors.model import Kind, clause, name_words
from tasks.spec import ToolSpec

#: A name verb -> the verb that undoes it (each takes -s in the third person).
INVERSE = {
    "add": "remove",
    "apply": "revert",
    "arm": "disarm",
    "book": "cancel",
    "create": "delete",
    "dispatch": "cancel",
    "enroll": "withdraw",
    "log": "delete",
    "mute": "unmute",
    "order": "cancel",
    "place": "cancel",
    "plan": "abort",
    "remember": "forget",
    "rent": "cancel",
    "report": "withdraw",
    "reserve": "cancel",
    "run": "stop",
    "schedule": "cancel",
    "send": "recall",
    "set": "clear",
    "start": "stop",
    "transfer": "revert",
}
_LINKS = {"in", "to", "from", "on"}


def derive(gold: ToolSpec) -> ToolSpec | None:
    words = name_words(gold)
    inverse = INVERSE.get(words[0]) if words else None
    if inverse is None or len(words) < 2:
        return None
    rest = words[2:] if words[1] in _LINKS and len(words) > 2 else words[1:]
    return ToolSpec(
        "_".join([inverse, *rest]),
        gold.domain,
        f"{inverse.capitalize()}s what an earlier request of this kind did (one that {clause(gold)}), "
        "found by these details. It never makes a new one.",
        gold.params,
        (),
    )


KIND = Kind(
    "undo",
    derive,
    asks=(
        "I changed my mind, undo this one from earlier: {request}",
        "take back what was done for this earlier request: {request}",
    ),
    keeps=("undo", "take back"),
)
