"""Turning library tools into requests and BFCL expected answers.

``instantiate`` fills one request template of a tool with freshly drawn values and returns the
request text with the matching expected call. Optional parameters the person did not mention
accept their default or omission (``""``); mentioned values that equal the default accept
omission too.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass
from functools import cache, lru_cache
from random import Random
from typing import Any

from tasks.devices import Fact, Scene, Worked, current_scene, devices_for, pick_device
from tasks.filling import fill_template
from tasks.library import by_domain, tools
from tasks.rand import below, permute
from tasks.spec import NO_DEFAULT, Param, ToolSpec, template_fields
from tasks.value_generators import Drawn, ValueGen

__all__ = ["Instance", "decorate", "instantiate", "join_requests"]

_OPENERS = (
    "",
    "",
    "",
    "",
    "",
    "",
    "hey, ",
    "hi! ",
    "quick one: ",
    "ok so ",
    "please ",
    "hello - ",
    "um, ",
    "so, ",
    "morning! ",
    "yo, ",
    "hey there, ",
    "one thing: ",
    "right, ",
    "question: ",
    "can you help? ",
    "hmm, ",
    "good evening. ",
    "listen, ",
    "sorry to bother you, ",
    "real quick - ",
    "ok: ",
    "hi again, ",
    "alright, ",
    "need a hand: ",
    "hey assistant, ",
    "afternoon! ",
)
_CLOSERS = (
    "",
    "",
    "",
    "",
    "",
    "",
    " thanks",
    " thx!",
    " please.",
    " asap",
    " :)",
    " cheers",
    " ty",
    " when you get a sec",
    " - thanks in advance",
    "!",
    " please and thank you",
    " thank you!",
    " if you can",
    " no rush",
    " much appreciated",
    " (urgent)",
    " ok?",
    " - appreciate it",
    " :D",
    " many thanks",
    " thanks a lot",
    ", cheers!",
    " please!",
    " when you can",
)
JOINERS = (" Also, ", " And ", ". Then ", "; plus ", " - and ", ". After that, ", ". Oh, and ", "\n")


# Not frozen (built per request; a frozen dataclass takes 2.5x as long). Treat it as immutable.
@dataclass(slots=True)
class Instance:
    """One filled request template: the words, the call that answers them, and its intent.

    ``ask`` is what the words mean, for the phrasing stage (``tasks.phrasing``): the tool and its
    purpose, every stated value with the spoken forms that keep it, and the withheld value of a
    missing_param request. It is JSON-serialisable and never shown to miners.
    """

    text: str
    call: dict[str, dict[str, list[Any]]]
    ask: dict[str, Any]


@cache
def _params(spec: ToolSpec) -> dict[str, Param]:
    return {param.name: param for param in spec.params}


@cache
def templates_with(spec: ToolSpec, param_name: str) -> tuple[str, ...]:
    """The tool's templates that mention a parameter."""
    return tuple(t for t in spec.templates if param_name in template_fields(t))


@dataclass(frozen=True, slots=True)
class _Field:
    """One placeholder of a template and what filling it needs."""

    name: str
    gen: ValueGen
    #: The parameter's description: what the value is, for the phrasing model.
    about: str
    #: Every spoken form of every value the generator can draw (a Pick's options), which a request
    #: withholding this value must not state.
    forbidden: tuple[str, ...]
    #: Another placeholder of the template draws from the same generator (keep their values apart).
    shares_gen: bool
    #: The default that a drawn value may equal (then omission is accepted too), else NO_DEFAULT.
    omittable: Any
    #: The parameter itself (devices decide by it whether they fit).
    param: Param


