"""Choices read by general English cues, where no frame of the generator's tables matches.

A phrasing engine (the validator's language model) rewrites every context sentence in its own
words, keeping only what it must: the candidate values, the people and the request's reference
("the option nobody ruled out", "my opening choice", "the day my neighbour gets the keys"), which
the generator declares as mentions. The facts' frames ("{x} fell through", "{when} I went with
{x}") are then gone, so this reads each candidate by the words of its own clause instead:

- polarity (eliminated): general English words for ruling out ("dropped", "vetoed", "off the
  table", "no longer", "scrapped") and for objecting ("objected", "minds", "problem"), each
  flipped by a negator ("nobody", "can't", "didn't"); an elliptic clause ("..., X didn't") flips
  the clause before it; an exception ("everything but X", "apart from X") keeps X;
- roles (attributed, revised): the stemmed words of the role the reference names (the public
  role table: "the person paying" is who "is covering the bill"), widened by a small thesaurus of
  general English ("bill", "tab", "pays"), matched with stems and one-letter typos forgiven;
- time (sequence, revised): how long ago each clause says ("nine days ago", "a fortnight back",
  "last year", "this morning", "originally", "now"), else the order of the text (the last stated
  value is the latest);
- figures (compared): the number said in the clause (digits, number words, dozens);
- events (aside): the sentences about the reference's subject, each matched to the event of its
  kind whose public sentences share the most stems with it.

The reference picks the candidate; the request is written back with that value in the
reference's place and the candidates' sentences blanked, like ``choices`` does with frames.
Nothing here reads the stand-in engine (bench/phrasing_standin.py): it stands for a model.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from tasks.devices._words import NUMBER_WORDS

from .finders import _dates, _finder, _generic_finder, _times
from .tools import _Slot, _Tool
from .words import _Find, _idf, _words, apply_edits

__all__ = ["polarity", "resolved_generic", "stem"]


# ---------------------------------------------------------------------------------------------
# Words: stems, and one-letter typos forgiven against a lexicon.

_SUFFIXES = ("ations", "ation", "ings", "ing", "ied", "ies", "ed", "es", "er", "ly", "s")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude stem: lower case, one common suffix off, a doubled last consonant single."""
    word = word.lower().strip("'")
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + (1 if suffix in ("ied", "ies") else 2) and word.endswith(suffix):
            word = word[: -len(suffix)] + ("y" if suffix in ("ied", "ies") else "")
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiousl":
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


_TOKEN = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")


def _near(a: str, b: str) -> bool:
    """One edit apart (a letter in, out, changed, or two swapped): a typo of a word of 5+ letters."""
    if a == b:
        return True
    if min(len(a), len(b)) < 5 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1
        return swapped and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


#: Words that are words, not typos of a lexicon's ("eight" is not "night").
_PLAIN = frozenset(w for w in NUMBER_WORDS if w) | frozenset(
    ["weight", "night", "right", "light", "might", "sight", "fight", "tight", "there", "where", "these"]
)


@lru_cache(maxsize=65536)
def _spelled(word: str, lexicon: frozenset[str]) -> str:
    """``word`` as the lexicon's word it is a typo of, else itself."""
    lowered = word.lower()
    if lowered in lexicon or len(lowered) < 5 or lowered in _PLAIN:
        return lowered
    return next((known for known in sorted(lexicon) if _near(lowered, known)), lowered)


def _tokens(text: str, lexicon: frozenset[str]) -> list[str]:
    return [_spelled(t, lexicon) for t in _TOKEN.findall(text)]


# ---------------------------------------------------------------------------------------------
# Polarity: is a candidate still in, or ruled out?

#: Ruling out, in general English (phrases; a negator before one keeps the value).
_OUT = (
    "fell through",
    "fell apart",
    "falls apart",
    "fallen apart",
    "didn't pan out",
    "did not pan out",
    "didn't work out",
    "went nowhere",
    "came to nothing",
    "wasn't meant to be",
    "falls through",
    "fallen through",
    "history",
    "vetoed",
    "veto",
    "done with",
    "dropped",
    "drop",
    "had its chance",
    "given up on",
    "gave up on",
    "give up on",
    "is out",
    "are out",
    "out of the running",
    "out of the picture",
    "no-go",
    "no go",
    "not an option",
    "ruled out",
    "rule out",
    "rules out",
    "rejected",
    "reject",
    "cancelled",
    "canceled",
    "cancel",
    "called off",
    "scrapped",
    "scrap",
    "scratch",
    "scratched",
    "off the table",
    "off the list",
    "dead",
    "axed",
    "nixed",
    "binned",
    "struck off",
    "crossed off",
    "struck",
    "excluded",
    "eliminated",
    "discarded",
    "abandoned",
    "passed on",
    "turned down",
    "won't work",
    "doesn't work",
    "didn't work",
    "not working",
    "failed",
    "fails",
    "unavailable",
    "booked up",
    "fully booked",
    "gone",
    "shelved",
    "dismissed",
    "removed",
    "no longer",
    "not anymore",
    "any more",
    "anymore",
    "is over",
    "ditched",
    "forget",
    "skip",
    "skipped",
    "declined",
    "pulled",
    "killed",
    "dumped",
    "lost",
    "taken off",
    "not happening",
    "out of the question",
    "left out",
    "let go",
    "bowed out",
    "withdrawn",
    "withdrew",
    "sold out",
    "closed",
    "unsuitable",
    "won't do",
    "not going ahead",
    "isn't going ahead",
    "is a bust",
    "collapsed",
    "knocked out",
    "is off",
)
#: Objecting (a negator before one keeps the value: "nobody objected", "I can't see a problem").
_AGAINST = (
    "objected",
    "objects",
    "object",
    "objection",
    "objections",
    "minds",
    "mind",
    "problem",
    "problems",
    "issue",
    "issues",
    "wrong",
    "complained",
    "complaint",
    "complaints",
    "against",
    "concern",
    "concerns",
    "trouble",
    "opposed",
    "opposes",
    "pushback",
    "push back",
    "argued against",
    "an issue",
    "a problem",
    "quibble",
    "qualms",
    "reservations",
    "fault",
)
#: Keeping (plain, no flip).
_IN = (
    "still fine",
    "fine",
    "still on",
    "on the table",
    "works",
    "checks out",
    "check out",
    "okay",
    "ok",
    "good",
    "available",
    "open",
    "alive",
    "still standing",
    "standing",
    "survived",
    "survives",
    "remains",
    "remaining",
    "stays",
    "kept",
    "in the running",
    "viable",
    "possible",
    "acceptable",
    "holds up",
    "still good",
    "still in",
    "is in",
    "green light",
    "approved",
    "cleared",
    "passed",
    "made the cut",
    "went through",
    "still valid",
    "valid",
    "workable",
    "all right",
    "alright",
    "in play",
    "still up",
)
_NEGATORS = (
    "not",
    "no",
    "nobody",
    "no one",
    "noone",
    "never",
    "none",
    "nothing",
    "neither",
    "nor",
    "without",
    "hardly",
    "can't",
    "cannot",
    "don't",
    "doesn't",
    "didn't",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "won't",
    "wouldn't",
    "haven't",
    "hasn't",
    "hadn't",
    "couldn't",
    "shouldn't",
    "n't",
    "zero",
    "nor",
)
_EXCEPTIONS = (
    "everything but",
    "all but",
    "apart from",
    "aside from",
    "except",
    "except for",
    "other than",
    "besides",
    "save for",
    "but not",
    "bar",
    "barring",
    "excluding",
    "with the exception of",
)


