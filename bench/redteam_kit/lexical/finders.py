"""Typed values in text: one finder per public value generator (pools, formats, number say-forms, dates,
times).
"""

from __future__ import annotations

import datetime as dt
import re
import string
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache
from random import Random
from typing import Any, cast

from tasks.devices._words import NUMBER_WORDS
from tasks.library.common import Coordinates, CronSchedule
from tasks.value_generators import (
    _MONTHS,
    ClockTime,
    Composed,
    Date,
    Decimal,
    Flag,
    Integer,
    ListOf,
    Pick,
    Quoted,
    Record,
    Records,
)

from .tools import _AnyNumber, _Shaped, _shaped_finder, _Slot, _Union
from .words import Finder, _Find, _Pool


def _alt(texts: Iterable[str]) -> str:
    return "|".join(re.escape(t) for t in sorted(set(texts), key=lambda t: (-len(t), t)) if t)


# A number standing alone (not inside an id, date, time, path or exponent); "12x" is a coefficient.
_NUM = r"(?<![\w.:/+^-])-?\d+(?:\.\d+)?(?![a-wyzA-Z0-9_:/]|\.\d|-\d|x[a-z])"


_NUM_RE = re.compile(_NUM)


_MONTH = {m.lower(): i + 1 for i, m in enumerate(_MONTHS)} | {
    m[:3].lower(): i + 1 for i, m in enumerate(_MONTHS)
}


_MONTHS_ALT = _alt([*_MONTHS, *(m[:3] for m in _MONTHS)])


_DATE_RE = re.compile(
    rf"\b(?:(?P<m1>{_MONTHS_ALT})\.? (?P<d1>\d{{1,2}}),? (?P<y1>\d{{4}})"
    rf"|(?P<d2>\d{{1,2}}) (?P<m2>{_MONTHS_ALT}),? (?P<y2>\d{{4}})"
    r"|(?P<y3>\d{4})-(?P<m3>\d{2})-(?P<d3>\d{2})"
    r"|(?P<m4>\d{2})/(?P<d4>\d{2})/(?P<y4>\d{4}))\b",
    re.IGNORECASE,
)


_TIME_RE = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::00)?(?:\s?([ap])\.?m\.?)?(?![\d:])", re.IGNORECASE)


_QUOTED_RE = re.compile(r'"([^"]+)"')


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@lru_cache(maxsize=4096)
def _dates(text: str) -> list[_Find]:
    found = []
    for m in _DATE_RE.finditer(text):
        for k in "1234":
            if m[f"y{k}"]:
                month = m[f"m{k}"]
                number = _MONTH.get(month.lower()) if not month.isdigit() else int(month)
                try:
                    day = dt.date(int(m[f"y{k}"]), number or 0, int(m[f"d{k}"]))
                except ValueError:
                    break
                found.append(_Find(m.start(), m.end(), day.isoformat(), 4.0))
                break
    return found


@lru_cache(maxsize=4096)
def _times(text: str) -> list[_Find]:
    found = []
    for m in _TIME_RE.finditer(text):
        hour, minute, half = int(m[1]), m[2], (m[3] or "").lower()
        if half:
            hour = hour % 12 + (12 if half == "p" else 0)
        if hour < 24:
            found.append(_Find(m.start(), m.end(), f"{hour:02d}:{minute}", 4.0))
    return found


def _numbers(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _NUM_RE.finditer(text)]


def _pick_finder(gen: Pick) -> Finder:
    values: dict[str, Any] = {}
    for option in gen.options:
        forms = list(option.says) + [v for v in option.accepted if isinstance(v, str) and len(v) > 2]
        for form in forms:
            values.setdefault(form.lower(), option.accepted[0])
            values.setdefault(form.lower().replace("_", " "), option.accepted[0])
    regex = re.compile(rf"(?<![\w@/.-])(?:{_alt(values)})(?![\w@/-])", re.IGNORECASE)
    places = sum(bool(_PLACE.fullmatch(say)) for option in gen.options for say in option.says)
    open_space = _open_finder(_PLACE, 1.8) if places >= len(gen.options) // 2 and places else None

    def find(text: str) -> list[_Find]:
        found = [
            _Find(m.start(), m.end(), values[m.group().lower()], 2.0 + min(len(m.group()), 12) / 12)
            for m in regex.finditer(text)
        ]
        return found + (open_space(text) if open_space is not None else [])

    return find