@dataclass(frozen=True, slots=True)
class _TemplatePlan:
    """Everything about filling one template of one tool that does not depend on the draw."""

    fields: tuple[_Field, ...]
    #: The call's arguments in parameter order: (name, None) for a placeholder's drawn value,
    #: (name, acceptable values) for an optional parameter the request leaves out.
    arguments: tuple[tuple[str, tuple[Any, ...] | None], ...]
    #: The placeholders a value device fits, and those a decoy device fits (indexes into fields).
    workable: tuple[int, ...] = ()
    decoyable: tuple[int, ...] = ()
    #: Placeholders the template writes a possessive after ("point {drone}'s lens"): a device's
    #: clause would read "the one the surveyor flagged's lens", so they take their value as drawn.
    owned: frozenset[str] = frozenset()


@cache
def _template_plan(spec: ToolSpec, template: str) -> _TemplatePlan:
    params = _params(spec)
    names = template_fields(template)
    gen_uses = Counter(id(params[name].gen) for name in names)
    fields = tuple(
        _Field(
            name,
            params[name].gen,
            params[name].description,
            _all_forms(params[name].gen),
            gen_uses[id(params[name].gen)] > 1,
            params[name].default if not params[name].required else NO_DEFAULT,
            params[name],
        )
        for name in names
    )
    arguments: list[tuple[str, tuple[Any, ...] | None]] = []
    for param in spec.params:
        if param.name in names:
            arguments.append((param.name, None))
        elif not param.required:
            arguments.append((param.name, ("",) if param.default is NO_DEFAULT else (param.default, "")))
    owned = frozenset(name for name in names if "{" + name + "}'s" in template)
    workable = tuple(
        index for index, f in enumerate(fields) if f.name not in owned and devices_for(f.param, "value")
    )
    decoyable = tuple(index for index, f in enumerate(fields) if devices_for(f.param, "decoy"))
    return _TemplatePlan(fields, tuple(arguments), workable, decoyable, owned)


@cache
def _richest(spec: ToolSpec) -> tuple[str, ...]:
    """The tool's templates with the most placeholders a value device fits (in template order)."""
    counts = [len(_template_plan(spec, template).workable) for template in spec.templates]
    most = max(counts)
    return tuple(template for template, count in zip(spec.templates, counts, strict=True) if count == most)


@cache
def richness(spec: ToolSpec) -> int:
    """How many values one request to the tool can state through devices at most (its richest
    templates' placeholders a value device fits)."""
    return len(_template_plan(spec, _richest(spec)[0]).workable)