def _phrase_regex(phrases: Iterable[str]) -> re.Pattern[str]:
    ordered = sorted(set(phrases), key=len, reverse=True)
    return re.compile(r"(?<![\w'-])(?:" + "|".join(re.escape(p) for p in ordered) + r")(?![\w-])")


_OUT_RE = _phrase_regex(_OUT)
_AGAINST_RE = _phrase_regex(_AGAINST)
_IN_RE = _phrase_regex(_IN)
_NEG_RE = re.compile(
    r"(?<![\w'])(?:" + "|".join(re.escape(n) for n in sorted(_NEGATORS, key=len, reverse=True)) + r")(?![\w])"
    r"|n't\b"
)
_EXCEPT_RE = _phrase_regex(_EXCEPTIONS)
_POLAR_LEXICON = frozenset(
    w for phrase in (*_OUT, *_AGAINST, *_IN, *_NEGATORS, *_EXCEPTIONS) for w in _TOKEN.findall(phrase)
)


def _spelled_text(text: str) -> str:
    """``text`` lower case with typos of the polarity words mended."""
    return re.sub(r"[A-Za-z]+", lambda m: _spelled(m.group(), _POLAR_LEXICON), text.lower())


def polarity(clause: str) -> int | None:
    """+1 when the clause keeps its value, -1 when it rules it out, None when it says neither
    (an elliptic "X didn't", "not X": the caller flips the clause before)."""
    said = _spelled_text(clause)
    sign = 1
    events = 0
    for regex, flips in ((_OUT_RE, True), (_AGAINST_RE, True), (_IN_RE, False)):
        for _ in regex.finditer(said):
            events += 1
            sign = -sign if flips else sign
        said = regex.sub(" ", said)
    negators = len(_NEG_RE.findall(said))
    if not events:
        return None if negators else 0
    return sign * (-1 if negators % 2 else 1)


# ---------------------------------------------------------------------------------------------
# Time: how long ago a clause says its value was picked (hours; larger is earlier).

_UNIT_HOURS = {
    "minute": 1 / 60,
    "hour": 1.0,
    "day": 24.0,
    "night": 24.0,
    "week": 168.0,
    "fortnight": 336.0,
    "month": 720.0,
    "year": 8760.0,
    "weekend": 168.0,
}
_COUNTS = {word: index for index, word in enumerate(NUMBER_WORDS) if index} | {
    "a": 1,
    "an": 1,
    "one": 1,
    "a couple of": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 4,
    "a couple": 2,
}
_AGO = re.compile(
    r"(?P<n>\d+|" + "|".join(sorted(map(re.escape, _COUNTS), key=len, reverse=True)) + r")\s+"
    r"(?P<unit>minutes?|hours?|days?|nights?|weeks?|fortnights?|months?|years?)\s+"
    r"(?:ago|back|before|earlier|previously)",
    re.IGNORECASE,
)
#: Fixed time words, hours ago (their order is what counts).
_WHEN = (
    ("to begin with", 1e6),
    ("at the start", 1e6),
    ("at the beginning", 1e6),
    ("originally", 1e6),
    ("original", 1e6),
    ("initially", 1e6),
    ("initial", 1e6),
    ("at first", 1e6),
    ("first", 9e5),
    ("started out", 1e6),
    ("started with", 1e6),
    ("opening", 1e6),
    ("in the beginning", 1e6),
    ("last year", 8760),
    ("in the spring", 5000),
    ("this spring", 5000),
    ("over the summer", 3000),
    ("this summer", 3000),
    ("in the summer", 3000),
    ("a month ago", 720),
    ("last month", 720),
    ("two weeks ago", 336),
    ("a fortnight ago", 336),
    ("last week", 168),
    ("last weekend", 120),
    ("over the weekend", 120),
    ("at the weekend", 120),
    ("a few days ago", 72),
    ("the other day", 72),
    ("the day before yesterday", 48),
    ("yesterday", 24),
    ("last night", 14),
    ("this morning", 7),
    ("earlier today", 5),
    ("around lunchtime", 4),
    ("at lunch", 4),
    ("lunchtime", 4),
    ("lunch", 4),
    ("this afternoon", 3),
    ("an hour ago", 1),
    ("when we started talking", 0.6),
    ("start of this conversation", 0.6),
    ("start of our conversation", 0.6),
    ("beginning of our conversation", 0.6),
    ("after the second meeting", 0.4),
    ("second meeting", 0.4),
    ("after that", 5e5),
    ("afterwards", 5e5),
    ("then", 5e5),
    ("next", 5e5),
    ("later", 5e5),
    ("after", 5e5),
    ("subsequently", 5e5),
    ("a moment ago", 0.02),
    ("a minute ago", 0.02),
    ("just now", 0.01),
    ("minutes ago", 0.05),
    ("most recently", 0.001),
    ("recently", 0.01),
    ("latest", 0.001),
    ("in the end", 0.001),
    ("finally", 0.001),
    ("eventually", 0.001),
    ("ended up", 0.001),
    ("now", 0.001),
    ("began", 1e6),
    ("back then", 1e6),
    ("kicked off", 1e6),
    ("these days", 0.001),
    ("at this point", 0.001),
    ("at the moment", 0.001),
    ("currently", 0.001),
    ("since", 0.002),
    ("switched", 0.003),
    ("changed", 0.003),
    ("moved to", 0.003),
    ("settled", 0.5),
    ("today", 6),
)
_WHEN_RE = _phrase_regex(phrase for phrase, _ in _WHEN)
_WHEN_HOURS = dict(_WHEN)
_TIME_LEXICON = frozenset(w for phrase, _ in _WHEN for w in _TOKEN.findall(phrase)) | frozenset(
    ("ago", "minutes", "hours", "days", "weeks", "months", "years", "fortnight")
)


