"""Dry run: whether a request would be accepted, without doing it (``validate_book_hotel``)."""

from __future__ import annotations

from tasks.distractors.model import Kind, clause
from tasks.spec import ToolSpec


def derive(gold: ToolSpec) -> ToolSpec | None:
    if gold.name.startswith(("validate", "check", "verify", "test")):
        return None
    return ToolSpec(
        f"validate_{gold.name}_request",
        gold.domain,
        f"Checks only whether a request of this kind (one that {clause(gold)}) would be accepted with "
        "these details; it does not carry it out or return its result.",
        gold.params,
        (),
    )


KIND = Kind(
    "dry_run",
    derive,
    asks=(
        "don't do it, only check whether it would be accepted: {request}",
        "validate this without carrying it out: {request}",
        "would this go through? just test it, don't actually do it: {request}",
        "hypothetically, is this allowed? don't carry it out: {request}",
    ),
    keeps=("accepted", "validate", "check whether", "go through", "allowed"),
)