def instantiate(
    spec: ToolSpec, rng: Random, template: str | None = None, vague: str | None = None
) -> Instance:
    """Fill a template (random when None) with drawn values; ``vague`` names a parameter that
    is only alluded to, never given (its phrase comes from the generator's vague list)."""
    scene = current_scene()
    if template is None:
        # A task of one request takes one of the tool's templates with the most placeholders a
        # device fits: the fewer values a request can state through devices, the more of it plain
        # type matching reads (one worked value: a lexical miner is right on about 70% of such
        # requests, three: 20-35%).
        templates = _richest(spec) if scene is not None and scene.worked > 2 else spec.templates
        template = templates[int(rng.random() * len(templates))]
    plan = _template_plan(spec, template)
    worked_at: tuple[int, ...] = ()
    decoy_at = -1
    if scene is not None:
        # Devices only inside a task's scene (see tasks.devices): values worked out (one, a
        # second and, where the task makes one request, a third: a cheater that guesses one
        # right still misses the call), and context with a same-typed value that is no argument.
        if plan.workable and rng.random() < WORK_SHARE:
            first = plan.workable[int(rng.random() * len(plan.workable))]
            worked_at = (first,)
            if len(plan.workable) > 1 and rng.random() < SECOND_SHARE:
                others = [index for index in plan.workable if index != first]
                second = others[int(rng.random() * len(others))]
                worked_at = (first, second)
                rest = [index for index in others if index != second]
                if rest and scene.worked > 2 and rng.random() < THIRD_SHARE:
                    worked_at = (first, second, rest[int(rng.random() * len(rest))])
        if plan.decoyable and rng.random() < DECOY_SHARE:
            decoy_at = plan.decoyable[int(rng.random() * len(plan.decoyable))]
    context: list[Fact] = []
    texts: dict[str, str] = {}
    drawn_args: dict[str, list[Any]] = {}
    values: list[dict[str, Any]] = []
    withheld: list[dict[str, Any]] = []
    # Values already drawn per shared generator (by identity), so that two parameters sharing a
    # generator (from and to currency, origin and destination) get different values.
    drawn_by_gen: dict[int, list[Any]] = {}
    for index, field in enumerate(plan.fields):
        name = field.name
        gen = field.gen
        if index in worked_at and name != vague and scene is not None and not (vague and field.shares_gen):
            found = _work(field, rng, scene, drawn_by_gen)
            if found is not None:
                device_name, worked = found
                texts[name] = worked.text
                values.append(
                    {
                        "slot": name,
                        "about": field.about,
                        "said": worked.text,
                        "mentions": [[kind, list(forms)] for kind, forms in worked.mentions],
                        "derived": list(worked.derived),
                        "device": device_name,
                    }
                )
                context.extend(worked.context)
                drawn_args[name] = list(worked.accepted)
                # At once: the next device's decoys in this request must not be this value.
                scene.stated.extend(worked.accepted)
                scene.hear(worked.mentions)
                for fact in worked.context:
                    scene.hear(fact.mentions)
                continue
        if name == vague:
            unsaid = None
            if scene is not None and name not in plan.owned:
                earlier = [value for accepted in drawn_args.values() for value in accepted]
                unsaid = _unsaid(field, rng, scene, earlier)
            if unsaid is not None and scene is not None:
                # A value of the withheld one's type, stated as a fact about something else.
                texts[name] = unsaid.text
                scene.decoys.extend(unsaid.accepted)
                context.extend(unsaid.context)
                for fact in unsaid.context:
                    scene.hear(fact.mentions)
                withheld.append(
                    {
                        "slot": name,
                        "about": field.about,
                        "said": unsaid.text,
                        "forbidden": list(field.forbidden),
                        "mentions": [[kind, list(forms)] for kind, forms in unsaid.mentions],
                    }
                )
                continue
            phrases = gen.vague
            texts[name] = phrases[int(rng.random() * len(phrases))]
            withheld.append(
                {"slot": name, "about": field.about, "said": texts[name], "forbidden": list(field.forbidden)}
            )
            continue
        drawn = _plain_draw(field, rng, scene, drawn_by_gen)
        texts[name] = drawn.text
        if scene is not None:
            scene.stated.extend(value for value in drawn.accepted if value != "")
            scene.hear(drawn.stated())
        values.append(
            {
                "slot": name,
                "about": field.about,
                "said": drawn.text,
                "mentions": [[kind, list(forms)] for kind, forms in drawn.stated()],
            }
        )
        accepted = list(drawn.accepted)
        if field.omittable is not NO_DEFAULT and _same(accepted[0], field.omittable):
            accepted.append("")
        drawn_args[name] = accepted
    args: dict[str, list[Any]] = {}
    for name, left_out in plan.arguments:
        if left_out is not None:
            args[name] = list(left_out)
        elif name in drawn_args:
            args[name] = drawn_args[name]
    text = fill_template(template, texts)
    if scene is not None:
        scene.stated.extend(value for accepted in drawn_args.values() for value in accepted if value != "")
        # A request whose worked values brought decoys of their own needs no more (its length counts).
        if decoy_at >= 0 and not any(fact.role == "decoy" for fact in context):
            decoy = _decoy(plan.fields[decoy_at], rng, scene, text)
            if decoy is not None:
                scene.decoys.extend(decoy.accepted)
                context.extend(decoy.context)
                for fact in decoy.context:
                    scene.hear(fact.mentions)
    ask = {
        "tool": spec.name,
        "purpose": spec.description,
        "example": text,
        "values": values,
        "withheld": withheld,
    }
    if context:
        text = _with_context(text, context, rng)
        ask["example"] = text
        ask["context"] = [
            {
                "role": fact.role,
                "about": fact.about,
                "said": fact.said,
                "mentions": [[kind, list(forms)] for kind, forms in fact.mentions],
            }
            for fact in context
        ]
    return Instance(text, {spec.name: args}, ask)


