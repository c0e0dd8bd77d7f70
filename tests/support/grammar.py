"""Checking texts against a guided grammar without a model: an xgrammar matcher over a one-token
vocabulary (the miner builds its matchers on the model's tokenizer)."""

from __future__ import annotations

from typing import Any

from subnet.miner.guided import CallGrammar


def text_matcher(ebnf: str) -> Any:
    """An xgrammar matcher of ``ebnf`` that reads text character by character."""
    import xgrammar  # the miner's optional package: tests that use it skip without it

    info = xgrammar.TokenizerInfo(["<eos>"], stop_token_ids=[0])
    compiled = xgrammar.GrammarCompiler(info).compile_grammar(xgrammar.Grammar.from_ebnf(ebnf))
    return xgrammar.GrammarMatcher(compiled)


def accepts(grammar: CallGrammar, text: str) -> bool:
    """Whether ``text`` is a complete answer of ``grammar``."""
    matcher = text_matcher(grammar.ebnf)
    return bool(matcher.accept_string(text)) and bool(matcher.is_completed())


def prefix_ok(grammar: CallGrammar, text: str) -> bool:
    """Whether ``text`` can be continued into a complete answer of ``grammar``."""
    return bool(text_matcher(grammar.ebnf).accept_string(text)) if text else True