def age(clause: str) -> float | None:
    """How many hours ago the clause says its value was picked; None when it does not say."""
    said = re.sub(r"[A-Za-z]+", lambda m: _spelled(m.group(), _TIME_LEXICON), clause.lower())
    m = _AGO.search(said)
    if m is not None:
        n = m["n"].lower()
        count = float(n) if n.isdigit() else float(_COUNTS.get(n, 1))
        unit = m["unit"].lower().rstrip("s")
        return count * _UNIT_HOURS.get(unit, 24.0)
    found = [_WHEN_HOURS[w.group()] for w in _WHEN_RE.finditer(said)]
    return max(found) if found else None


# ---------------------------------------------------------------------------------------------
# Figures said in a clause (compared).

_DOZENS = {
    "half a dozen": 6,
    "a dozen": 12,
    "two dozen": 24,
    "three dozen": 36,
    "four dozen": 48,
    "dozen": 12,
}
_FIGURE_RE = re.compile(
    r"(?<![\w.])(?P<d>\d+(?:\.\d+)?)(?![\w.]|\.\d)|(?P<w>"
    + "|".join(sorted(map(re.escape, [*_DOZENS, *(w for w in NUMBER_WORDS if w)]), key=len, reverse=True))
    + r")(?![\w])",
    re.IGNORECASE,
)


def figure(clause: str) -> float | None:
    m = _FIGURE_RE.search(clause)
    if m is None:
        return None
    if m["d"]:
        return float(m["d"])
    said = m["w"].lower()
    return float(_DOZENS[said] if said in _DOZENS else NUMBER_WORDS.index(said))


# ---------------------------------------------------------------------------------------------
# Roles: who a reference names, in general English.

#: Small thesaurus of general English: words that may stand for each other in a person's role.
_THESAURUS = (
    ("bill", "tab", "check", "pay", "paying", "payer", "covering", "cover", "foot", "treat", "expense"),
    ("wheel", "drive", "driving", "driver", "drives", "behind"),
    ("boss", "manager", "team", "lead", "leads", "runs", "head", "supervisor"),
    ("final", "say", "decision", "decides", "decider", "call", "word", "last", "maker", "deciding"),
    ("landlord", "flat", "rent", "owns", "apartment", "lets"),
    ("host", "hosting", "everyone", "party", "hosts"),
    ("new", "hire", "joined", "started", "week", "newest", "newcomer", "recruit"),
    ("budget", "approves", "spending", "money", "finances", "purse", "controls", "signs"),
    ("birthday", "forty", "turns", "turning", "celebrating"),
    ("neighbour", "neighbor", "next", "door"),
    ("call", "duty", "shift", "on-call"),
    ("local", "grew", "around", "here", "native", "raised"),
    ("daughter", "kid", "child", "girl"),
    ("car", "owner", "owns", "vehicle"),
    ("client", "customer"),
    ("founder", "project", "whole", "founded", "set", "started", "created"),
    ("present", "presenter", "presenting", "presentation", "talk", "give"),
    ("allergic", "picky", "eater", "fussy", "allergies", "diet"),
)


@cache
def _synonyms() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for group in _THESAURUS:
        stems = {stem(w) for w in group}
        for s in stems:
            table.setdefault(s, set()).update(stems)
    return {s: frozenset(v) for s, v in table.items()}


_ROLE_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "my",
        "our",
        "is",
        "are",
        "who",
        "whoever",
        "of",
        "to",
        "for",
        "with",
        "and",
        "one",
        "this",
        "that",
        "it",
        "i",
        "me",
        "us",
        "we",
        "person",
    ]
)


def _role_stems(text: str) -> set[str]:
    return {stem(t) for t in _TOKEN.findall(text.lower()) if t.lower() not in _ROLE_STOP}


def _role_match(clause: str, role: set[str]) -> float:
    """How much of a role's words (or their synonyms) the clause says."""
    lexicon = frozenset(role)
    said = {stem(_spelled(t, lexicon)) if len(t) >= 5 else stem(t) for t in _TOKEN.findall(clause.lower())}
    said -= _ROLE_STOP
    synonyms = _synonyms()
    score = 0.0
    for word in role:
        if word in said:
            score += 1.0
        elif synonyms.get(word, frozenset()) & said:
            score += 0.6
    return score


# ---------------------------------------------------------------------------------------------
# Sentences, candidates and their clauses.

# Sentence ends, and the joins a request strings its facts with (" - ", "; ", ", so ").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*|\s+-\s+|,\s+so\s+(?=\w)")
_CLAUSE_BREAK = re.compile(
    r"[,;:()]|\s-\s|\b(?:but|and|then|while|whereas|though|although|yet)\b", re.IGNORECASE
)


def sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    quoted = [(q.start(), q.end()) for q in re.finditer(r'"[^"]*"', text)]
    for m in _SENTENCE_END.finditer(text):
        if any(a < m.start() < b for a, b in quoted):
            continue  # "Working from home - ping if urgent" is one value
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