#: Shares of requests (with a placeholder a device fits) that state one value through a device, a
#: second one, and that carry a decoy. All on purpose: a request without them is open to type
#: matching, and a cheater that guesses one worked value right still misses the other. Measured by
#: bench/integrity.py (the lexical miner on stand-in phrased text, 200 per category, seed heldout-27):
#: round score 0.637 with 1.0 / 0.6 / 0.6, 0.602 with the second at 1.0, about 0.56 with all three.
#: A third worked value in every request gained less than the noise at that size and pushed parallel
#: requests past verification's length bound; generator version 12 works a third out only in the
#: request of a single-request task (``Scene.worked``, from the category), where it also takes a
#: template with the most placeholders a device fits and a tool with more of them
#: (``tasks.categories.RICH_WORKED``). Together, on stand-in phrased text (seed heldout-27): the
#: lexical miner's valid share 48.5% -> 37.5% on simple, 51% -> 35.8% on multiple tasks.
WORK_SHARE = 1.0
SECOND_SHARE = 1.0
THIRD_SHARE = 1.0
DECOY_SHARE = 1.0

_BEFORE = ("{fact}. {text}", "{fact}, so {text}", "{fact} - {text}", "({fact}) {text}")
_AFTER = ("{text}. {fact}", "{text} ({fact})", "{text} - {fact}", "{text}; {fact}")


def _with_context(text: str, context: list[Fact], rng: Random) -> str:
    """The request with each context sentence before or after it."""
    for fact in context:
        frames = _BEFORE if rng.random() < 0.5 else _AFTER
        frame = frames[int(rng.random() * len(frames))]
        if frame.startswith(("{text}.", "{text};")) and text.endswith(_SENTENCE_ENDS):
            frame = "{text} {fact}"  # "...flagged? the caretaker flagged WH-B2", not "flagged?; the"
        text = frame.format(fact=fact.said, text=text)
    return text


#: A joiner or frame that puts its own stop after the request ("; plus", ". Then", "{text}. {fact}")
#: drops it after a request that already ends a sentence: "...in degrees F? Then", not "F?. Then"
#: (version 10 wrote 180 such seams and 143 "?;" in 4,000 tasks).
_OWN_STOP = (".", ";")
_SENTENCE_ENDS = (".", "?", "!")


def _work(
    field: _Field, rng: Random, scene: Scene, drawn_by_gen: dict[int, list[Any]]
) -> tuple[str, Worked] | None:
    """(device name, the field's value stated by it) for a fitting device (a few tries), apart from
    values already drawn by the same generator (origin and destination stay different)."""
    device = pick_device(field.param, "value", rng)
    if device is None:
        return None
    earlier = drawn_by_gen.setdefault(id(field.gen), [])
    for _ in range(4):
        worked = device.work(field.param, rng, scene)
        if worked is not None and worked.accepted[0] not in earlier:
            earlier.append(worked.accepted[0])
            return device.name, worked
    return None


#: The words at the edges of a request, an opener and a closer.
_FIRST_WORD = re.compile(r"[^a-z]*([a-z]+)", re.IGNORECASE)
_LAST_WORD = re.compile(r"([a-z]+)[^a-z]*$", re.IGNORECASE)


