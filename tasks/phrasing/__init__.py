"""The phrasing stage: requests written fresh per round by a language model, verified to keep every value.

Public API::

    await phrase(tasks, engine, round_seed, policy=PhrasingPolicy(), redraw=None) -> Phrased
    verify(text, intent, names) -> Checked          # reason None: the text may be shown
    intent_of(task) -> dict                         # what the request means
    TemplateEngine, PhrasingEngine, PhrasingRequest, EngineAnswer, PhrasingStats

Why: the builtin generator's templates and public datasets are a closed, public grammar that code
without a model can invert (bench/integrity.py measures it). What miners read has to be written
fresh, by a model whose text no parser of the public code knows. The engines that run a model
(``openai``, ``transformers``) live with the validator, in ``subnet.phrasing``.
"""

from __future__ import annotations

from tasks.phrasing.intent import external_intent, intent_of
from tasks.phrasing.stage import (
    EngineAnswer,
    Phrased,
    PhrasingEngine,
    PhrasingPolicy,
    PhrasingRequest,
    PhrasingStats,
    TemplateEngine,
    phrase,
)
from tasks.phrasing.style import Style
from tasks.phrasing.verification import REASONS, Checked, verify

__all__ = [
    "REASONS",
    "Checked",
    "EngineAnswer",
    "Phrased",
    "PhrasingEngine",
    "PhrasingPolicy",
    "PhrasingRequest",
    "PhrasingStats",
    "Style",
    "TemplateEngine",
    "external_intent",
    "intent_of",
    "phrase",
    "verify",
]