def _flag_finder(gen: Flag) -> Finder:
    values = {say.lower(): False for say in gen.says_false} | {say.lower(): True for say in gen.says_true}
    regex = re.compile(rf"(?<!\w)(?:{_alt(values)})(?!\w)", re.IGNORECASE)
    return lambda text: [
        _Find(m.start(), m.end(), values[m.group().lower()], 3.0) for m in regex.finditer(text)
    ]


def _quoted_finder(gen: Quoted) -> Finder:
    bodies = tuple(gen.bodies)
    # The public bodies said without quotes (a phrasing quotes only text with spaces).
    bare = re.compile(rf"(?<![\w\"])((?:{_alt(bodies)})(?:{_alt(gen.tails)})?)(?![\w\"])", re.IGNORECASE)

    def find(text: str) -> list[_Find]:
        found = [
            _Find(m.start(), m.end(), m[1], 3.5 if m[1].startswith(bodies) else 1.5)
            for m in _QUOTED_RE.finditer(text)
        ]
        inside = [(f.start, f.end) for f in found]
        for m in bare.finditer(text):
            if not any(s <= m.start() < e for s, e in inside):
                found.append(_Find(m.start(), m.end(), m[1], 2.5))
        return found

    return find


def _composed_finder(gen: Composed) -> Finder:
    pattern = ""
    for position, (literal, name, _, _) in enumerate(string.Formatter().parse(gen.pattern)):
        pattern += re.escape(literal)
        if name is not None:
            part = gen.parts[int(name) if name else position]
            pattern += f"(?:{_alt(part)})" + ("?" if "" in part else "")
    regex = re.compile(rf'(?<![\w/.@-])"?({pattern})"?(?![\w/@]|\.\w|-\w)', re.IGNORECASE)
    shape = _open_shape(gen)
    open_space = _open_finder(shape, 2.5) if shape is not None else None

    def find(text: str) -> list[_Find]:
        found = [_Find(m.start(), m.end(), m[1], 3.5) for m in regex.finditer(text)]
        return found + (open_space(text) if open_space is not None else [])

    return find


# Open value spaces: the public pools' formats, for values drawn beyond the pools' lists.
_PLACE = re.compile(r"[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*, [A-Z][A-Za-z]+(?: [A-Z][a-z]+)*")


_EMAIL = re.compile(r"[a-z0-9][a-z0-9._-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)+", re.IGNORECASE)


_HANDLE = re.compile(r"@[a-z][a-z0-9._-]*[a-z0-9]", re.IGNORECASE)


_PHONE = re.compile(r"\+\d{1,3}(?: \d{2,4}){2,4}")


_PERSON = re.compile(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)? [A-Z][a-z]+(?:-[A-Z][a-z]+)?")


_ADDRESS = re.compile(
    r"\d+ [A-Z][a-z]+ (?:[A-Z][a-z]+ )?(?:Street|Road|Avenue|Lane|Way|Drive|Boulevard|Court|Place)"
)


def _open_shape(gen: Composed) -> re.Pattern[str] | None:
    """The open format of a composed pool, when it is one of the kinds people's names, emails,
    handles and phone numbers take."""
    pattern = gen.pattern
    if "@" in pattern and not pattern.startswith("@"):
        return _EMAIL
    if pattern.startswith("@"):
        return _HANDLE
    if pattern.startswith("+"):
        return _PHONE
    if pattern == "{0} {1}" and all(part and all(p[:1].isupper() for p in part) for part in gen.parts):
        return _PERSON
    return None


def _open_finder(shape: re.Pattern[str], strength: float) -> Finder:
    regex = re.compile(rf"(?<![\w@.+-])(?:{shape.pattern})(?![\w@-]|\.\w)", shape.flags)
    return lambda text: [
        _Find(m.start(), m.end(), m.group().rstrip("."), strength) for m in regex.finditer(text)
    ]


_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800, "fortnight": 1209600}


_UNIT_SECONDS |= {
    "meter": 10**9,
    "metre": 10**9,
    "m": 10**9,
    "kilometer": 10**12,
    "kilometre": 10**12,
    "km": 10**12,
}


