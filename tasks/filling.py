"""Filling a request template with its placeholders' texts, so that the words at each seam read
as one sentence: a template's word before a placeholder is left out where the text brings it
("the {x}" with "the most recent pick"), and a comma parts a text from the template's next word
where the text ends with that word ("asked for, for Priya").

Filling runs once per request of every task: a template is cut once at its seams (``seams``,
``_after_seams``) and each fill is string joins; the regular expressions run only where a word was
dropped and a second pass is needed.
"""

from __future__ import annotations

import re
from functools import lru_cache, partial

from tasks.devices._words import WORD_BEFORE, opens_with, seams

__all__ = ["fill_template"]

_WORD_AFTER = re.compile(r"\{(\w+)\} (\w+)\b")

#: A template's words before a placeholder that a text of its own determiner replaces.
_DETERMINERS = frozenset({"a", "an", "the", "my", "our", "your"})
#: How a text that brings its own determiner starts ("our host's current pick", "whatever ...").
_OWN_DETERMINER = re.compile(
    r"(?:the|a|an|my|our|your|what|whatever|whichever|whoever|\w+'s) ", re.IGNORECASE
)


def fill_template(template: str, texts: dict[str, str]) -> str:
    """The template with its placeholders' texts, the template's word before a placeholder left
    out where the text starts with that word ("the {x}" with "the most recent pick", "a {x}" with
    "a fortnight"), or where the template's word is a determiner and the text brings its own ("a
    {x}" with "our host's initial idea"): no "the the", no "a our host's" in the request. Where
    a text ends with the word the template says after it ("the one the new hire asked for" before
    "for Priya"), a comma parts them: "asked for, for Priya", not "asked for for Priya"."""

    joined, found = seams(template)
    dropped = False
    for cut, opener, name, alone, written, after in found:
        said = texts.get(name, "")
        # opens_with(said, word), with the word's lower-cased form made once (``seams``)
        if said[:cut].lower() == opener or (opener[:-1] in _DETERMINERS and _OWN_DETERMINER.match(said)):
            joined += alone + after
            dropped = True
        else:
            joined += written + after
    if dropped:
        # Again where a word was dropped: it can bring a word before the placeholder that the
        # text starts with ("what the {x}" with "what I had originally").
        return _joined_after(WORD_BEFORE.sub(partial(_seam, texts), joined), texts)
    out, found_after = _after_seams(template)
    for name, ending, parted, written, after in found_after:
        out += (parted if texts.get(name, "").lower().endswith(ending) else written) + after
    return out.format_map(texts)


def _seam(texts: dict[str, str], match: re.Match[str]) -> str:
    word, name = match.group(1), match.group(2)
    said = texts.get(name, "")
    if opens_with(said, word) or (word.lower() in _DETERMINERS and _OWN_DETERMINER.match(said)):
        return "{" + name + "}"
    return match.group(0)


def _joined_after(joined: str, texts: dict[str, str]) -> str:
    """``joined`` (a template with words dropped before placeholders) filled, a comma between a
    text and the template's word after it where the text ends with that word."""

    def after(match: re.Match[str]) -> str:
        name, word = match.group(1), match.group(2)
        said = texts.get(name, "")
        if said.lower().endswith(" " + word.lower()):
            return "{" + name + "}, " + word
        return match.group(0)

    return _WORD_AFTER.sub(after, joined).format_map(texts)


@lru_cache(maxsize=8192)
def _after_seams(template: str) -> tuple[str, tuple[tuple[str, str, str, str, str], ...]]:
    """``template`` cut where ``_WORD_AFTER`` matches: the text before the first match, then per
    match the placeholder's name, " word" lower-cased, the placeholder with a comma before the
    word, the match as written and the text up to the next match (what ``_joined_after`` does for
    a template no word was dropped from)."""
    matches = list(_WORD_AFTER.finditer(template))
    ends = [match.start() for match in matches[1:]] + [len(template)] if matches else []
    found = tuple(
        (
            match.group(1),
            " " + match.group(2).lower(),
            "{" + match.group(1) + "}, " + match.group(2),
            match.group(0),
            template[match.end() : end],
        )
        for match, end in zip(matches, ends, strict=True)
    )
    return template[: matches[0].start()] if matches else template, found
