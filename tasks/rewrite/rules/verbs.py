"""What a tool does: its leading verb (third person) said with another verb of the same meaning."""

from __future__ import annotations

from tasks.rewrite.model import RuleSet

RULES = RuleSet(
    "verbs",
    leading=True,
    phrases=(
        ("gets", "fetches", "retrieves", "obtains", "looks up"),
        ("returns", "hands back", "yields"),
        ("sends", "dispatches", "delivers", "transmits"),
        ("computes", "calculates", "works out", "determines"),
        ("lists", "enumerates", "shows"),
        ("creates", "makes", "sets up"),
        ("finds", "locates", "searches for"),
        ("searches", "looks through", "queries"),
        ("reports", "describes", "tells"),
        ("sets", "configures", "adjusts"),
        ("runs", "executes", "launches"),
        ("reserves", "books"),
        ("adds", "puts", "inserts"),
        ("deletes", "removes", "erases"),
        ("converts", "translates"),
        ("records", "logs", "writes down"),
        ("starts", "opens", "begins"),
        ("stores", "saves", "keeps"),
        ("uploads", "pushes", "transfers"),
        ("exports", "writes out", "dumps"),
        ("operates", "controls"),
        ("edits", "modifies", "alters"),
        ("reminds", "alerts", "prompts"),
    ),
)
