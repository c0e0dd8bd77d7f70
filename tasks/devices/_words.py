"""Words the devices share: numbers as words, date forms of a day offset."""

from __future__ import annotations

import re
from functools import lru_cache

from tasks.value_generators import Mention, date_accepted_forms

NUMBER_WORDS = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
)
ORDINALS = (
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "twenty-first",
    "twenty-second",
    "twenty-third",
    "twenty-fourth",
    "twenty-fifth",
    "twenty-sixth",
    "twenty-seventh",
    "twenty-eighth",
)


def number_word(value: int) -> str:
    """0..20 in words, larger numbers in digits."""
    return NUMBER_WORDS[value] if 0 <= value < len(NUMBER_WORDS) else str(value)


def phrase(*forms: str) -> Mention:
    """A phrase whose key words a rewording must keep (a "flag" mention)."""
    return ("flag", tuple(forms))


def date_derived(offset: int) -> tuple[str, ...]:
    """Every written form of the date ``offset`` days after 2026-01-01 (none may be stated)."""
    return date_accepted_forms(offset)


#: Frames said otherwise after a clause ("whatever whoever drives wants" reads twice over).
_AFTER_CLAUSE = {"whatever {ref} wants": "whatever suits {ref}"}


def of_whom(frame: str, ref: str) -> str:
    """``frame`` with ``ref`` for "{ref}"; where the frame puts "'s" after a clause ("whoever
    drives"), the thing comes first: "the choice of whoever drives", not "whoever drives's choice";
    and "whatever suits whoever drives", not "whatever whoever drives wants"."""
    if not ref.startswith("whoever "):
        return frame.format(ref=ref)
    owned = frame.removeprefix("{ref}'s ")
    if owned != frame:
        return f"the {owned} of {ref}"
    return _AFTER_CLAUSE.get(frame, frame).format(ref=ref)


#: A template's or frame's word before a placeholder: (the word, the placeholder's name).
WORD_BEFORE = re.compile(r"(\w+) \{(\w+)\}")


def opens_with(said: str, word: str) -> bool:
    """Whether ``said`` starts with the word ``word`` (any case): "for 5 people" with "for"."""
    return said[: len(word) + 1].lower() == word.lower() + " "


#: A frame cut at its words before a placeholder: the text before the first, then per seam the
#: word's length with the space after it, the word lower-cased with that space, the placeholder's
#: name, the placeholder alone, the seam as written and the text up to the next seam.
_Seam = tuple[int, str, str, str, str, str]


@lru_cache(maxsize=4096)
def seams(frame: str) -> tuple[str, tuple[_Seam, ...]]:
    """``frame`` cut where ``WORD_BEFORE`` matches (as ``WORD_BEFORE.sub`` finds them), made once
    per frame: filling a frame is then string joins, not a regular expression and a Python call
    back per match (frames are the devices' and templates' constants)."""
    matches = list(WORD_BEFORE.finditer(frame))
    ends = [match.start() for match in matches[1:]] + [len(frame)] if matches else []
    found = tuple(
        (
            len(match.group(1)) + 1,
            match.group(1).lower() + " ",
            match.group(2),
            "{" + match.group(2) + "}",
            match.group(0),
            frame[match.end() : end],
        )
        for match, end in zip(matches, ends, strict=True)
    )
    return frame[: matches[0].start()] if matches else frame, found


def filled(frame: str, **texts: str) -> str:
    """``frame`` with ``texts``, the frame's word before a placeholder left out where the text
    starts with it: "asked for {x}" with "for 5 people" is "asked for 5 people"."""
    out, found = seams(frame)
    for cut, opener, name, alone, written, after in found:
        # opens_with(said, word), with the word's lower-cased form made once
        out += (alone if texts.get(name, "")[:cut].lower() == opener else written) + after
    return out.format(**texts)
