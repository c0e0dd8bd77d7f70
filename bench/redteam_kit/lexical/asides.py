"""Requests that ask for something else, and values stated about other people, read with the
generator's own public tables.

Lookalike kinds (tasks/distractors/kinds: reminder, dry_run, quote, history, status, undo, watch)
each ship the ways a person asks for them instead of the real action ("remind me later to deal
with this: ...") and the words a rewording must keep ("remind me"): a request that says one asks
for that kind, so only a tool of that kind may answer it (found by the words the kind adds to a
tool's name and description), else no call.

Values stated as facts about someone (tasks/devices/aside and unsaid, where the generator has
them: "my sister flies in on May 12 ... the day my sister lands") come with tables of the
sentences that state them and the ways a request refers to them: a reference whose fact is there
is that fact's value; one whose fact is not there has no value (no call); the other facts are
decoys and are blanked.
"""

from __future__ import annotations

import importlib
import re
from collections import Counter
from functools import cache
from types import ModuleType

from .choices import _X, _X_END, _X_START, _alt, _Filtered, candidate
from .generic import _kind_finder, sentences, stated_event
from .words import _words, apply_edits

__all__ = ["asked_kinds", "kind_words", "resolved_events"]


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


@cache
def _kinds() -> tuple[tuple[str, re.Pattern[str], frozenset[str]], ...]:
    """(kind, what a request says to ask for it, the words it adds to a tool) per lookalike kind."""
    distractors = _module("tasks.distractors")
    library = _module("tasks.library")
    if distractors is None or library is None:
        return ()
    golds = library.tools()[:: max(1, len(library.tools()) // 40)]
    found = []
    for kind in getattr(distractors, "KINDS", ()):
        asks = getattr(kind, "asks", ())
        keeps = getattr(kind, "keeps", ())
        if not asks:
            continue
        added: Counter[str] = Counter()
        made = 0
        for gold in golds:
            tool = kind.derive(gold)
            if tool is None:
                continue
            made += 1
            added.update(
                set(_words(f"{tool.name} {tool.description}"))
                - set(_words(f"{gold.name} {gold.description}"))
            )
        signature = frozenset(word for word, n in added.items() if made and n >= 0.8 * made)
        fixed = [ask.replace("{request}", "").strip(" :") for ask in asks]
        # Phrases of one word are common words ("cost", "review"): a frame or a phrase of two words says it.
        said = [*fixed, *(keep for keep in keeps if " " in keep)]
        regex = re.compile(rf"(?<!\w)(?:{_alt(said)})(?!\w)", re.IGNORECASE)
        found.append((str(kind.name), regex, signature))
    return tuple(found)


_QUOTED = re.compile(r'"[^"]*"')


def asked_kinds(text: str) -> list[frozenset[str]]:
    """The word signatures of the lookalike kinds ``text`` asks for (outside quoted text)."""
    unquoted = _QUOTED.sub('""', text)
    said = [signature for _, regex, signature in _kinds() if regex.search(unquoted)]
    if said or not SIGNATURE_WORDS:
        return said
    # A request reworded as a lookalike's own description ("check only whether a request of this
    # kind would be accepted, it does not carry it out"): most of a kind's signature words.
    words = set(_words(unquoted))
    best: tuple[float, frozenset[str] | None] = (0.0, None)
    for _, _, signature in _kinds():
        shared = len(signature & words)
        if shared >= max(SIGNATURE_WORDS, 0.3 * len(signature)) and shared / len(signature) > best[0]:
            best = (shared / len(signature), signature)
    return [best[1]] if best[1] is not None else []


#: How many of a kind's signature words a request must say to ask for that kind (0: frames only).
SIGNATURE_WORDS = 4


def kind_words(described: frozenset[str], signature: frozenset[str]) -> bool:
    """Whether a tool's own words make it a tool of the kind with ``signature``."""
    return bool(signature) and len(described & signature) >= max(1, len(signature) // 2)


@cache
def _events() -> tuple[tuple[_Filtered, bool, str], ...]:
    """(a frame, whether it states the event (else refers to it), the event's id) over every
    kind of event."""
    aside = _module("tasks.devices.aside")
    if aside is None:
        return ()
    subjects = getattr(aside, "SUBJECTS", ())
    events = getattr(aside, "EVENTS", None)
    if not subjects or events is None:
        return ()
    subject = rf"(?P<subj>{_alt(subjects)})"
    table = events() if callable(events) else events
    found = []
    for kind, listed in dict(table).items():
        for index, event in enumerate(listed):
            for frame in event.states:
                regex = _Filtered(_frame(frame, subject), re.IGNORECASE, frame)
                found.append((regex, True, f"{kind}{index}"))
            for frame in event.refers:
                regex = _Filtered(_frame(frame, subject), re.IGNORECASE, frame)
                found.append((regex, False, f"{kind}{index}"))
    return tuple(found)


def _frame(frame: str, subject: str) -> str:
    out = []
    for part in re.split(r"(\{\w+\})", frame):
        if part == "{subj}":
            out.append(subject)
        elif part == "{x}":
            out.append((_X_START if not out else "") + _X)
        else:
            out.append(re.escape(part))
    return "".join(out) + (_X_END if frame.endswith("{x}") else "")


def resolved_events(text: str) -> tuple[str, bool]:
    """``text`` with each reference to an event replaced by the value its fact states and the
    facts blanked; and whether a reference has no fact (then the request lacks that value)."""
    entries = _events()
    if not entries:
        return text, False
    edits: list[tuple[int, int, str]] = []
    facts: list[tuple[int, int, str, str, str]] = []
    refs: list[tuple[int, int, str, str]] = []
    for regex, states, event in entries:
        for m in regex.finditer(text):
            if states:
                x, end = candidate(text, m)
                facts.append((m.start(), end, event, m["subj"].lower(), x))
            else:
                refs.append((m.start(), m.end(), event, m["subj"].lower()))
    taken = [(s, e) for s, e, *_ in refs] + [(s, e) for s, e, *_ in facts]
    refs.extend(r for r in _worded_refs(text) if not any(r[0] < e and s < r[1] for s, e in taken))
    unresolved = False
    for start, end, event, subject in refs:
        stated = [f for f in facts if f[2] == event and f[3] == subject and f[4]]
        if not stated:
            # No frame states it: a rewording may have said the fact in its own words. The
            # sentences about the subject, matched to the event by their words.
            value, spans = stated_event(text, subject, event, (start, end))
            if value is None:
                unresolved = True
                continue
            edits.append((start, end, value))
            edits.extend((s, e, "(noted).") for s, e in spans + _about_anyone(text, event, (start, end)))
            continue
        edits.append((start, end, stated[0][4]))
    edits.extend((start, end, "(noted)") for start, end, *_ in facts)
    return apply_edits(text, edits), unresolved


def _about_anyone(text: str, event: str, skip: tuple[int, int]) -> list[tuple[int, int]]:
    """The sentences about any subject that state a value of the event's kind (decoys too)."""
    aside = _module("tasks.devices.aside")
    subjects = [str(s).lower() for s in getattr(aside, "SUBJECTS", ())]
    finder = _kind_finder(re.sub(r"\d+$", "", event))
    return [
        (start, end)
        for start, end in sentences(text)
        if not start <= skip[0] < end
        and any(s in text[start:end].lower() for s in subjects)
        and finder(text[start:end])
    ]


@cache
def _keeps() -> tuple[tuple[str, str], ...]:
    """(the words a rewording keeps of a reference, the event's id), over every event."""
    aside = _module("tasks.devices.aside")
    events = getattr(aside, "EVENTS", None) if aside is not None else None
    if events is None:
        return ()
    table = events() if callable(events) else events
    return tuple(
        (str(keep).lower(), f"{kind}{index}")
        for kind, listed in dict(table).items()
        for index, event in enumerate(listed)
        for keep in getattr(event, "keeps", ())
    )


_PIECE = re.compile(r"[^.;:!?/,()]+")


def _worded_refs(text: str) -> list[tuple[int, int, str, str]]:
    """References to an event in other words than the tables' ("the date my neighbour gets the
    keys"): a stretch that names a subject and the words its reference keeps, and states no value
    of that event's kind."""
    aside = _module("tasks.devices.aside")
    subjects = sorted((str(s).lower() for s in getattr(aside, "SUBJECTS", ())), key=len, reverse=True)
    keeps = _keeps()
    if not subjects or not keeps:
        return []
    found = []
    lowered = text.lower()
    for piece in _PIECE.finditer(lowered):
        said = piece.group()
        subject = next((s for s in subjects if re.search(rf"\b{re.escape(s)}\b", said)), None)
        if subject is None:
            continue
        hits = [
            (said.find(keep), keep, event)
            for keep, event in keeps
            if re.search(rf"\b{re.escape(keep)}", said)
        ]
        if not hits:
            continue
        at, keep, event = max(hits, key=lambda hit: len(hit[1]))
        first = piece.start() + len(said) - len(said.lstrip())
        sentence = next((a, b) for a, b in [*sentences(text), (0, len(text))] if a <= first < b)
        if _kind_finder(re.sub(r"\d+$", "", event))(text[sentence[0] : sentence[1]]):
            continue  # its sentence states a value: a fact, not a reference
        where = said.find(subject)
        start = piece.start() + min(where, at)
        # Back over "the day", "the time of", "the city where" before the subject.
        lead = re.search(r"(?:\bthe\s+[a-z]+\s+(?:of\s+|when\s+|where\s+|that\s+)?)$", lowered[:start])
        if lead is not None and start - lead.start() <= 25:
            start = lead.start()
        end = piece.start() + max(where + len(subject), at + len(keep))
        found.append((start, end, event, subject))
    return found
