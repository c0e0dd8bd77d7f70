"""A person, place, address or number named through a relation given in context.

"My sister Ana lives in Porto, my cousin Omar in Lyon ... somewhere near my sister": the request
states two facts of the same shape (one is a decoy) and refers to one of them by relation, so
neither the type of the value nor its position tells which one is meant.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from random import Random

from tasks.devices import Fact, Scene, Worked
from tasks.library.common import CITY, EMAIL, PERSON, PHONE, first_name
from tasks.spec import Param
from tasks.value_generators import Mention, ValueGen

_KIN = (
    "sister",
    "brother",
    "cousin",
    "aunt",
    "uncle",
    "best friend",
    "grandmother",
    "old roommate",
    "business partner",
    "godmother",
    "niece",
    "nephew",
)
_ROLES = (
    "accountant",
    "plumber",
    "piano teacher",
    "dentist",
    "flatmate",
    "babysitter",
    "personal trainer",
    "tutor",
    "mechanic",
    "team lead",
    "editor",
    "travel agent",
)


@dataclass(frozen=True, slots=True)
class _Shape:
    """How one kind of value is tied to a relation: the relations, the fact and the reference."""

    relations: tuple[str, ...]
    facts: tuple[str, ...]  # {rel}, {name}, {value}
    refs: tuple[str, ...]  # {rel}, {name}
    named: bool  # the fact names the relative (a first name), for "{name}'s ..." references


@cache
def _shapes() -> dict[int, tuple[ValueGen, _Shape]]:

    return {
        id(CITY): (
            CITY,
            _Shape(
                _KIN,
                ("my {rel} {name} lives in {value}", "{name}, my {rel}, is based in {value}"),
                ("where my {rel} lives", "the city my {rel} lives in", "{name}'s city"),
                True,
            ),
        ),
        id(PERSON): (
            PERSON,
            _Shape(_ROLES, ("my {rel} is {value}", "{value} is my {rel}"), ("my {rel}",), False),
        ),
        id(EMAIL): (
            EMAIL,
            _Shape(
                _ROLES,
                ("my {rel}'s address is {value}", "you can reach my {rel} at {value}"),
                ("my {rel}", "my {rel}'s address"),
                False,
            ),
        ),
        id(PHONE): (
            PHONE,
            _Shape(
                _ROLES + _KIN,
                ("my {rel}'s number is {value}", "my {rel} picks up on {value}"),
                ("my {rel}", "my {rel}'s phone"),
                False,
            ),
        ),
    }


def _first_name(rng: Random) -> str:

    return first_name(rng)


@dataclass(frozen=True, slots=True)
class Reference:
    name: str = "reference"
    weight: float = 1.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        return id(param.gen) in _shapes() and param.type == "string"

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        gen, shape = _shapes()[id(param.gen)]
        random = rng.random
        relations = shape.relations
        first = int(random() * len(relations))
        second = (first + 1 + int(random() * (len(relations) - 1))) % len(relations)
        value = gen.draw(rng)
        decoy = gen.draw(rng)
        if any(
            str(form) in str(said) or str(said) in str(form)
            for form in decoy.accepted
            for said in value.accepted
            if form and said
        ):
            return None  # the same town in two countries reads the same; "Greendale" in "Upper Greendale"
        if not scene.unused(value.accepted, decoy.accepted):
            return None
        facts: list[Fact] = []
        names: list[str] = []
        for rel, drawn, role in ((relations[first], value, "fact"), (relations[second], decoy, "decoy")):
            name = _first_name(rng) if shape.named else ""
            if name in names:
                return None
            names.append(name)
            template = shape.facts[int(random() * len(shape.facts))]
            # The relation as text, counted: the fact and the reference each say it, so a rewording
            # that drops the reference (and leaves two facts to choose from) is refused.
            mentions = (*drawn.stated(), ("text", (f"my {rel}",)))
            if name:
                mentions = (*mentions, ("text", (name,)))
            said = template.format(rel=rel, name=name, value=drawn.text)
            facts.append(Fact(said, mentions, role, f"my {rel}"))
        if not scene.hold("relation", f"my {relations[first]}", f"my {relations[second]}"):
            return None  # "my sister" of another request: "where my sister lives" would not tell
        permuted = facts if random() < 0.5 else facts[::-1]
        rel = relations[first]
        ref = shape.refs[int(random() * len(shape.refs))]
        said = ref.format(rel=rel, name=names[0])
        mention: Mention = ("text", (f"my {rel}",)) if "{rel}" in ref else ("text", (names[0],))
        # Held at once: the request's other devices must not state the decoy as their value.
        scene.decoys.extend(decoy.accepted)
        return Worked(said, value.accepted, (mention,), (), tuple(permuted))


DEVICE = Reference()
