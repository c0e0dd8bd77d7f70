"""Values picked among written candidates, read with the generator's own phrase tables.

The choice devices (tasks/devices: eliminated, attributed, sequence, compared, where the
generator has them) write two or three candidates of a parameter in context sentences and ask for
one by meaning: "Lisbon fell through, nobody objected to Porto ... whichever is left", "Dana, who
is covering the bill, wants X ... the person paying's choice", "originally I went with X, an hour
ago I switched to Y ... my latest choice", "X got 7 votes, Y 12 ... the least popular one". Their
frames, role pairs, time markers and scales are public tables of those modules, so this reads
them from there (whatever the generator's version holds) and writes the request back with the
chosen candidate in place of the reference and the candidates' sentences blanked, so that the
rest of the miner sees one value where there were several.
"""

from __future__ import annotations

import datetime as dt
import importlib
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from types import ModuleType
from typing import Any

from tasks.devices._words import NUMBER_WORDS

from .words import apply_edits

__all__ = ["candidate", "resolved_anchored", "resolved_choices", "resolved_labelled"]

# A candidate as a fact states it: no sentence break inside (but "Porto, Portugal"), and it ends
# where the sentence does.
_X = r"(?P<x>\"[^\"]{1,120}\"|[\w'@+$](?:(?![.,;!?:]\s|\s-\s|[()]).|,\s(?=[A-Z])){0,60}?)"
_X_END = r"(?:(?<=\")|(?=\s*(?:[.,;!?:](?:\s|$)|[()])|\s+-\s|\s+(?:and|also|so|but|then|plus)\b|\s*$))"
_X_START = r"(?<![\w@/.-])"
_LEADING = re.compile(
    r"^(?:(?:and|so|but|plus|also|oh,? and|then|while|whereas)\s+|(?-i:[a-z]+),\s+)+", re.IGNORECASE
)


# A place's country after its city ("Porto, Portugal"), a date's year ("May 12, 2026"): the shortest
# candidate stops at the comma.
_COUNTRY = re.compile(
    r", (?:[A-Z][A-Za-z]+(?: [A-Z][A-Za-z]+){0,2}|\d{4})(?=\s*(?:[.,;!?:](?:\s|$)|[()])|\s+-\s|\s*$)"
)


def candidate(text: str, m: re.Match[str]) -> tuple[str, int]:
    """The candidate a fact's match states, and where the fact ends (past a place's country)."""
    x, end = m["x"], m.end()
    # Words before a candidate that starts with a capital, a digit or a quote are the sentence's.
    x = re.sub(r"^(?:[a-z]+,? )+(?=[A-Z0-9\"])", "", x)
    if m.end("x") == m.end():
        country = _COUNTRY.match(text, end)
        if country is not None:
            x, end = x + country.group(), country.end()
    return x, end


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"tasks.devices.{name}")
    except ImportError:
        return None


def _alt(texts: Any) -> str:
    return "|".join(re.escape(t) for t in sorted({str(t) for t in texts}, key=len, reverse=True))


def _frame(frame: str, **slots: str) -> str:
    """A device's frame ("{when} I went with {x}") as a regex, each placeholder its slot's."""
    out = []
    for part in re.split(r"(\{\w+\})", frame):
        name = part[1:-1] if part.startswith("{") and part.endswith("}") else None
        if name is None:
            out.append(re.escape(part))
        elif name == "x":
            out.append((_X_START if not out else "") + _X)
        else:
            out.append(slots[name])
    pattern = "".join(out)
    return pattern + (_X_END if frame.endswith("{x}") else "")


@dataclass(frozen=True, slots=True)
class _Fact:
    start: int
    end: int
    x: str
    device: str
    key: Any  # eliminated: kept?; attributed: the role; sequence: the marker's rank; compared: figure
    group: str = ""  # compared: the scale's index; the others: ""


@dataclass(frozen=True, slots=True)
class _Ref:
    start: int
    end: int
    device: str
    #: eliminated: None; attributed: the role; sequence: "first"/"last"/"middle"; compared: "low"/"high"
    want: Any
    group: str = ""


# Figures as the comparing device may say them: digits, number words, dozens (its own tables).
_DOZENS = {"half a dozen": 6, "a dozen": 12, "two dozen": 24, "three dozen": 36, "four dozen": 48}
_FIGURE_WORDS = _alt([*_DOZENS, *NUMBER_WORDS])


def _figure(said: str) -> int:
    said = said.lower()
    if said.isdigit():
        return int(said)
    return _DOZENS[said] if said in _DOZENS else NUMBER_WORDS.index(said)