@dataclass(slots=True)
class Candidate:
    find: _Find
    sentence: tuple[int, int]
    clause: str  # the words of its sentence that are about it (its value left out)
    said: str  # the value as the text says it


def _clauses(text: str, sentence: tuple[int, int], finds: list[_Find]) -> list[Candidate]:
    """The candidates of one sentence, each with the stretch of the sentence about it: cut
    between two candidates at the last break (comma, "but", "and") between them."""
    finds = sorted(finds, key=lambda f: f.start)
    cuts = [sentence[0]]
    for left, right in itertools.pairwise(finds):
        between = text[left.end : right.start]
        strong = re.search(r";|\s-\s|:", between)
        breaks = list(_CLAUSE_BREAK.finditer(between))
        cut = strong.start() if strong else (breaks[-1].start() if breaks else 0)
        cuts.append(left.end + cut)
    cuts.append(sentence[1])
    found = []
    for index, f in enumerate(finds):
        clause = text[cuts[index] : f.start] + " " + text[f.end : cuts[index + 1]]
        found.append(Candidate(f, sentence, clause, text[f.start : f.end]))
    return found


def _disjoint(finds: list[_Find]) -> list[_Find]:
    kept: list[_Find] = []
    for f in sorted(finds, key=lambda f: (-(f.end - f.start), f.start)):
        if not any(f.start < k.end and k.start < f.end for k in kept):
            kept.append(f)
    return sorted(kept, key=lambda f: f.start)


def candidates(
    text: str, finder: Callable[[str], list[_Find]], skip: Sequence[tuple[int, int]]
) -> list[Candidate]:
    """The values ``finder`` reads in the sentences of ``text`` that hold none of ``skip``."""
    found: list[Candidate] = []
    for sentence in sentences(text):
        if any(sentence[0] <= s < sentence[1] for s, _ in skip):
            continue
        piece = text[sentence[0] : sentence[1]]
        finds = [
            _Find(sentence[0] + f.start, sentence[0] + f.end, f.value, f.strength)
            for f in finder(piece)
            if not isinstance(f.value, (list, dict))
        ]
        if finds:
            found.extend(_clauses(text, sentence, _disjoint(finds)))
    # The same value said twice is one candidate (a rewording may repeat it).
    unique: dict[str, Candidate] = {}
    for c in found:
        unique.setdefault(str(c.find.value).lower(), c)
    return list(unique.values())


# ---------------------------------------------------------------------------------------------
# Picking: the candidate a reference wants.


_CONTRAST = re.compile(r"\b(?:but|whereas|while|unlike|however|though|yet)\b", re.IGNORECASE)