_UNIT_NAMES = {"meters": "meter", "metres": "metre", "kilometers": "kilometer", "kilometres": "kilometre"}


#: Counts of a duration in words: the devices' own number words, and "a", "a couple of".
_SMALL_NUMBERS = {word: index for index, word in enumerate(NUMBER_WORDS) if index} | {
    "a": 1,
    "an": 1,
    "a couple of": 2,
    "couple of": 2,
}


_FRACTIONS = {"half": 0.5, "a half": 0.5, "quarter": 0.25, "a quarter": 0.25, "three quarters": 0.75}


_DURATION = re.compile(
    rf"\b(?:(?P<n>\d+|{_alt(_SMALL_NUMBERS)})\s+(?:and\s+(?P<frac1>a\s+half|a\s+quarter)\s+)?"
    r"|(?P<pre>three[\s-]quarters|a\s+quarter|quarter|half)\s+(?:of\s+)?(?:an?\s+)?)"
    r"(?:(?:whole|full)\s+)?(?P<unit>seconds?|minutes?|hours?|days?|weeks?|fortnight|(?:kilo)?met(?:er|re)s?)"
    r"(?:\s+and\s+(?P<frac2>a\s+half|a\s+quarter))?\b",
    re.IGNORECASE,
)


def _durations(text: str, unit: str) -> list[_Find]:
    """Lengths of time said in any unit ("an hour and a half", "a quarter of an hour", "two full
    days"), as whole numbers of ``unit`` (a key of ``_UNIT_SECONDS``) where they come out whole."""
    found = []
    for m in _DURATION.finditer(text):
        said_unit = _UNIT_NAMES.get(m["unit"].lower(), m["unit"].lower().rstrip("s"))
        if (_UNIT_SECONDS[said_unit] >= 10**9) != (_UNIT_SECONDS[unit] >= 10**9):
            continue  # a length for a time or a time for a length
        if m["pre"]:
            count = _FRACTIONS.get(re.sub(r"[\s-]+", " ", m["pre"].lower()), 0.0)
        else:
            number = m["n"].lower()
            count = float(number) if number.isdigit() else float(_SMALL_NUMBERS[number])
            count += _FRACTIONS.get(re.sub(r"\s+", " ", (m["frac1"] or m["frac2"] or "").lower()), 0.0)
        value = count * _UNIT_SECONDS[said_unit] / _UNIT_SECONDS[unit]
        if value == int(value) and value > 0:
            found.append(_Find(m.start(), m.end(), int(value), 2.5))
    return found


def _unit_of(say: str) -> str | None:
    words = [_UNIT_NAMES.get(w, w) for w in re.findall(r"[a-z]+", say.lower())]
    return next(
        (
            w if w in _UNIT_SECONDS else w.rstrip("s")
            for w in words
            if w in _UNIT_SECONDS or w.rstrip("s") in _UNIT_SECONDS
        ),
        None,
    )


def _integer_finder(gen: Integer) -> Finder:
    unit = _unit_of(gen.say)

    def find(text: str) -> list[_Find]:
        found = []
        for start, end, said in _numbers(text):
            if "." in said:
                continue
            value = int(said)
            if not gen.low <= value <= gen.high or (value - gen.low) % gen.step:
                continue
            found.append(_Find(start, end, value, 2.5 if _said_around(gen.say, text, start, end) else 1.0))
        if unit is not None:  # the length said in another unit ("an hour and a half" for minutes)
            found.extend(f for f in _durations(text, unit) if gen.low <= f.value <= gen.high)
        return found

    return find


def _said_around(say: str, text: str, start: int, end: int) -> bool:
    """Whether the number at ``start:end`` is said through ``say`` ("{} nights", "$ {}")."""
    before, after = say.split("{}") if "{}" in say else ("", "")
    before, after = before.strip().lower(), after.strip().lower()
    if after and text[end : end + len(after) + 1].strip().lower().startswith(after):
        return True
    return bool(before) and text[max(0, start - len(before) - 1) : start].strip().lower().endswith(before)