@lru_cache(maxsize=8)
def _lowered(text: str) -> str:
    return text.lower()


class _Filtered:
    """A frame's regex that first checks the frame's longest fixed word is in the text at all:
    hundreds of frames, each a lazy pattern tried at every position, cost ~50 ms a request."""

    __slots__ = ("anchor", "regex")

    def __init__(self, pattern: str, flags: int, frame: str) -> None:
        self.regex = re.compile(pattern, flags)
        # The frame's longest fixed stretch: the regex says it verbatim (case aside).
        pieces = [piece.strip() for piece in re.split(r"\{\w+\}", frame)]
        self.anchor = max(pieces, key=len).lower() if pieces else ""

    def finditer(self, text: str) -> Any:
        if self.anchor and self.anchor not in _lowered(text):
            return iter(())
        return self.regex.finditer(text)


@cache
def _tables() -> tuple[tuple[str, re.Pattern[str] | _Filtered, Any], ...]:
    """(device, compiled regex, how a match reads) for every fact and reference frame."""
    entries: list[tuple[str, re.Pattern[str] | _Filtered, Any]] = []
    eliminated = _module("eliminated")
    if eliminated is not None:
        for frame in getattr(eliminated, "_KEPT", ()):
            entries.append(("eliminated", _Filtered(_frame(frame), re.IGNORECASE, frame), ("fact", True, "")))
        for frame in getattr(eliminated, "_OUT", ()):
            filtered = _Filtered(_frame(frame), re.IGNORECASE, frame)
            entries.append(("eliminated", filtered, ("fact", False, "")))
        for frame in getattr(eliminated, "_EXCEPT", ()):
            # One sentence for all: the ruled-out ones listed, the kept one by exception.
            pattern = _frame(frame, others=r"(?P<others>[^.;()]{1,200}?)")
            entries.append(("eliminated", _Filtered(pattern, re.IGNORECASE, frame), ("fact", True, "")))
        refs = getattr(eliminated, "_REFS", ())
        if refs:
            entries.append(
                ("eliminated", re.compile(rf"\b(?:{_alt(refs)})\b", re.IGNORECASE), ("ref", None, ""))
            )
    attributed = _module("attributed")
    if attributed is not None:
        roles = getattr(attributed, "_ROLES", ())
        role = rf"(?P<role>{_alt(r for r, _ in roles)})"
        name = r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
        for fact in getattr(attributed, "_FACTS", ()):
            for want in getattr(attributed, "_WANTS", ()):
                said = fact.replace("{want}", want)
                pattern = _frame(said, name=name, role=role)
                entries.append(("attributed", _Filtered(pattern, 0, said), ("fact", "role", "")))
        who = r"(?P<name>[A-Z][a-z]+(?:-[A-Z][a-z]+)?)"
        for want in getattr(attributed, "_WANTS", ()):
            # By elimination: "Dana wants X", and someone else is said not to hold the role.
            entries.append(
                ("attributed", re.compile(_frame("{name} " + want, name=who)), ("fact", "who", ""))
            )
        for frame in getattr(attributed, "_NOT", ()):
            pattern = _frame(frame, name=who, role=role) + r"(?!\w)"
            entries.append(("attributed", _Filtered(pattern, 0, frame), ("not", "not", "")))
        for ref in getattr(attributed, "_REFS", ()):
            pattern = _frame(ref, ref=rf"(?P<ref>{_alt(r for _, r in roles)})")
            entries.append(("attributed", re.compile(pattern, re.IGNORECASE), ("ref", "ref", "")))
    revised = _module("revised")
    if revised is not None and attributed is not None:
        roles = getattr(attributed, "_ROLES", ())
        role = rf"(?P<role>{_alt(r for r, _ in roles)})"
        name = r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
        for fact in getattr(revised, "_FACTS", ()):
            # Two candidates in one sentence: the first pick ({a}) and the latest ({b}).
            head, _, tail = fact.partition("{b}")
            pattern = _frame(head.replace("{a}", "{x}"), name=name, role=role).replace("(?P<x>", "(?P<a>")
            pattern = pattern.replace(_X_END, "") + _X.replace("(?P<x>", "(?P<x>") + re.escape(tail) + _X_END
            entries.append(("revised", _Filtered(pattern, 0, fact), ("fact", "revised", "")))
        ref = rf"(?P<ref>{_alt(r for _, r in roles)})"
        for label, table in (("first", "_FIRST"), ("last", "_LAST")):
            for frame in getattr(revised, table, ()):
                regex = re.compile(_frame(frame, ref=ref), re.IGNORECASE)
                entries.append(("revised", regex, ("ref", ("ref", label), "")))
    sequence = _module("sequence")
    if sequence is not None:
        # Per marker (its rank in its row of fixed markers, minus its age in days): ages ("nine
        # days ago", "a fortnight ago") are ordered by the days their table holds, rows by rank.
        rows = {m: i for row in getattr(sequence, "_MARKERS", ()) for i, m in enumerate(row)}
        ages = {said: -days for days, said in getattr(sequence, "_AGES", ())}
        ranks = {m: (rows.get(m), ages.get(m)) for m in {*rows, *ages}}
        when = rf"(?P<when>{_alt(ranks)})"
        for frame in getattr(sequence, "_PICKED", ()):
            entries.append(
                ("sequence", _Filtered(_frame(frame, when=when), re.IGNORECASE, frame), ("fact", ranks, ""))
            )
        for label, table in (("first", "_FIRST"), ("last", "_LAST"), ("middle", "_MIDDLE")):
            refs = getattr(sequence, table, ())
            if refs:
                regex = re.compile(rf"\b(?:{_alt(refs)})\b", re.IGNORECASE)
                entries.append(("sequence", regex, ("ref", label, "")))
    compared = _module("compared")
    if compared is not None:
        scales = [*getattr(compared, "_SCALES", ())]
        if getattr(compared, "_PLACES", None) is not None:
            scales.append(compared._PLACES)
        for index, scale in enumerate(scales):
            for frame in scale.facts:
                pattern = _frame(frame, n=rf"(?P<n>\d+|{_FIGURE_WORDS})")
                filtered = _Filtered(pattern, re.IGNORECASE, frame)
                entries.append(("compared", filtered, ("fact", "n", str(index))))
            for label, refs in (("low", scale.low), ("high", scale.high)):
                regex = re.compile(rf"\b(?:{_alt(refs)})\b", re.IGNORECASE)
                entries.append(("compared", regex, ("ref", label, str(index))))
    return tuple(entries)