def pick_eliminated(found: list[Candidate]) -> Candidate | None:
    signs: list[float] = []
    previous = 0
    for index, c in enumerate(found):
        sign = polarity(c.clause)
        head = c.clause.split(c.said)[0] if c.said in c.clause else c.clause
        before = _spelled_text(c.clause[: max(0, len(c.clause) // 2)])
        if _EXCEPT_RE.search(before) and (sign or 0) <= 0:
            sign = 2  # "everything but X got vetoed", "apart from X, all of it is history"
        elif sign is None:
            sign = -previous if previous else 0  # "Lisbon fell through, Porto didn't"
        elif sign == 0 and index and found[index - 1].sentence == c.sentence and not head.strip(" ,;(and"):
            sign = previous  # "(Tokyo and Ashfield)": the list shares its clause's polarity
        elif sign == 0 and previous and _CONTRAST.search(c.clause):
            sign = -previous  # "880 mg didn't work out, but 475 mg did"
        signs.append(sign)
        previous = int(max(-1, min(1, sign)))
    for index in range(len(found) - 2, -1, -1):
        # "880 mg and 265 mg didn't work out": a list item shares the polarity of the one after it.
        c, after = found[index], found[index + 1]
        if signs[index] == 0 and after.sentence == c.sentence and not c.clause.strip(" ,;(and\n"):
            signs[index] = signs[index + 1]
    kept = [c for c, s in zip(found, signs, strict=True) if s > 0]
    if len(kept) == 1:
        return kept[0]
    out = [c for c, s in zip(found, signs, strict=True) if s < 0]
    left = [c for c in found if c not in out]
    return left[0] if len(left) == 1 else None


_HARD_STOP = re.compile(r"[.!?;](?:\s|$)")


def _role_context(text: str, c: Candidate, found: list[Candidate]) -> str:
    """The stretch about the candidate's person: back to the last sentence end or semicolon (or
    the candidate before), on to the next ("There's Lucas, who joined us this week - 25 litres
    is what they're after")."""
    start = max([m.end() for m in _HARD_STOP.finditer(text, 0, c.find.start)] + [0])
    start = max([start] + [o.find.end for o in found if o.find.end <= c.find.start])
    stop = _HARD_STOP.search(text, c.find.end)
    end = stop.start() if stop else len(text)
    end = min([end] + [o.find.start for o in found if o.find.start >= c.find.end])
    return text[start : c.find.start] + " " + text[c.find.end : end]


def pick_by_role(found: list[Candidate], role: set[str], text: str) -> Candidate | None:
    scores = [
        max(_role_match(c.clause, role), _role_match(_role_context(text, c, found), role)) for c in found
    ]
    best = max(scores, default=0.0)
    if best > 0 and scores.count(best) == 1:
        return found[scores.index(best)]
    # By elimination: someone said NOT to hold the role; the candidate not theirs.
    ruled: set[str] = set()
    for start, end in sentences(text):
        said = text[start:end]
        if _NEG_RE.search(said.lower()) and _role_match(said, role) >= 1.0:
            ruled.update(re.findall(r"\b[A-Z][a-z]{2,}\b", said))
    if ruled:
        left = [c for c in found if not ruled & set(re.findall(r"\b[A-Z][a-z]{2,}\b", c.clause))]
        if len(left) == 1:
            return left[0]
    return None


def pick_in_time(found: list[Candidate], want: str) -> Candidate | None:
    """first / last / middle by how long ago each was said to be picked, else by text order."""
    ages = [age(c.clause) for c in found]
    order = sorted(range(len(found)), key=lambda i: found[i].find.start)
    # Unknown ages sit by their text order next to the known ones: said before a known one,
    # picked before it ("began with A and then switched over to B"); said after, picked after.
    for position, index in enumerate(order):
        if ages[index] is not None:
            continue
        later = next((ages[j] for j in order[position + 1 :] if ages[j] is not None), None)
        earlier = next((ages[j] for j in reversed(order[:position]) if ages[j] is not None), None)
        if later is not None:
            ages[index] = later * 1.5 + 1.0
        elif earlier is not None:
            ages[index] = earlier * 0.5
    keyed = [(-(ages[i] or 0.0), position) for position, i in enumerate(order)]
    if all(a is None for a in ages):
        keyed = [(0.0, position) for position, _ in enumerate(order)]
    ranked = [order[position] for _, position in sorted(keyed)]
    if want == "first":
        return found[ranked[0]]
    if want == "last":
        return found[ranked[-1]]
    return found[ranked[1]] if len(found) == 3 else None


def pick_by_figure(found: list[Candidate], want: str) -> Candidate | None:
    figures = [figure(c.clause) for c in found]
    known = [(f, c) for f, c in zip(figures, found, strict=True) if f is not None]
    if len(known) < 2 or len(known) < len(found):
        return None
    known.sort(key=lambda item: item[0])
    return known[0][1] if want == "low" else known[-1][1]


# ---------------------------------------------------------------------------------------------
# The slot a reference stands for, and the rewrite.


_FOR_SLOT = re.compile(r"\s*(?:for|as|in) (?:the |my |our )?", re.IGNORECASE)


def _slots_of(text: str, start: int, offered: Sequence[_Tool], end: int = -1) -> list[_Slot]:
    """The offered parameters, best first, whose description words stand right before the
    reference (or right after it: "the most popular one for the sample identifier")."""
    after = _FOR_SLOT.match(text, end) if end >= 0 else None
    if after is not None:
        stop = re.search(r"[.;:!?/]|\s-\s|,", text[after.end() : after.end() + 80])
        tail = text[after.end() : after.end() + (stop.start() if stop else 80)]
        ranked = _ranked_slots(list(reversed(_words(tail)[:6])), offered)
        if ranked and ranked[0][0] >= 3.0:
            return [slot for _, slot in ranked]
    before = _words(text[max(0, start - 60) : start])[-6:]
    return [slot for _, slot in _ranked_slots(before, offered)]


def _ranked_slots(before: list[str], offered: Sequence[_Tool]) -> list[tuple[float, _Slot]]:
    ranked: list[tuple[float, _Slot]] = []
    for tool in offered:
        for slot in tool.slots:
            near = sum(
                _idf(w) * (1.0 if i >= len(before) - 3 else 0.6)
                for i, w in enumerate(before)
                if w in slot.context
            )
            if near > 0:
                ranked.append((near, slot))
    ranked.sort(key=lambda item: -item[0])
    return ranked


def _first_finder(text: str, ref: Ref, offered: Sequence[_Tool]) -> Callable[[str], list[_Find]] | None:
    slots = _slots_of(text, ref.start, offered, ref.end)
    return _slot_finder(slots[0]) if slots else None


def _slot_finder(slot: _Slot) -> Callable[[str], list[_Find]]:
    return _finder(slot.gen) if slot.gen is not None else _generic_finder(slot)


@dataclass(frozen=True, slots=True)
class Ref:
    start: int
    end: int
    device: str
    want: Any  # eliminated: None; attributed: role words; sequence: first/last/middle; compared: low/high
    role: frozenset[str] = frozenset()


def resolve(text: str, refs: list[Ref], offered: Sequence[_Tool]) -> str:
    """``text`` with each reference that a candidate answers written as that candidate, and the
    candidates' sentences blanked."""
    if not refs or not offered:
        return text
    edits: list[tuple[int, int, str]] = []
    skip = [(r.start, r.end) for r in refs]
    for ref in refs:
        # The best named parameter whose values the other sentences state two or more of.
        found = []
        for slot in _slots_of(text, ref.start, offered, ref.end)[:3]:
            finder = _slot_finder(slot)
            found = _of_device(candidates(text, finder, skip), ref.device)
            rivals = [r for r in refs if r.device == ref.device and _first_finder(text, r, offered) is finder]
            if len(rivals) > 1 and ref in rivals:
                # Two asks of one device (parallel requests): each takes the facts nearest to it.
                found = [c for c in found if min(rivals, key=lambda r: abs(r.start - c.find.start)) is ref]
            if len(found) >= 2:
                break
        if len(found) < 2:
            continue
        chosen: Candidate | None = None
        if ref.device == "eliminated":
            chosen = pick_eliminated(found)
        elif ref.device == "attributed":
            chosen = pick_by_role(found, set(ref.role), text)
        elif ref.device == "sequence":
            chosen = pick_in_time(found, str(ref.want))
        elif ref.device == "revised":
            # Two people, two picks each: the sentence of the role's person, then first or last.
            by_sentence: dict[tuple[int, int], list[Candidate]] = {}
            for c in found:
                by_sentence.setdefault(_piece_of(text, c), []).append(c)

            def about(piece: tuple[int, int]) -> str:
                # A piece that names no role is about the person of the piece before it
                # ("Malen is the client; src/metrics.rs was their first choice, ...").
                said = text[piece[0] : piece[1]]
                if max((_role_match(said, set(r | d)) for r, d in _roles()), default=0.0) >= 1.0:
                    return said
                before = [m.end() for m in _HARD_STOP.finditer(text, 0, max(0, piece[0] - 2))]
                return text[(before[-1] if before else 0) : piece[1]]

            scored = sorted(by_sentence.items(), key=lambda item: -_role_match(about(item[0]), set(ref.role)))
            if scored and _role_match(about(scored[0][0]), set(ref.role)) > 0:
                mine = scored[0][1]
                chosen = pick_in_time(mine, str(ref.want)) if len(mine) >= 2 else None
        elif ref.device == "compared":
            chosen = pick_by_figure(found, str(ref.want))
        if chosen is None:
            continue
        edits.append((ref.start, ref.end, chosen.said))
        for c in found:
            edits.append((c.sentence[0], c.sentence[1], "(noted)."))
    return apply_edits(text, edits)


def _piece_of(text: str, c: Candidate) -> tuple[int, int]:
    """The stretch of the candidate's sentence between semicolons (one person's picks)."""
    start, end = c.sentence
    for m in re.finditer(r";\s+", text[start:end]):
        if start + m.end() <= c.find.start:
            start, end = start + m.end(), end
        elif start + m.start() >= c.find.end:
            end = start + m.start()
            break
    return start, end


def _of_device(found: list[Candidate], device: str) -> list[Candidate]:
    """The candidates whose clauses say what the device's facts say (a time, a figure, a ruling,
    a role), when two or more do: another device's candidates of the same type stay out."""
    if device in ("sequence", "revised"):
        said = [c for c in found if age(c.clause) is not None]
    elif device == "compared":
        said = [c for c in found if figure(c.clause) is not None]
    elif device == "eliminated":
        said = [c for c in found if polarity(c.clause) != 0]
    else:
        return found
    return said if len(said) >= 2 else found


# ---------------------------------------------------------------------------------------------
# References: the public tables' reference phrases (a rewording keeps them: they are mentions).


@cache
def _ref_tables() -> tuple[tuple[re.Pattern[str], str, Any, frozenset[str]], ...]:
    from .choices import _module  # the device modules, where the generator has them

    entries: list[tuple[re.Pattern[str], str, Any, frozenset[str]]] = []

    def _either(phrases: Iterable[str]) -> re.Pattern[str]:
        ordered = sorted(set(phrases), key=len, reverse=True)
        return re.compile(r"(?<![\w'])(?:" + "|".join(map(re.escape, ordered)) + r")(?![\w])", re.IGNORECASE)

    eliminated = _module("eliminated")
    eliminated_refs: tuple[str, ...] = tuple(getattr(eliminated, "_REFS", ()))
    if eliminated_refs:
        entries.append((_either(eliminated_refs), "eliminated", None, frozenset()))
    attributed = _module("attributed")
    roles = tuple(getattr(attributed, "_ROLES", ())) if attributed is not None else ()
    for role, ref in roles:
        words = frozenset(_role_stems(role) | _role_stems(ref))
        said = [frame.replace("{ref}", ref) for frame in getattr(attributed, "_REFS", ())]
        if said:
            entries.append((_either(said), "attributed", None, words))
        revised = _module("revised")
        if revised is not None:
            for want, table in (("first", "_FIRST"), ("last", "_LAST")):
                said = [frame.replace("{ref}", ref) for frame in getattr(revised, table, ())]
                if said:
                    entries.append((_either(said), "revised", want, words))
    sequence = _module("sequence")
    if sequence is not None:
        for want, table in (("first", "_FIRST"), ("last", "_LAST"), ("middle", "_MIDDLE")):
            if getattr(sequence, table, ()):
                entries.append((_either(getattr(sequence, table)), "sequence", want, frozenset()))
    compared = _module("compared")
    if compared is not None:
        scales = [*getattr(compared, "_SCALES", ())]
        if getattr(compared, "_PLACES", None) is not None:
            scales.append(compared._PLACES)
        for scale in scales:
            entries.append((_either(scale.low), "compared", "low", frozenset()))
            entries.append((_either(scale.high), "compared", "high", frozenset()))
    return tuple(entries)


# References said in other words than the tables' ("my newest choice", "the one with the fewest
# grumbles", "what the person paying would rather have"): general English for which one of several.
_CHOICE_NOUN = r"(?:pick|choice|option|one|idea|selection|preference|call|entry|candidate)"
_CUE_REFS: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), device, want)
    for pattern, device, want in (
        (
            r"\b(?:the|my|our)\s+(?:very\s+)?(?:first|original|opening|initial|earliest|starting)\s+"
            + _CHOICE_NOUN
            + r"\b|\bwhat (?:i|we) (?:had|picked|chose|wanted|went with) (?:originally|at first|initially"
            r"|to begin with|first)\b|\bthe one (?:i|we) (?:started|began) (?:out )?with\b"
            r"|\bwhere (?:i|we) started\b",
            "sequence",
            "first",
        ),
        (
            r"\b(?:the|my|our)\s+(?:latest|newest|most recent|current|final|last)\s+" + _CHOICE_NOUN + r"\b"
            r"|\bthe one (?:i|we) (?:ended up with|landed on|settled on in the end|finally chose)\b"
            r"|\bwhere (?:i|we) (?:landed|ended up)\b|\bwhat (?:i|we) (?:ended up with|landed on)\b",
            "sequence",
            "last",
        ),
        (
            r"\b(?:the|my|our)\s+second\s+" + _CHOICE_NOUN + r"\b|\bthe one in (?:the )?(?:between|middle)\b"
            r"|\bthe (?:pick|choice|one|option) before the (?:last|latest|final) one\b",
            "sequence",
            "middle",
        ),
        (
            r"\bthe (?:one|option|pick) (?:with|that (?:got|has"
            r"|had|drew)) the (?:fewest|least|lowest|smallest"
            r" number of)\s+[a-z]+\b|\bthe least (?:popular|liked|voted)(?: one)?\b"
            r"|\bthe (?:nearest|closest|shortest|quickest)(?: one| of them| option)?\b"
            r"|\bthe one (?:we|i) (?:last used|used (?:most )?recently"
            r"|used last)\b|\bthe most recently used\b"
            r"|\bthe (?:least|fewest)[- ](?:[a-z]+[- ])?(?:one|option|pick)\b"
            r"|\bthe one (?:nobody|no one) (?:much |really )?(?:liked|wanted|voted for|picked)\b"
            r"|\bthe one that came (?:last|bottom)(?: in the vote)?\b"
            r"|\bthe least (?:favourite|favorite)\b",
            "compared",
            "low",
        ),
        (
            r"\bthe (?:one|option|pick) (?:with|that (?:got|has"
            r"|had|drew)) the (?:most|highest|largest|biggest"
            r" number of)\s+[a-z]+\b|\bthe most (?:popular|liked|voted|distant)(?: one| of them)?\b"
            r"|\bthe one that won(?: the vote)?\b|\bthe (?:farthest"
            r"|furthest|longest)(?: one| of them| option)?\b"
            r"|\bthe one (?:from|used) (?:longest|the longest) ago\b"
            r"|\bthe (?:oldest|least recent)(?: one| of them| option)?\b"
            r"|\bthe (?:most|top)[- ](?!recent)(?:[a-z]+[- ])?(?:one|option|pick)\b"
            r"|\bthe one that came (?:top|first)(?: in the vote)?\b"
            r"|\bthe (?:favourite|favorite|winner|top pick|crowd favourite|crowd favorite)\b",
            "compared",
            "high",
        ),
        (
            r"\b(?:the one|the option|the pick|whichever|whatever"
            r"|the choice)(?: one)?\s+(?:that\s+|which\s+)?"
            r"(?:still works|is (?:still )?left|'s left|remains|is still standing|still stands|survived"
            r"|nobody ruled out|no one ruled out|wasn't ruled out|is still (?:on|open|available|in play)"
            r"|(?:is )?still in the running|(?:is )?still in contention|(?:is )?still on the table"
            r"|made the cut|is still workable|is still possible|is still valid|survives|still holds"
            r"|holds up|is still good|is still fine)\b"
            r"|\bthe (?:remaining|surviving) (?:one|option|pick|choice)\b|\bwhat(?:ever)?(?: is|'s) left\b",
            "eliminated",
            "",
        ),
    )
)
_WHO_REFS = (
    re.compile(
        r"\b(?:what|whatever|the (?:one|option|pick|choice)(?: that)?)\s+(?P<who>[a-z' -]{3,40}?)\s+"
        r"(?P<verb>wants|would rather have|prefers|would like|asked for|is rooting for|likes|picked|chose"
        r"|voted for|is pushing for|went for|wanted|started out with|began with|switched to|changed to"
        r"|ended up with|has now|wants now|would go with|is keen on|fancies|moved over to|moved on to"
        r"|moved to|went with|settled on|landed on|kicked off with|requested|is after|was after|opted for"
        r"|has gone for|is backing|backs|favours|favors|would pick|named|suggested)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?P<who>(?:the|my|our|whoever)\s[a-z' -]{2,40}?)'s\s+(?P<verb>(?:initial "
        r"|original |first |current |"
        r"latest |new |newest |present )?(?:choice|pick"
        r"|preference|favourite|favorite|vote|idea|selection))\b",
        re.IGNORECASE,
    ),
)
_FIRST_WORDS = re.compile(
    r"\b(?:initial|original|originally|first|started|began|at first|to begin with|kicked off|beginning)\b",
    re.I,
)
_LAST_WORDS = re.compile(
    r"\b(?:current|latest|newest|now|switched|changed|new|present|ended|moved|settled|landed)\b", re.I
)
_FIRST_AFTER = re.compile(
    r"^\s*(?:in the beginning|at the beginning|originally|at first|initially|to begin with|at the start"
    r"|first|back then)\b",
    re.I,
)
_LAST_AFTER = re.compile(
    r"^\s*(?:at this point|now|these days|currently|in the end|at the moment|today)\b", re.I
)