def _decimal_finder(gen: Decimal) -> Finder:
    def find(text: str) -> list[_Find]:
        found = []
        for start, end, said in _numbers(text):
            value = float(said)
            if gen.low - 1e-9 <= value <= gen.high + 1e-9:
                strength = 1.2 if "." in said else 0.8
                found.append(
                    _Find(start, end, value, 2.5 if _said_around(gen.say, text, start, end) else strength)
                )
        return found

    return find


_COORD_RE = re.compile(r"(?<![\w.])(-?\d+\.\d{3,})(?:,| and|, and)\s*(-?\d+\.\d{3,})(?!\w|\.\d)")


def _coordinates_finder(gen: Coordinates) -> Finder:
    return lambda text: [
        _Find(m.start(), m.end(), [float(m[1]), float(m[2])], 4.0) for m in _COORD_RE.finditer(text)
    ]


_CRON_KIND = re.compile(
    rf"\b(every day|daily|every weekday|weekdays|every hour|hourly|{_alt(_WEEKDAYS)})\b", re.IGNORECASE
)


def _cron_finder(gen: CronSchedule) -> Finder:
    def find(text: str) -> list[_Find]:
        kinds = list(_CRON_KIND.finditer(text))
        if not kinds:
            return []
        kind = kinds[0]
        word = kind[1].lower()
        if word in ("every hour", "hourly"):
            after = [(s, e, n) for s, e, n in _numbers(text) if "." not in n and 0 <= int(n) < 60]
            if not after:
                return []
            s, e, n = min(after, key=lambda item: abs(item[0] - kind.end()))
            return [_Find(kind.start(), e, f"{int(n)} * * * *", 4.0, ((kind.start(), kind.end()), (s, e)))]
        times = _times(text)
        if not times:
            return []
        at = min(times, key=lambda f: abs(f.start - kind.end()))
        hour, minute = (int(x) for x in at.value.split(":"))
        if word in ("every day", "daily"):
            day = "*"
        elif word in ("every weekday", "weekdays"):
            day = "1-5"
        else:
            day = str((_WEEKDAYS.index(kind[1].capitalize()) + 1) % 7)
        spans = ((kind.start(), kind.end()), (at.start, at.end))
        return [
            _Find(
                min(kind.start(), at.start), max(kind.end(), at.end), f"{minute} {hour} * * {day}", 4.0, spans
            )
        ]

    return find


def _list_finder(gen: ListOf) -> Finder:
    item_gen: Any = gen.item
    item = _finder(item_gen)

    def find(text: str) -> list[_Find]:
        said = [f for f in item(text) if not _taken_back(text, f.start, f.end)]
        items = _disjoint(sorted(said, key=lambda f: (-f.strength, f.start)))
        items.sort(key=lambda f: f.start)
        values: list[Any] = []
        spans = []
        for f in items:
            if f.value not in values:
                values.append(f.value)
                spans.append((f.start, f.end))
        if not values:
            return []
        strength = sum(f.strength for f in items) / len(items) + 0.3 * min(len(values), 3)
        return [_Find(spans[0][0], spans[-1][1], values, strength, tuple(spans))]

    return find


def _unused_items(f: _Find, used: list[tuple[int, int]]) -> _Find | None:
    """A list find without the items another parameter took (None when none is left)."""
    keep = [
        (span, value)
        for span, value in zip(f.spans, f.value, strict=True)
        if not any(span[0] < ue and us < span[1] for us, ue in used)
    ]
    if not keep:
        return None
    spans = tuple(span for span, _ in keep)
    return _Find(spans[0][0], spans[-1][1], [value for _, value in keep], f.strength, spans)


def _records_finder(record: Record, many: bool) -> Finder:
    fields = [(key, _finder(cast(Any, gen))) for key, gen in record.fields]

    def find(text: str) -> list[_Find]:
        finds = sorted(
            ((f.start, f.end, key, f) for key, finder in fields for f in finder(text)),
            key=lambda x: (x[0], -x[1]),
        )
        rows: list[dict[str, Any]] = []
        spans: list[tuple[int, int]] = []
        current: dict[str, Any] = {}
        taken_end = -1
        for start, end, key, f in finds:
            if start < taken_end:
                continue
            if key in current:
                if len(current) == len(fields):
                    rows.append(current)
                current = {} if len(current) == len(fields) else current
                if key in current:
                    continue
            current[key] = f.value
            spans.append((start, end))
            taken_end = end
            if len(current) == len(fields):
                rows.append(current)
                current = {}
                if not many:
                    break
        if not rows:
            return []
        value: Any = rows if many else rows[0]
        return [_Find(spans[0][0], spans[-1][1], value, 3.0, tuple(spans))]

    return find