def _found(text: str) -> tuple[list[_Fact], list[_Ref]]:
    facts: list[_Fact] = []
    refs: list[_Ref] = []
    for device, regex, (kind, key, group) in _tables():
        for m in regex.finditer(text):
            if kind == "not":
                facts.append(
                    _Fact(m.start(), m.end(), "", device, ("not", m["name"], m["role"].lower()), group)
                )
                continue
            if kind == "ref":
                want = m["ref"].lower() if key == "ref" else key
                if isinstance(key, tuple):
                    want = (m["ref"].lower(), key[1])
                refs.append(_Ref(m.start(), m.end(), device, want, group))
                continue
            x, end = candidate(text, m)
            x = _LEADING.sub("", x).strip()
            if not x:
                continue
            if key == "revised":
                # (role, first pick, latest pick); x is the latest.
                value: Any = (m["role"].lower(), _LEADING.sub("", m["a"]).strip(" \"'"), x)
            elif key == "role":
                value = m["role"].lower()
            elif key == "who":
                value = ("who", m["name"])
            elif key == "n":
                value = _figure(m["n"])
            elif isinstance(key, dict):
                value = key.get(m["when"].lower(), key.get(m["when"], (0, 0)))
            else:
                value = key
            facts.append(_Fact(m.start(), end, x, device, value, group))
    # A reference is not a fact (and one fact found by two frames counts once: the longest).
    facts.sort(key=lambda f: (f.start, -(f.end - f.start)))
    kept: list[_Fact] = []
    for fact in facts:
        if any(r.start < fact.end and fact.start < r.end for r in refs):
            continue
        if kept and fact.start < kept[-1].end:
            continue
        kept.append(fact)
    return kept, refs