@cache
def _roles() -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """(the stems of a role's reference, of its description) per public role."""
    from .choices import _module

    attributed = _module("attributed")
    roles = tuple(getattr(attributed, "_ROLES", ())) if attributed is not None else ()
    return tuple((frozenset(_role_stems(ref)), frozenset(_role_stems(role))) for role, ref in roles)


def _role_named(who: str) -> frozenset[str] | None:
    """The role a person's description names ("the person paying", "whoever pays"), by its stems."""
    best: tuple[float, frozenset[str] | None] = (0.0, None)
    for ref, role in _roles():
        score = _role_match(who, set(ref)) / max(1, len(ref))
        score = max(score, _role_match(who, set(role)) / max(1, len(role)))
        if score > best[0]:
            best = (score, ref | role)
    return best[1] if best[0] >= 0.5 else None


# "the one I finally went with", "what we had at the very start": which one by the words inside.
_WE_REF = re.compile(
    r"\b(?:the one|what|whichever|the option|the pick|the choice|the thing)\s+(?:that\s+|which\s+)?"
    r"(?:i|we)\s+(?P<rest>(?:[a-z']+\s+){0,4}?[a-z']+)(?=\s*(?:[.;:,/!?]|\s-\s|\sfor\s|$))",
    re.IGNORECASE,
)
_WE_FIRST = re.compile(
    r"\b(?:originally|first|initially|started|began|start|opened|beginning|kicked)\b", re.I
)
_WE_LAST = re.compile(r"\b(?:finally|eventually|end|ended|landed|last|latest|now|recently|currently)\b", re.I)