def _plain_draw(field: _Field, rng: Random, scene: Scene | None, drawn_by_gen: dict[int, list[Any]]) -> Drawn:
    """A value for a field stated as drawn, in one loop of redraws that keeps every rule at once
    (two loops, one after the other, let the second undo the first: a "to" currency redrawn apart
    from the "from" one landed on another request's decoy "euros"): apart from the values drawn
    by the same generator (origin and destination differ), from the task's decoys, and, while
    draws last, not inside a text the task writes, nor one inside it (a rewording that dropped
    "dollars" would still seem to say it in another request's "Australian dollars")."""
    gen = field.gen
    earlier = drawn_by_gen.setdefault(id(gen), []) if field.shares_gen else None
    drawn = gen.draw(rng)
    for attempt in range(_REDRAWS):
        apart = earlier is None or drawn.accepted[0] not in earlier
        if scene is not None and apart:
            apart = not any(value in scene.decoys for value in drawn.accepted)
            if apart and attempt < _REDRAWS // 2 and scene.said:
                apart = not scene.echoes(drawn.stated())
        if apart:
            break
        drawn = gen.draw(rng)
    if earlier is not None:
        earlier.append(drawn.accepted[0])
    return drawn


#: Draws a stated value may take to keep the rules of ``_plain_draw``; the echo rule only for the
#: first half (an enum of three options in a four-request task may have no word left unsaid).
_REDRAWS = 16


#: The share of withheld values (where a "withheld" device fits) alluded to beside a stated value
#: of their type (``tasks.devices.unsaid``) rather than by the generator's vague phrase alone.
UNSAID_SHARE = 0.9


def _unsaid(field: _Field, rng: Random, scene: Scene, earlier: list[Any]) -> Worked | None:
    """The withheld field alluded to by a device, with a same-typed value stated for something
    else that differs from every value stated so far (``earlier``: this request's)."""
    if not devices_for(field.param, "withheld") or rng.random() >= UNSAID_SHARE:
        return None
    device = pick_device(field.param, "withheld", rng)
    if device is None:
        return None
    for _ in range(4):
        worked = device.work(field.param, rng, scene)
        if worked is not None and not any(
            value in scene.stated or value in earlier for value in worked.accepted
        ):
            return worked
    return None


def _decoy(field: _Field, rng: Random, scene: Scene, text: str) -> Worked | None:
    """A decoy for the field whose value differs from every value the task's requests state and
    is not a word of the request ``text`` (the 2 of "x^2": a rewording that dropped the decoy
    would still say it, and verification could not tell), nor reads inside another request's
    value or decoy, or they inside it."""
    device = pick_device(field.param, "decoy", rng)
    if device is None:
        return None
    for _ in range(4):
        decoy = device.work(field.param, rng, scene)
        if (
            decoy is not None
            and not any(value in scene.stated for value in decoy.accepted)
            and not any(_said_in(value, text) for value in decoy.accepted)
            and not scene.echoes(decoy.mentions)
        ):
            return decoy
    return None


def _said_in(value: Any, text: str) -> bool:
    """Whether ``value`` is written in ``text`` as a whole word or number."""
    form = str(value)
    if not form:
        return False
    start = text.find(form)
    while start >= 0:
        end = start + len(form)
        if not (start and text[start - 1].isalnum()) and not (end < len(text) and text[end].isalnum()):
            return True
        start = text.find(form, start + 1)
    return False


def _all_forms(gen: ValueGen) -> tuple[str, ...]:
    """Every spoken form of a pick's options (other generators draw from unbounded sets)."""
    options = getattr(gen, "options", None)
    if not isinstance(options, tuple):
        return ()
    forms: dict[str, None] = {}
    for choice in options:
        for form in (*choice.says, *choice.accepted):
            if isinstance(form, str) and len(form) > 2:
                forms.setdefault(form, None)
    return tuple(forms)


def _same(value: Any, default: Any) -> bool:
    return type(value) is type(default) and value == default


def decorate(text: str, rng: Random) -> str:
    """Add a casual opener and closer, as people do."""
    random = rng.random
    opener = _OPENERS[int(random() * len(_OPENERS))]
    closer = _CLOSERS[int(random() * len(_CLOSERS))]
    if not opener and random() < 0.5:
        text = text[:1].upper() + text[1:]
    # No word said twice across the seam ("please please", "no rush" after a request ending in "no").
    if opener and _last_word(opener) == _first_word(text):
        opener = ""
    if closer and _first_word(closer) == _last_word(text):
        closer = ""
    return f"{opener}{text}{closer}"


