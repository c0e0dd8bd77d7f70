"""Words the devices share: numbers as words, date forms of a day offset."""

from __future__ import annotations

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


def of_whom(frame: str, ref: str) -> str:
    """``frame`` with ``ref`` for "{ref}"; where the frame puts "'s" after a clause ("whoever
    drives"), the thing comes first: "the choice of whoever drives", not "whoever drives's choice"."""
    owned = frame.removeprefix("{ref}'s ")
    if ref.startswith("whoever ") and owned != frame:
        return f"the {owned} of {ref}"
    return frame.format(ref=ref)