def _cue_refs(text: str) -> list[Ref]:
    found: list[Ref] = []
    for m in _WE_REF.finditer(text):
        if _WE_FIRST.search(m["rest"]):
            found.append(Ref(m.start(), m.end(), "sequence", "first"))
        elif _WE_LAST.search(m["rest"]):
            found.append(Ref(m.start(), m.end(), "sequence", "last"))
    for regex, device, want in _CUE_REFS:
        for m in regex.finditer(text):
            found.append(Ref(m.start(), m.end(), device, want or None))
    for regex in _WHO_REFS:
        for m in regex.finditer(text):
            role = _role_named(m["who"])
            if role is None:
                continue
            said = m.group()
            after = text[m.end() : m.end() + 30]
            if _FIRST_WORDS.search(said) or _FIRST_AFTER.search(after):
                found.append(Ref(m.start(), m.end(), "revised", "first", role))
            elif _LAST_AFTER.search(after):
                found.append(Ref(m.start(), m.end(), "revised", "last", role))
            elif _FIRST_WORDS.search(said):
                found.append(Ref(m.start(), m.end(), "revised", "first", role))
            elif _LAST_WORDS.search(m["verb"]):
                found.append(Ref(m.start(), m.end(), "revised", "last", role))
            else:
                found.append(Ref(m.start(), m.end(), "attributed", None, role))
    return found