@cache
def _finder(gen: Any) -> Finder:
    if isinstance(gen, Pick):
        return _pick_finder(gen)
    if isinstance(gen, Flag):
        return _flag_finder(gen)
    if isinstance(gen, Quoted):
        return _quoted_finder(gen)
    if isinstance(gen, Composed):
        return _composed_finder(gen)
    if isinstance(gen, Integer):
        return _integer_finder(gen)
    if isinstance(gen, Decimal):
        return _decimal_finder(gen)
    if isinstance(gen, Date):
        return _dates
    if isinstance(gen, ClockTime):
        return _times
    if isinstance(gen, Coordinates):
        return _coordinates_finder(gen)
    if isinstance(gen, CronSchedule):
        return _cron_finder(gen)
    if isinstance(gen, ListOf):
        return _list_finder(gen)
    if isinstance(gen, Record):
        return _records_finder(gen, many=False)
    if isinstance(gen, Records):
        return _records_finder(gen.record, many=True)
    if isinstance(gen, _Shaped):
        return _shaped_finder(gen)
    if isinstance(gen, _Pool):
        return _pool_finder(gen)
    if isinstance(gen, _AnyNumber):
        whole = gen.whole
        return lambda text: [
            _Find(s, e, int(n) if whole else float(n), 0.6)
            for s, e, n in _numbers(text)
            if not whole or "." not in n
        ]
    if isinstance(gen, _Union):
        finders = [_finder(g) for g in gen.gens]
        return lambda text: (
            [f for finder in finders for f in finder(text)]
            + [_Find(m.start(), m.end(), m[1], 1.0) for m in _QUOTED_RE.finditer(text)]
        )
    return _sampled_finder(gen)


def _pool_finder(gen: _Pool) -> Finder:
    """The values of a pool, and of the open format most of them share."""
    texts = gen.texts
    best = max(_SHAPES, key=lambda entry: _coverage(entry, texts))
    shaped: Finder | None = None
    if _coverage(best, texts) >= 0.4:
        shaped = best[0] if best[0] is not None else _open_finder(cast(re.Pattern[str], best[1]), 2.2)
    regex = re.compile(rf"(?<![\w@/.-])(?:{_alt(texts)})(?![\w@/-])", re.IGNORECASE)
    canonical = {t.lower(): t for t in texts}

    def find(text: str) -> list[_Find]:
        pooled = [
            _Find(m.start(), m.end(), canonical.get(m.group().lower(), m.group()), 2.0)
            for m in regex.finditer(text)
        ]
        return pooled + (shaped(text) if shaped is not None else [])

    return find


def _coverage(entry: tuple[Any, Any], texts: Sequence[str]) -> float:
    finder, shape = entry
    if not texts:
        return 0.0
    if shape is not None:
        return sum(bool(shape.fullmatch(t)) for t in texts) / len(texts)
    return sum(len(finder(t)) == 1 for t in texts) / len(texts)


_SHAPES = (
    (_dates, None),
    (_times, None),
    (None, _EMAIL),
    (None, _HANDLE),
    (None, _PHONE),
    (None, _ADDRESS),
    (None, _PLACE),
    (None, _PERSON),
)