def _first_word(text: str) -> str:
    found = _FIRST_WORD.match(text)
    return found.group(1).lower() if found else ""


def _last_word(text: str) -> str:
    """The last word of ``text``'s last 40 characters, lower-cased ("" when none)."""
    tail = text[-40:]
    if not tail.isascii():
        found = _LAST_WORD.search(tail)
        return found.group(1).lower() if found else ""
    # What _LAST_WORD finds, read from the end: the letters before the last run of non-letters
    # (the search tries every start, and its pattern backtracks at each).
    end = len(tail.rstrip(_NOT_LETTERS))
    start = end
    while start and tail[start - 1] in _LETTERS:
        start -= 1
    return tail[start:end].lower()


_LETTERS = frozenset(string.ascii_letters)
#: Every ASCII character that is not a letter.
_NOT_LETTERS = "".join(chr(code) for code in range(128) if chr(code) not in _LETTERS)


def join_requests(texts: list[str], rng: Random) -> str:
    """Join several requests into one message."""
    out = texts[0]
    for text in texts[1:]:
        joiner = JOINERS[int(rng.random() * len(JOINERS))]
        if joiner[:1] in _OWN_STOP and out.endswith(_SENTENCE_ENDS):
            joiner = joiner[1:]
        out += joiner + (text[:1].upper() + text[1:] if joiner.endswith((". ", "\n")) else text)
    return out


def _conflict(a: ToolSpec, b: ToolSpec) -> bool:
    if a is b:
        return True
    return bool(a.conflicts) and bool(b.conflicts) and not set(a.conflicts).isdisjoint(b.conflicts)


def is_meta(spec: ToolSpec) -> bool:
    """Tools that ask the user or a human (clarify, escalate): a plausible answer to any request."""
    return "meta" in spec.conflicts


def pick_tool(
    rng: Random, exclude: tuple[ToolSpec, ...] = (), pool: tuple[ToolSpec, ...] | None = None
) -> ToolSpec:
    """A random library tool not conflicting with any in ``exclude``."""
    candidates = pool if pool is not None else tools()
    for _ in range(32):
        spec = candidates[below(rng, len(candidates))]
        if not any(_conflict(spec, other) for other in exclude):
            return spec
    for spec in candidates:
        if not any(_conflict(spec, other) for other in exclude):
            return spec
    raise LookupError("no library tool fits")


@lru_cache(maxsize=4096)
def _same_domains(gold: tuple[ToolSpec, ...]) -> tuple[ToolSpec, ...]:
    """The library tools of the gold tools' domains, domains in name order."""
    return tuple(spec for domain in sorted({spec.domain for spec in gold}) for spec in by_domain()[domain])


def near_misses(
    gold: tuple[ToolSpec, ...],
    count: int,
    rng: Random,
    same_domain_first: bool = True,
    allow_meta: bool = True,
) -> list[ToolSpec]:
    """Distractor tools: from the gold tools' domains first (near misses), then from anywhere.
    Never a gold tool, never one that could serve the same request."""
    chosen: list[ToolSpec] = []

    def fits(spec: ToolSpec) -> bool:
        return (
            spec not in chosen
            and (allow_meta or not is_meta(spec))
            and not any(_conflict(spec, other) for other in gold)
            and not any(_conflict(spec, other) for other in chosen)
        )

    if same_domain_first:
        local = list(_same_domains(gold))
        permute(rng, local)
        for spec in local:
            if len(chosen) == count:
                return chosen
            if fits(spec):
                chosen.append(spec)
    # Random draws rather than a shuffle of the whole library: a few tools are needed, not 68.
    library = tools()
    for _ in range(64):
        if len(chosen) >= count:
            return chosen
        spec = library[below(rng, len(library))]
        if fits(spec):
            chosen.append(spec)
    for spec in library:
        if len(chosen) >= count:
            break
        if fits(spec):
            chosen.append(spec)
    return chosen
