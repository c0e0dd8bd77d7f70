"""An identifier picked by what it stands for: "ORD-48213 is the grey backpack, ORD-90017 the
blue kettle ... cancel the one with the grey backpack". Both identifiers are written, so the
pattern of an identifier does not tell which one is meant."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Fact, Scene, Worked
from tasks.spec import Param
from tasks.values import Composed

_COLOURS = (
    "grey", "blue", "green", "red", "yellow", "black", "white", "orange", "purple", "silver",
    "teal", "brown", "pink", "navy", "olive",
)  # fmt: skip
_THINGS = (
    "backpack", "kettle", "lamp", "desk chair", "jacket", "umbrella", "speaker", "blender",
    "suitcase", "monitor", "rug", "bike helmet", "drone", "scooter", "notebook", "tent",
)  # fmt: skip
_FACTS = ("{value} is the {label}", "the {label} is {value}", "{value} goes with the {label}")
_REFS = ("the one with the {label}", "the {label} one")


def _label(rng: Random) -> str:
    return _COLOURS[int(rng.random() * len(_COLOURS))] + " " + _THINGS[int(rng.random() * len(_THINGS))]


@dataclass(frozen=True, slots=True)
class Labelled:
    name: str = "labelled"
    weight: float = 1.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        gen = param.gen
        # Identifiers made of a prefix and digits (``tasks.library.common.ident``).
        return (
            isinstance(gen, Composed)
            and param.type == "string"
            and len(gen.parts) >= 3
            and all(part == tuple("0123456789") for part in gen.parts)
        )

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        value = param.gen.draw(rng)
        decoy = param.gen.draw(rng)
        label, other = _label(rng), _label(rng)
        if any(form in value.accepted for form in decoy.accepted) or label == other:
            return None
        facts = []
        for drawn, said_label, role in ((value, label, "fact"), (decoy, other, "decoy")):
            frame = _FACTS[int(rng.random() * len(_FACTS))]
            facts.append(
                Fact(
                    frame.format(value=drawn.text, label=said_label),
                    (*drawn.stated(), ("text", (said_label,))),
                    role,
                )
            )
        if rng.random() < 0.5:
            facts.reverse()
        said = _REFS[int(rng.random() * len(_REFS))].format(label=label)
        return Worked(said, value.accepted, (("text", (label,)),), (), tuple(facts))


DEVICE = Labelled()