def _mended(text: str) -> str:
    """``text`` with typos of the reference cue words mended where that keeps its length (two
    letters swapped, one changed), so that spans still point into the text."""
    return re.sub(
        r"[A-Za-z]+",
        lambda m: (
            m.group()
            if len(_spelled(m.group(), _CUE_LEXICON)) != len(m.group())
            else _spelled(m.group(), _CUE_LEXICON)
        ),
        text,
    )


_CUE_LEXICON = frozenset(
    [
        "first",
        "original",
        "opening",
        "initial",
        "earliest",
        "latest",
        "newest",
        "recent",
        "current",
        "final",
        "second",
        "between",
        "middle",
        "before",
        "fewest",
        "least",
        "lowest",
        "smallest",
        "nearest",
        "closest",
        "shortest",
        "quickest",
        "popular",
        "most",
        "highest",
        "largest",
        "biggest",
        "farthest",
        "furthest",
        "longest",
        "oldest",
        "remaining",
        "surviving",
        "standing",
        "survived",
        "choice",
        "option",
        "preference",
        "selection",
        "prefers",
        "rather",
        "wants",
        "started",
        "switched",
        "changed",
    ]
)


def refs_in(text: str) -> list[Ref]:
    found: list[Ref] = []
    for regex, device, want, role in _ref_tables():
        for m in regex.finditer(text):
            found.append(Ref(m.start(), m.end(), device, want, role))
    found.extend(_cue_refs(_mended(text)))
    found.sort(key=lambda r: (r.start, -(r.end - r.start)))
    kept: list[Ref] = []
    for r in found:
        if kept and r.start < kept[-1].end:
            continue
        kept.append(r)
    return kept


def resolved_generic(text: str, offered: Sequence[_Tool]) -> str:
    """``text`` with the references the frame tables left unanswered answered by general cues."""
    return resolve(text, refs_in(text), offered)


# ---------------------------------------------------------------------------------------------
# Events about someone (aside / unsaid), matched by their words.

_KIND_FINDERS: dict[str, Callable[[str], list[_Find]]] = {}


def _kind_finder(kind: str) -> Callable[[str], list[_Find]]:
    from .finders import _ADDRESS, _EMAIL, _HANDLE, _PERSON, _PHONE, _PLACE, _QUOTED_RE

    def shaped(*regexes: re.Pattern[str]) -> Callable[[str], list[_Find]]:
        return lambda text: [
            _Find(m.start(), m.end(), m.group(), 2.0) for r in regexes for m in r.finditer(text)
        ]

    thing = re.compile(
        r"(?<![\w@/.-])(?:[A-Z]{2,}[-_][A-Za-z0-9][A-Za-z0-9._/-]*[A-Za-z0-9]|[a-z0-9_-]+(?:/[\w.-]+)+"
        r"|v\d+(?:\.\d+)+|[A-Z]{2,}\d{6,}|\d{10,})"
    )
    table: dict[str, Callable[[str], list[_Find]]] = {
        "date": _dates,
        "time": _times,
        "place": shaped(_PLACE, re.compile(r"(?<=\bin )[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*")),
        "person": shaped(_PERSON),
        "email": shaped(_EMAIL),
        "phone": shaped(_PHONE),
        "thing": shaped(thing, _HANDLE, _QUOTED_RE, _ADDRESS),
    }
    return table.get(kind, lambda text: [])


def _unslotted(frame: str) -> str:
    return re.sub(r"\{\w+\}", " ", frame)


@cache
def _event_words() -> dict[str, list[tuple[str, frozenset[str], frozenset[str]]]]:
    """Per kind: (event id, the stems of its stating sentences, the stems of its references)."""
    from .choices import _module as device

    aside = device("aside")
    events = getattr(aside, "EVENTS", None) if aside is not None else None
    if events is None:
        return {}
    table = events() if callable(events) else events
    out: dict[str, list[tuple[str, frozenset[str], frozenset[str]]]] = {}
    for kind, listed in dict(table).items():
        for index, event in enumerate(listed):
            stop = {stem(w) for w in _ROLE_STOP} | {"on", "at", "in", "from"}
            states = frozenset(stem(t) for frame in event.states for t in _TOKEN.findall(_unslotted(frame)))
            refers = frozenset(
                stem(t) for frame in (*event.refers, *event.keeps) for t in _TOKEN.findall(_unslotted(frame))
            )
            states, refers = states - stop, refers - stop
            out.setdefault(kind, []).append((f"{kind}{index}", states, refers))
    return out


def event_of(sentence: str, kind: str) -> str | None:
    """The event of ``kind`` whose stating words the sentence shares most (None: none shared)."""
    said = {stem(t) for t in _TOKEN.findall(sentence.lower())}
    best, best_score = None, 0.0
    for event, states, refers in _event_words().get(kind, []):
        score = len(said & states) + 0.5 * len(said & (refers - states))
        if score > best_score:
            best, best_score = event, score
    return best


def stated_event(
    text: str, subject: str, event: str, skip: tuple[int, int]
) -> tuple[str | None, list[tuple[int, int]]]:
    """The value a sentence about ``subject`` states for ``event`` (None when none does: the
    request lacks it), and the sentences about the subject that state a value of the kind."""
    kind = re.sub(r"\d+$", "", event)
    finder = _kind_finder(kind)
    value: str | None = None
    spans: list[tuple[int, int]] = []
    unknown: list[str] = []  # values in sentences whose words name no event of the kind
    for start, end in sentences(text):
        if start <= skip[0] < end:
            continue
        said = text[start:end]
        if subject.lower() not in said.lower():
            continue
        finds = finder(said)
        if not finds:
            continue
        spans.append((start, end))
        named = event_of(said, kind)
        if value is None and named == event:
            value = said[finds[0].start : finds[0].end]
        elif named is None:
            unknown.append(said[finds[0].start : finds[0].end])
    if value is None and len(unknown) == 1:
        value = unknown[0]  # the one fact about the subject, in words no event's table shares
    return value, spans
