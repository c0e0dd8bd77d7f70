"""The generator's fast paths give what the plain code they replace gives.

Task generation fills frames and templates from cuts made once per frame (not a regular
expression with a Python call back per match), and keeps a scene's lower-cased texts and its set
of taken values up to date as the scene's lists grow (not made again for every draw). The pinned
digests (test_pinned_output.py) hold the output; these tests hold each path against the plain
code on inputs the digests may never meet (a text that brings a determiner, a list cut short).
"""

from __future__ import annotations

import re
from functools import partial
from random import Random
from typing import Any

from tasks.devices import Scene
from tasks.devices._words import WORD_BEFORE, filled, opens_with
from tasks.filling import _joined_after, _seam, fill_template
from tasks.library import tools

_WORDS = ("for", "the", "a", "my", "to", "in", "on", "at", "of", "with", "by", "our", "Friday", "x")


def _plain_filled(frame: str, **texts: str) -> str:
    def seam(match: re.Match[str]) -> str:
        if opens_with(texts.get(match.group(2), ""), match.group(1)):
            return "{" + match.group(2) + "}"
        return match.group(0)

    return WORD_BEFORE.sub(seam, frame).format(**texts)


def _plain_template_filled(template: str, texts: dict[str, str]) -> str:
    """What ``fill_template`` did with regular expressions alone (its slow path's parts)."""
    seam = partial(_seam, texts)
    joined = WORD_BEFORE.sub(seam, template)
    if joined != template:
        joined = WORD_BEFORE.sub(seam, joined)
    return _joined_after(joined, texts)


def _text(rng: Random) -> str:
    """A placeholder's text that may open or end with a frame's words, or bring a determiner."""
    words = [_WORDS[int(rng.random() * len(_WORDS))] for _ in range(1 + int(rng.random() * 3))]
    if rng.random() < 0.3:
        words.insert(0, ("whatever", "Ana's", "what", "The")[int(rng.random() * 4)])
    return " ".join(words)


def test_filling_a_frame_from_its_cuts_is_the_substitution() -> None:
    rng = Random("frames")
    names = ("x", "a", "b")
    for _ in range(2000):
        pieces = []
        for _ in range(1 + int(rng.random() * 4)):
            pieces.append(_WORDS[int(rng.random() * len(_WORDS))])
            if rng.random() < 0.6:
                pieces.append("{" + names[int(rng.random() * len(names))] + "}")
        frame = " ".join(pieces) + (", then" if rng.random() < 0.3 else "")
        texts = {name: _text(rng) for name in names}
        assert filled(frame, **texts) == _plain_filled(frame, **texts), (frame, texts)


def test_filling_a_template_from_its_cuts_is_the_substitution() -> None:
    rng = Random("templates")
    checked = dropped = 0
    for spec in tools():
        for template in spec.templates:
            names = set(re.findall(r"\{(\w+)\}", template))
            for _ in range(3):
                texts = {name: _text(rng) for name in names}
                got = fill_template(template, texts)
                assert got == _plain_template_filled(template, texts), (template, texts)
                checked += 1
                dropped += got != template.format_map(texts)
    # Both paths ran: templates where a word was dropped (or a comma added) and where none was.
    assert checked > 800 and 50 < dropped < checked - 50, (checked, dropped)


def _plain_texts(scene: Scene, people: bool) -> list[str]:
    values: list[Any] = [*scene.stated, *scene.decoys, *(scene.people if people else ())]
    return [str(value).lower() for value in values if isinstance(value, str) and len(value) > 2] + scene.said


def _plain_taken(scene: Scene) -> set[Any]:
    return {value for value in (*scene.stated, *scene.decoys) if isinstance(value, (str, int, float))}


def test_a_scenes_texts_and_taken_values_follow_its_lists() -> None:
    rng = Random("scene")
    pool: tuple[Any, ...] = ("Lisbon", "PORTO", "ab", 5, 2.5, None, ("t",), "Lake Langdale", True, "")
    scene = Scene(0)
    for step in range(400):
        target = (scene.stated, scene.decoys, scene.people, scene.said)[int(rng.random() * 4)]
        if step % 97 == 96:
            del target[: len(target) // 2]  # a list cut short is read again
        else:
            target.extend(pool[int(rng.random() * len(pool))] for _ in range(int(rng.random() * 3)))
        if target is scene.said or target is scene.people:
            target[:] = [str(value).lower() for value in target]
        assert scene.texts() == _plain_texts(scene, people=False)
        assert scene.texts(people=True) == _plain_texts(scene, people=True)
        taken = scene.taken()
        assert taken == _plain_taken(scene)
        taken.add("changed by the caller")  # a copy: the scene's own set is not touched
        assert scene.taken() == _plain_taken(scene)


def test_the_last_word_read_from_the_end_is_the_search() -> None:
    from tasks.builtin import _LAST_WORD, _last_word

    rng = Random("last word")
    alphabet = "ab Z?.!;,'-1 \u00e9\u017f"
    for _ in range(5000):
        text = "".join(alphabet[int(rng.random() * len(alphabet))] for _ in range(int(rng.random() * 60)))
        found = _LAST_WORD.search(text[-40:])
        assert _last_word(text) == (found.group(1).lower() if found else ""), text
