"""Lookalike distractors: tools that share a request's words and types but not its intent.

Near misses from the gold tool's domain (``tasks.builtin.near_misses``) differ from the gold tool
in words as well as in meaning, so choosing the tool with the most words in common with the
request is nearly always right, and "no offered tool shares the request's words" nearly always
spots an irrelevance task. A lookalike is made from the gold tool itself: the same parameters
(names, types, descriptions), the name and description of something else done with the same
thing: undo it (``cancel_hotel`` beside ``book_hotel``), set a reminder to do it, list past
requests of it, estimate its cost, check the status of an earlier one, watch it for changes,
check whether it would be accepted, draft it for review, explain what it would involve. Every kind
can also be asked for ("remind me later to ...": ``Kind.asks``), so that it is the answer in some
multiple tasks and, asked for where only the original is offered, the reason for no call in some
irrelevance tasks. Its description says
plainly what it does and does not do, so a model can tell; word overlap cannot.

``KINDS`` is the registry: adding a kind is adding a module and its entry here; the generator is
not touched. A kind's tool for a gold tool is built once (the same object every time).
"""

from __future__ import annotations

from functools import cache
from random import Random

from tasks.distractors.kinds import draft, dry_run, explain, history, quote, reminder, status, undo, watch
from tasks.distractors.model import Kind, name_words
from tasks.lexicon import synonyms
from tasks.rand import permute
from tasks.spec import ToolSpec

__all__ = ["KINDS", "Kind", "lookalike", "lookalikes"]

#: The kinds, in order: tasks draw among them by index.
KINDS: tuple[Kind, ...] = (
    undo.KIND,
    reminder.KIND,
    history.KIND,
    quote.KIND,
    status.KIND,
    watch.KIND,
    dry_run.KIND,
    draft.KIND,
    explain.KIND,
)


@cache
def lookalike(kind: int, gold: ToolSpec) -> ToolSpec | None:
    """``KINDS[kind]``'s lookalike of ``gold`` (None where the kind does not apply)."""
    return KINDS[kind].derive(gold)


@cache
def _verb_group(spec: ToolSpec) -> frozenset[str]:
    words = name_words(spec)
    if not words:
        return frozenset()
    return frozenset(synonyms(words[0])) | {words[0]}


def _could_serve(candidate: ToolSpec, golds: tuple[ToolSpec, ...]) -> bool:
    """Whether a lookalike's action is one a gold tool of the task does (its verb or a synonym):
    ``delete_event`` made from ``create_event`` must not sit beside a gold ``cancel_event``."""
    verbs = _verb_group(candidate)
    return any(candidate.name == gold.name or verbs & _verb_group(gold) for gold in golds)


def lookalikes(
    sources: tuple[ToolSpec, ...], count: int, rng: Random, golds: tuple[ToolSpec, ...] = ()
) -> list[ToolSpec]:
    """Up to ``count`` distinct lookalikes of the ``sources`` tools, kinds in random order; none
    whose action a tool in ``golds`` (the task's gold tools) does."""
    options = [(kind, source) for source in sources for kind in range(len(KINDS))]
    permute(rng, options)
    chosen: list[ToolSpec] = []
    for kind, source in options:
        if len(chosen) >= count:
            break
        made = lookalike(kind, source)
        if made is None or made in chosen or _could_serve(made, golds):
            continue
        if any(made.name == other.name for other in chosen):
            continue
        chosen.append(made)
    return chosen