def _winner(ref: _Ref, facts: list[_Fact], roles: dict[str, str]) -> _Fact | None:
    if not facts:
        return None
    if ref.device == "eliminated":
        kept = [f for f in facts if f.key is True]
        return kept[0] if len(kept) == 1 else None
    if ref.device == "revised":
        ref_role, when = ref.want
        role = roles.get(str(ref_role))
        chosen = [f for f in facts if f.key[0] == role]
        if not chosen:
            return None
        first, latest = chosen[0].key[1], chosen[0].key[2]
        return _Fact(chosen[0].start, chosen[0].end, first if when == "first" else latest, "revised", None)
    if ref.device == "attributed":
        role = roles.get(str(ref.want))
        chosen = [f for f in facts if f.key == role]
        if chosen:
            return chosen[0]
        # By elimination: the one whose person is not said NOT to hold the role.
        ruled_out = {
            f.key[1] for f in facts if isinstance(f.key, tuple) and f.key[0] == "not" and f.key[2] == role
        }
        left = [
            f for f in facts if isinstance(f.key, tuple) and f.key[0] == "who" and f.key[1] not in ruled_out
        ]
        return left[0] if ruled_out and len(left) == 1 else None
    if ref.device == "sequence":
        # All markers ages: by age; else by their rank in a row of fixed markers.
        by_age = all(f.key[1] is not None for f in facts)
        ordered = sorted(facts, key=lambda f: (f.key[1] if by_age else f.key[0]) or 0)
    else:
        ordered = sorted(facts, key=lambda f: f.key)
    if ref.want in ("first", "low"):
        return ordered[0]
    if ref.want in ("last", "high"):
        return ordered[-1]
    return ordered[len(ordered) // 2] if len(ordered) == 3 else None


@cache
def _role_of_ref() -> dict[str, str]:
    attributed = _module("attributed")
    return {ref.lower(): role.lower() for role, ref in getattr(attributed, "_ROLES", ())}


def resolved_choices(text: str) -> str:
    """``text`` with each choice reference replaced by the candidate it picks, and the candidates'
    sentences blanked; unchanged where no table of the generator reads it."""
    if not _tables():
        return text
    facts, refs = _found(text)
    if not facts or not refs:
        return text
    edits: list[tuple[int, int, str]] = []
    for ref in refs:
        mine = [f for f in facts if f.device == ref.device and f.group == ref.group]
        rivals = [r for r in refs if r.device == ref.device and r.group == ref.group]
        if len(rivals) > 1:  # two asks of one device: each takes the facts nearest to it
            mine = [
                f
                for f in mine
                if min(rivals, key=lambda r: abs((r.start + r.end - f.start - f.end) / 2)) is ref
            ]
        if len(mine) < 2 and ref.device != "eliminated":
            # A device states two or three candidates: a table that reads one of them read a
            # rewording only in part, and the cues (``generic``) choose instead.
            continue
        chosen = _winner(ref, mine, _role_of_ref())
        if chosen is None:
            continue
        edits.append((ref.start, ref.end, chosen.x))
        edits.extend((f.start, f.end, "(noted)") for f in mine)
    return apply_edits(text, edits)


#: How the anchored-date device shifts a day from an event (its ``_shift`` says them in code):
#: the phrase before the event, and the days it adds.
_SHIFTS = (
    (r"the day after|the day following", 1),
    (r"the day before|the day ahead of", -1),
    (r"a week after|one week after", 7),
)


@cache
def _anchored() -> tuple[tuple[re.Pattern[str], ...], re.Pattern[str] | None]:
    """The anchored-date device's fact frames ("{event} is on {date}") with its events, and the
    shifts from an event ("two days after the dentist appointment")."""
    anchored = _module("anchored_date")
    events = getattr(anchored, "_EVENTS", ()) if anchored is not None else ()
    if not events:
        return (), None
    event = rf"(?P<event>{_alt(events)})"
    facts = tuple(
        re.compile(_frame(frame.replace("{date}", "{x}"), event=event), re.IGNORECASE)
        for frame in getattr(anchored, "_FACTS", ())
    )
    numbers = _alt(NUMBER_WORDS)
    shift = "|".join(phrase for phrase, _ in _SHIFTS)
    ref = re.compile(rf"(?P<shift>{shift}|(?P<n>\d+|{numbers}) days (?:after|past)) {event}", re.IGNORECASE)
    return facts, ref


_SHIFT_WORDS = r"(?:after|following|past|later than|on from|before|ahead of|prior to|preceding|earlier than)"
_WORDED_SHIFT = re.compile(
    rf"(?:(?:on\s+)?the\s+(?:day|date)\s+(?P<s1>{_SHIFT_WORDS})"
    rf"|(?P<n>\d+|{_alt(NUMBER_WORDS)}|a|one|two)\s+(?P<unit>days?|weeks?)\s+(?P<s2>{_SHIFT_WORDS}))\s+$",
    re.IGNORECASE,
)


def resolved_anchored_worded(text: str) -> str:
    """The anchored dates said in other words ("five days following the vet appointment", "the
    date following the plumber's visit"; the event "now happens on", "was rescheduled to" a date):
    each event's date is the date its sentence states, and a shift said before an event moves it."""
    anchored = _module("anchored_date")
    events = getattr(anchored, "_EVENTS", ()) if anchored is not None else ()
    if not events:
        return text
    from .finders import _dates
    from .generic import sentences

    regex = re.compile(rf"(?<![\w'])(?:{_alt(events)})(?![\w'])", re.IGNORECASE)
    found = list(regex.finditer(text))
    if not found:
        return text
    dated: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    shifts: list[tuple[int, int, str, int]] = []
    for m in found:
        shift = _WORDED_SHIFT.search(text[max(0, m.start() - 40) : m.start()])
        if shift is not None:
            start = max(0, m.start() - 40) + shift.start()
            if shift["n"]:
                said = shift["n"].lower()
                count = (
                    int(said) if said.isdigit() else 1 if said in ("a", "one") else NUMBER_WORDS.index(said)
                )
                days = count * (7 if shift["unit"].lower().startswith("week") else 1)
            else:
                days = 1
            backwards = re.match(
                r"before|ahead|prior|preceding|earlier", (shift["s1"] or shift["s2"]).lower()
            )
            shifts.append((start, m.end(), m.group().lower(), -days if backwards else days))
            continue
        sentence = next(((a, b) for a, b in sentences(text) if a <= m.start() < b), None)
        if sentence is None:
            continue
        on = _dates(text[sentence[0] : sentence[1]])
        if len(on) == 1:
            dated.setdefault(m.group().lower(), str(on[0].value))
            spans.append(sentence)
    edits: list[tuple[int, int, str]] = []
    for start, end, event, days in shifts:
        if event in dated:
            moved = dt.date.fromisoformat(dated[event]) + dt.timedelta(days=days)
            edits.append((start, end, moved.isoformat()))
    if not edits:
        return text
    edits.extend((a, b, "(noted).") for a, b in spans)
    return apply_edits(text, edits)


def resolved_anchored(text: str) -> str:
    """``text`` with "<shift> <event>" written as the date it names (the event's stated date
    moved by the shift), and the events' dated sentences blanked."""
    facts, ref = _anchored()
    if ref is None:
        return text
    from .finders import _dates  # the public date forms

    dated: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    for regex in facts:
        for m in regex.finditer(text):
            x, end = candidate(text, m)
            found = _dates(x)
            if found:
                dated[m["event"].lower()] = str(found[0].value)
                spans.append((m.start(), end))
    if not dated:
        return text
    edits: list[tuple[int, int, str]] = [(start, end, "(noted)") for start, end in spans]
    for m in ref.finditer(text):
        day = dated.get(m["event"].lower())
        if day is None:
            continue
        if m["n"]:
            days = int(m["n"]) if m["n"].isdigit() else NUMBER_WORDS.index(m["n"].lower())
        else:
            said = m["shift"].lower()
            days = next(add for phrase, add in _SHIFTS if re.fullmatch(phrase, said))
        moved = dt.date.fromisoformat(day) + dt.timedelta(days=days)
        edits.append((m.start(), m.end(), moved.isoformat()))
    return apply_edits(text, edits)


@cache
def _labelled() -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...], dict[str, str]]:
    """The labelled device's fact frames ("{value} is the {label}"), its references ("the one
    for {use}") and, per thing a label names, the use it is for."""
    labelled = _module("labelled")
    uses = getattr(labelled, "_USES", ()) if labelled is not None else ()
    if not uses:
        return (), (), {}
    use_of = {thing: use for use, things in uses for thing in things}
    label = rf"(?:{_alt(getattr(labelled, '_COLOURS', ()) or ('[a-z]+',))}) (?P<thing>{_alt(use_of)})"
    facts = tuple(
        re.compile(_frame(frame.replace("{value}", "{x}"), label=label), re.IGNORECASE)
        for frame in getattr(labelled, "_FACTS", ())
    )
    use = rf"(?P<use>{_alt(u for u, _ in uses)})"
    refs = tuple(re.compile(_frame(ref, use=use), re.IGNORECASE) for ref in getattr(labelled, "_REFS", ()))
    return facts, refs, use_of


def resolved_labelled(text: str) -> str:
    """``text`` with "the one for camping" written as the identifier of the thing for camping,
    and the labels' sentences blanked."""
    facts, refs, use_of = _labelled()
    if not facts:
        return text
    labelled: list[tuple[int, int, str, str]] = []
    for regex in facts:
        for m in regex.finditer(text):
            x, end = candidate(text, m)
            labelled.append((m.start(), end, _LEADING.sub("", x), use_of.get(m["thing"].lower(), "")))
    if not labelled:
        return text
    edits = [(start, end, "(noted)") for start, end, _, _ in labelled]
    for regex in refs:
        for m in regex.finditer(text):
            chosen = [x for _, _, x, use in labelled if use == m["use"].lower()]
            if chosen:
                edits.append((m.start(), m.end(), chosen[0]))
    return apply_edits(text, edits)