def _sampled_finder(gen: Any) -> Finder:
    """A generator of a kind not known here: draw values from it (it is public code) and read
    values of the format they share, or, failing one, the values drawn."""
    draw = getattr(gen, "draw", None)
    if not callable(draw):
        return lambda text: []
    rng = Random(0)
    samples: dict[str, Any] = {}
    try:
        for _ in range(200):
            drawn = draw(rng)
            samples.setdefault(str(drawn.text).strip('"'), drawn.accepted[0])
    except Exception:  # someone else's generator: no reading is better than a crash
        return lambda text: []
    texts = list(samples)

    def coverage(entry: tuple[Any, Any]) -> float:
        finder, shape = entry
        if shape is not None:
            return sum(bool(shape.fullmatch(t)) for t in texts) / len(texts)
        return sum(len(finder(t)) == 1 for t in texts) / len(texts)

    best = max(_SHAPES, key=coverage)
    shaped: Finder | None = None
    if coverage(best) >= 0.4:
        shaped = best[0] if best[0] is not None else _open_finder(cast(re.Pattern[str], best[1]), 2.5)
    regex = re.compile(rf"(?<![\w@/.-])(?:{_alt(texts)})(?![\w@/-])", re.IGNORECASE)
    lowered = {t.lower(): v for t, v in samples.items()}

    def find(text: str) -> list[_Find]:
        pooled = [
            _Find(m.start(), m.end(), lowered.get(m.group().lower(), m.group()), 2.2)
            for m in regex.finditer(text)
        ]
        return pooled + (shaped(text) if shaped is not None else [])

    return find


def _generic_finder(slot: _Slot) -> Finder:
    """No generator known: values by JSON type alone."""
    if slot.json_type == "integer":
        return lambda text: [_Find(s, e, int(n), 0.5) for s, e, n in _numbers(text) if "." not in n]
    if slot.json_type == "number":
        return lambda text: [_Find(s, e, float(n), 0.5) for s, e, n in _numbers(text)]
    if slot.json_type == "string":

        def find(text: str) -> list[_Find]:
            return [_Find(m.start(), m.end(), m[1], 1.0) for m in _QUOTED_RE.finditer(text)] + _dates(text)

        return find
    return lambda text: []


def _disjoint(finds: list[_Find]) -> list[_Find]:
    """The finds in the given order that overlap no earlier one."""
    kept: list[_Find] = []
    used: list[tuple[int, int]] = []
    for f in finds:
        if any(s < ue and us < e for s, e in f.cover() for us, ue in used):
            continue
        kept.append(f)
        used.extend(f.cover())
    return kept


#: Words around a value that take it back: context the request states but does not ask with
#: ("not Lyon, that was the old plan", "I first thought 4 days, but scratch that").
_TAKEN_BACK_BEFORE = re.compile(
    r"(?:\bnot|\bforget|\bignore|first thought|\bsuggested|went with|busy on|away on|last time was on|"
    r"call at|old slot was|instead of|rather than|other than|\bexcept|"
    # Plain English for "not this one", as any rewording may say it.
    r"\bscrap|\bdisregard|\bdrop|never mind|\bskip|"
    r"\bdropped|\bruled out|\bcrossed off|\bscratched|\bexcluding|\bleaving out|\bleave out|"
    r"\bunlike|\bwithout)\s*[\"(]?$",
    re.IGNORECASE,
)


_TAKEN_BACK_AFTER = re.compile(
    r"^[\")]?\s*[,;:-]?\s*(?:that was the old plan|i changed my mind|was last time|but scratch that|"
    r"from my earlier message|that'?s not what i want|came up yesterday|no\b|is already taken|won'?t work|"
    r"by the way|was the old|is off the table|doesn'?t work|"
    r"doesn'?t apply|does not apply|is not relevant|isn'?t relevant|is irrelevant|no longer applies|"
    # General English for "not this one", as a model may say it of a value it mentions aside.
    r"(?:is|was|are|were) (?:off the list|out of the picture|out of the question|not the one|not it|"
    r"not what I want|not what I need|not needed|not wanted|ruled out|off|out|dropped|cancell?ed|"
    r"scrapped|no good|wrong|a mistake|an old one|old news|history|not happening|taken)\b|"
    r"isn'?t (?:the one|it|right|needed|wanted|what I want)|"
    r"belongs to (?:another|a different|someone else)|"
    r"(?:is|was) for (?:another|a different|something else)|has nothing to do with|"
    r"(?:can|should) be ignored|(?:is|was) unrelated|not this time|"
    r"no longer (?:needed|wanted|relevant|valid))",
    re.IGNORECASE,
)


def _taken_back(text: str, start: int, end: int) -> bool:
    return bool(
        _TAKEN_BACK_BEFORE.search(text[max(0, start - 24) : start])
        or _TAKEN_BACK_AFTER.search(text[end : end + 40])
    )
