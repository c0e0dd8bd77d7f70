"""What a request offers to copy into argument values (``--model.guided forced|grounded``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_NUMBER_PATTERN = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Extraction:
    """What a request offers to copy into argument values: the text of its user turns and tool
    results, where a copied span may start (the start of a word, a number or a bracketed or
    quoted phrase), and the numbers it writes.

    A small model picks argument values badly but copies well: under ``--model.guided
    grounded`` a free string value must be a span of this text (starting at a word start, ending
    at a word end) and a number one of its numbers. Enum and boolean values stay schema-bound.
    """

    text: str
    starts: tuple[int, ...]
    integers: tuple[str, ...]
    decimals: tuple[str, ...]

    @classmethod
    def of_text(cls, text: str) -> Extraction:
        starts = tuple(
            index
            for index, char in enumerate(text)
            if not char.isspace()
            and char not in "\"'\\"
            and (
                index == 0
                or text[index - 1].isspace()
                or text[index - 1] in "\"'`([{"
                or (char.isalnum() and not text[index - 1].isalnum())
            )
        )
        integers: dict[str, None] = {}
        decimals: dict[str, None] = {}
        for match in _NUMBER_PATTERN.finditer(text):
            written = match.group().replace(",", "")
            for spelled in {written, written.lstrip("-")}:
                value = float(spelled)
                if "." not in spelled:
                    integers[str(int(spelled))] = None
                decimals[repr(value) if "." in repr(value) else f"{value:.1f}"] = None
                if "." in spelled:
                    decimals[spelled] = None
        return cls(text, starts, tuple(integers), tuple(decimals))

    @classmethod
    def of_messages(cls, messages: Sequence[dict[str, Any]]) -> Extraction | None:
        """The text of the user turns and of the tool results (None: nothing to copy from). In an
        episode a later call takes its values from what earlier calls returned (the file that
        list_files found, the id that a search gave)."""
        texts = [
            message["content"]
            for message in messages
            if isinstance(message, dict)
            and message.get("role") in ("user", "tool")
            and isinstance(message.get("content"), str)
        ]
        text = "\n".join(text for text in texts if text.strip())
        return cls.of_text(text) if text else None

    def ends_word(self, end: int) -> bool:
        """Whether a span may end before `end` (not inside a word or a number, not on a space)."""
        text = self.text
        if text[end - 1].isspace():
            return False
        return end >= len(text) or not (text[end - 1].isalnum() and text[end].isalnum())
