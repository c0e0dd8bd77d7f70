"""What the choice devices share: several candidate values of one parameter, all written out,
of which the request picks one by meaning (who wanted it, when it was chosen, which one is still
open, how the candidates compare), so that a value's type, its pattern and its position in the
text do not tell which one is the argument.

``candidates`` draws them (the first is the value, the others are decoys); ``fits`` says which
parameters they suit: any whose generator draws a value said as written (enums with at least
two options, composed text, quoted text, names, places, addresses, numbers, dates, times).
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from random import Random

from tasks.devices import SEPARATOR, Fact, Scene, overlaps
from tasks.library import tools
from tasks.library.common import EmailAddress, Handle, PersonName, Place, first_name
from tasks.spec import Param
from tasks.synth import FAMILIES, synth_tool
from tasks.value_generators import (
    ClockTime,
    Composed,
    Date,
    Decimal,
    Drawn,
    Integer,
    Mention,
    Option,
    Pick,
    Quoted,
    _option_forms,
)

__all__ = ["CHOICE", "candidates", "fits", "numeric", "ordered", "people", "pick", "sentence"]


@cache
def _kinds() -> tuple[type, ...]:

    return (Composed, Quoted, Integer, Decimal, Date, ClockTime, Place, PersonName, EmailAddress, Handle)


def fits(param: Param) -> bool:
    """A parameter whose values are said as written and drawn from a space of several."""
    gen = param.gen
    if param.type in ("boolean", "array", "object"):
        return False
    if isinstance(gen, Pick):
        return len(_usable(gen)) >= 2
    if isinstance(gen, (Integer, Decimal)) and gen.say == "{}":
        # Bare numbers ("5x^2 plus -18x"): a candidate "2" reads like any digit of the request.
        return False
    return isinstance(gen, _kinds())


def ordered(param: Param) -> str:
    """What a choice by place among the candidates (the latest, the cheapest, the one left) holds
    in a task (``Scene.hold``): the parameter's kind of value. A second such choice between
    values of that kind, in another request of the task, would make "the most recent pick" read
    across both ("earlier today we picked 20.1 degrees" of one request is more recent than the
    other's "27.1 degrees four days ago"); devices of that kind check it before, and hold it once
    they made their choice."""
    return f"{param.type}:{id(param.gen)}"


def numeric(param: Param) -> bool:
    """Numbers (the comparing devices state figures of their own, which must not mix with them)."""
    return isinstance(param.gen, (Integer, Decimal))


def pick(rng: Random, items: tuple[str, ...]) -> str:
    return items[int(rng.random() * len(items))]


_NON_WORD = re.compile(r"[^0-9a-z]+")


@cache
def _template_text() -> str:
    """Every request template of the library and the synthesised tools, lower case."""

    specs = list(tools())
    for family_index, family in enumerate(FAMILIES):
        for action in range(len(family.actions)):
            specs += [synth_tool(family_index, action, thing) for thing in range(len(family.things))]
    text = " ".join(template.lower() for spec in specs for template in spec.templates)
    return " " + _NON_WORD.sub(" ", text) + " "


@cache
def _plain_word(form: str) -> bool:
    """An enum's form that templates also write as a plain word ("dollars" in "settle up: 5
    dollars"): stated there, a candidate would be stated twice, and dropping it would go unseen."""
    phrase = _NON_WORD.sub(" ", form).strip()
    # Each of the phrase's words must be a word of the templates first: one set look-up each,
    # where a search of the whole text (~136,000 characters) takes ~70 us, a few hundred times per
    # process. An empty phrase still takes the search (the text may hold two spaces in a row).
    if phrase and not _template_words().issuperset(phrase.split(" ")):
        return False
    return " " + phrase + " " in _template_text()


@cache
def _template_words() -> frozenset[str]:
    return frozenset(_template_text().split())


def _forms(drawn: Drawn) -> tuple[str, ...]:
    mentions = drawn.mentions
    if mentions is None:  # drawn.stated(): the text itself
        return (drawn.text.lower(), drawn.text.lower())
    return (drawn.text.lower(), *[form.lower() for _, forms in mentions for form in forms])


@lru_cache(maxsize=4096)
def _lowered(mentions: tuple[Mention, ...]) -> tuple[str, ...]:
    # Dates and enum options share their mention tuples across draws: lower them once.
    return tuple(form.lower() for _, forms in mentions for form in forms)


#: A usable option with its mentions (as ``Pick.draw`` states it) and their forms lower-cased,
#: made once per enum: hashing an ``Option`` (a frozen dataclass) for each draw's forms cost more
#: than the draw.
_Usable = tuple[Option, tuple[Mention, ...], tuple[str, ...]]
_USABLE: dict[int, tuple[Pick, tuple[Option, ...], tuple[_Usable, ...]]] = {}


def _usable_entry(gen: Pick) -> tuple[Pick, tuple[Option, ...], tuple[_Usable, ...]]:
    # By identity (hashing a Pick hashes all its options); the entry holds the Pick, so its id is
    # not reused while it is cached.
    found = _USABLE.get(id(gen))
    if found is None:
        options = _usable_options(gen)
        usable = []
        for option in options:
            mentions: tuple[Mention, ...] = (("text", _option_forms(option)),)
            usable.append((option, mentions, _lowered(mentions)))
        found = _USABLE[id(gen)] = (gen, options, tuple(usable))
    return found


def _usable(gen: Pick) -> tuple[Option, ...]:
    return _usable_entry(gen)[1]


def _usable_options(gen: Pick) -> tuple[Option, ...]:
    """The options of an enum that may be candidates: none whose words the templates also write as
    plain words ("dollars" in "settle up: 5 dollars": stated there, a candidate would be stated twice,
    and a rewording that dropped it would go unseen)."""
    return tuple(
        option
        for option in gen.options
        if not any(_plain_word(form.lower()) for form in (*_option_forms(option), *option.says))
    )


def candidates(
    param: Param, rng: Random, scene: Scene, most: int = 3, exactly: int = 0
) -> list[Drawn] | None:
    """Two or three distinct values of the parameter (the value first, then the decoys), apart from
    the values the task's other requests state and their decoys; None when the draw cannot.
    The decoys join the scene's, so later requests of the task do not state them as values."""
    gen = param.gen
    random = rng.random
    options = _usable_entry(gen)[2] if isinstance(gen, Pick) else ()
    # Mostly two (a third candidate lengthens the request by a sentence: parallel requests stay
    # within what a rewording may hold), three for a share.
    count = 2 if most < 3 or (options and len(options) < 4) or random() < 0.65 else 3
    if exactly:
        count = exactly
    if isinstance(gen, Pick) and len(options) < count:
        return None
    chosen: list[Drawn] = []
    taken = scene.taken()
    # What the task's other requests state or hold as decoys: a candidate reading like one of them
    # ("Langdale" beside an earlier request's "Lake Langdale") would be stated by either's words.
    said = scene.texts(people=True)
    # ``said`` joined by a character no value holds (values and templates carry no control
    # characters): "a form inside any said text" is then one substring test, not one per pair.
    said_text = SEPARATOR.join(said)
    for _ in range(count * 4):
        if options:
            option, mentions, lowered = options[int(random() * len(options))]
            says = option.says
            text = says[int(random() * len(says))]
            drawn = Drawn(text, option.accepted, mentions)
            forms: tuple[str, ...] = (text.lower(), *lowered)  # _forms(drawn), made ahead
        else:
            drawn = gen.draw(rng)
            forms = ()
        accepted = drawn.accepted
        try:
            clash = not taken.isdisjoint(accepted)  # ``taken`` holds text and numbers only
        except TypeError:  # a list or dict among the values
            clash = any(value in taken for value in accepted if isinstance(value, (str, int, float)))
        if clash:
            continue
        # Two values that read alike (one's words inside the other's) would both be stated by a
        # rewording of one of them.
        if not options:
            forms = _forms(drawn)
        forms_text = SEPARATOR.join(forms)
        if said and overlaps(forms, said, said_text, forms_text):
            continue
        chosen.append(drawn)
        taken.update(value for value in accepted if isinstance(value, (str, int, float)))
        if forms:
            # SEPARATOR.join(said) once said has the forms too
            said_text = said_text + SEPARATOR + forms_text if said else forms_text
            said.extend(forms)
        if len(chosen) == count:
            break
    if len(chosen) < count:
        return None
    for decoy in chosen[1:]:
        scene.decoys.extend(decoy.accepted)
    return chosen


def people(rng: Random, count: int, drawn: list[Drawn], scene: Scene) -> list[str] | None:
    """First names for the people the candidates are tied to: apart from each other and from every
    candidate's words, and from the task's other values and decoys (a quoted "Priya" beside a
    person Priya would be stated twice); the names join the scene's."""

    said = [form for value in drawn for form in _forms(value)]
    said += scene.texts()
    names: list[str] = []
    said_text = SEPARATOR.join(said)
    for _ in range(count):
        name = first_name(rng)
        low = name.lower()
        # any(low in other or other in low for other in said), the first test in one search
        if low in said_text or any(map(low.__contains__, said)):
            return None
        names.append(name)
        said.append(low)
        said_text += SEPARATOR + low
    scene.people.extend(names)
    return names


#: The ``about`` of every sentence of a choice: the phrasing stage tells the engine to keep each as a
#: plain statement (a decoy candidate worded as "not what is asked" would give the choice away).
CHOICE = "which of the candidates is meant"


def sentence(said: str, drawn: Drawn, extra: tuple[Mention, ...], is_value: bool) -> Fact:
    """A context sentence that states one candidate (and the words that tie it to the choice)."""
    return Fact(said, (*drawn.stated(), *extra), "fact" if is_value else "decoy", CHOICE)
