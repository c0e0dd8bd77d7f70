"""Unified diffs over an in-memory file tree: applying a patch as ``git apply`` would, and writing one.

The workspace environment edits its files only through these: ``apply_patch`` applies every hunk
of every file or, when one does not apply (context that does not match, a missing file, a file
that already exists), changes nothing and says why in ``git apply``'s words. ``diff_files`` is
``git diff`` of the working files against the committed baseline. Paths are workspace-relative;
one that leaves the workspace (absolute, ``..``) is refused before anything is read.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from tasks.episodes.environment import ToolError

__all__ = [
    "MAX_PATCH_CHARS",
    "apply_patch",
    "changed_paths",
    "diff_files",
    "files_under",
    "is_directory",
    "iter_diff",
    "make_patch",
    "normalise_path",
    "patch_targets",
]

#: A patch longer than this is refused (the workspace is small; so are real fixes); so is a path.
MAX_PATCH_CHARS = 200_000
MAX_PATH_CHARS = 300
#: Files one patch may touch (each new one is checked against every file of the workspace).
MAX_PATCH_FILES = 100
_DEV_NULL = "/dev/null"
#: Line numbers and counts in ASCII digits, at most 9 of them (``int`` refuses other scripts' digits
#: and more than 4300 digits; no file here has a billion lines).
_HUNK_HEADER = re.compile(r"^@@ -([0-9]{1,9})(?:,([0-9]{1,9}))? \+([0-9]{1,9})(?:,([0-9]{1,9}))? @@")


def normalise_path(path: str) -> str:
    """A workspace-relative path in canonical form (``./src//x.py`` -> ``src/x.py``, ``.`` -> ``""``);
    ToolError for one outside the workspace."""
    text = path.strip()
    if text.startswith(("/", "~")) or "\\" in text or "\x00" in text:
        raise ToolError(f"{path[:200]}: outside the workspace (use a path relative to its root)")
    if len(text) > MAX_PATH_CHARS:
        raise ToolError(f"{path[:80]}...: path too long (at most {MAX_PATH_CHARS} characters)")
    normal = posixpath.normpath(text) if text else "."
    if normal == ".." or normal.startswith("../"):
        raise ToolError(f"{path[:200]}: outside the workspace (use a path relative to its root)")
    return "" if normal == "." else normal


@dataclass
class _Hunk:
    old_start: int
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)


@dataclass
class _FilePatch:
    old_path: str | None  # None: /dev/null (the file is created)
    new_path: str | None  # None: /dev/null (the file is deleted)
    hunks: list[_Hunk] = field(default_factory=list)


def _header_path(line: str) -> str | None:
    """The path of a ``---``/``+++`` line without git's ``a/``/``b/`` prefix; None for /dev/null."""
    text = line[4:].split("\t", 1)[0].strip()
    if text.startswith('"') and text.endswith('"') and len(text) > 1:
        text = text[1:-1]
    if text == _DEV_NULL:
        return None
    if text.startswith(("a/", "b/")):
        text = text[2:]
    return text


def patch_targets(patch: str) -> list[tuple[str | None, str | None]]:
    """The (old, new) header paths of every file in a patch, as written (None for /dev/null);
    never raises, so the safety check can read a patch that would not apply."""
    lines = patch.splitlines()
    return [
        (_header_path(line), _header_path(lines[index + 1]))
        for index, line in enumerate(lines[:-1])
        if line.startswith("--- ") and lines[index + 1].startswith("+++ ")
    ]


def _parse(patch: str) -> list[_FilePatch]:
    lines = [line.rstrip("\r") for line in patch.splitlines()]
    patches: list[_FilePatch] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
            current = _FilePatch(_header_path(line), _header_path(lines[index + 1]))
            patches.append(current)
            index += 2
            while index < len(lines) and lines[index].startswith("@@"):
                index = _parse_hunk(lines, index, current)
            if index < len(lines) and lines[index][:1] in ("+", "-", " ") and not _is_header(lines, index):
                raise ToolError(
                    f"error: corrupt patch at line {index + 1} (a hunk is longer than its @@ header says)"
                )
            continue
        if line.startswith("@@"):
            raise ToolError(f"error: patch fragment without header at line {index + 1}: {line[:80]}")
        index += 1
    if not patches:
        raise ToolError("error: no valid patches in input (expected '--- a/PATH', '+++ b/PATH' and @@ hunks)")
    if len(patches) > MAX_PATCH_FILES:
        raise ToolError(
            f"error: the patch touches {len(patches)} files (at most {MAX_PATCH_FILES} per patch)"
        )
    return patches


def _is_header(lines: list[str], index: int) -> bool:
    return lines[index].startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ ")


def _parse_hunk(lines: list[str], index: int, into: _FilePatch) -> int:
    """Read the hunk whose ``@@`` header is at ``index``; the index after it."""
    match = _HUNK_HEADER.match(lines[index])
    if match is None:
        raise ToolError(f"error: corrupt patch at line {index + 1}: bad hunk header {lines[index][:80]!r}")
    old_left = int(match[2]) if match[2] is not None else 1
    new_left = int(match[4]) if match[4] is not None else 1
    hunk = _Hunk(int(match[1]))
    index += 1
    while old_left > 0 or new_left > 0:
        if index >= len(lines):
            raise ToolError(f"error: corrupt patch at line {index + 1} (the patch ends inside a hunk)")
        line = lines[index]
        marker, text = line[:1], line[1:]
        if marker == "\\":  # "\ No newline at end of file"
            index += 1
            continue
        if marker in (" ", ""):
            hunk.old.append(text)
            hunk.new.append(text)
            old_left -= 1
            new_left -= 1
        elif marker == "-":
            hunk.old.append(text)
            old_left -= 1
        elif marker == "+":
            hunk.new.append(text)
            new_left -= 1
        else:
            raise ToolError(f"error: corrupt patch at line {index + 1}: {line[:80]!r}")
        if old_left < 0 or new_left < 0:
            raise ToolError(
                f"error: corrupt patch at line {index + 1} (the hunk does not match its @@ line counts)"
            )
        index += 1
    while index < len(lines) and lines[index].startswith("\\"):
        index += 1
    into.hunks.append(hunk)
    return index


def _apply_hunks(path: str, lines: list[str], hunks: list[_Hunk]) -> list[str]:
    """``lines`` with every hunk applied; a hunk whose old lines are not found fails the file.

    Each hunk applies below the previous one, so everything below the last match is still the
    original text: every search runs on the original lines (``_Finder``, linear time), and the
    result is assembled once at the end."""
    finder = _Finder(lines)
    pieces: list[list[str]] = []
    floor = 0  # in the original lines: a hunk applies below the previous one
    for number, hunk in enumerate(hunks, start=1):
        expected = hunk.old_start if not hunk.old else hunk.old_start - 1
        position = finder.locate(hunk.old, expected, floor)
        if position is None:
            raise ToolError(
                f"error: patch failed: {path}:{hunk.old_start}\n"
                f"error: {path}: patch does not apply (hunk {number}: its context and removed lines "
                "do not match the file; read the file again and rebuild the hunk)"
            )
        pieces.append(lines[floor:position])
        pieces.append(hunk.new)
        floor = position + len(hunk.old)
    pieces.append(lines[floor:])
    return [line for piece in pieces for line in piece]


class _Finder:
    """Where a run of lines occurs in a file, in linear time whatever the lines repeat.

    Each distinct line becomes one character (its number in order of appearance), so the file is a
    string and a hunk's old lines a substring of it; ``str.find`` searches in C in linear time (the
    two-way algorithm for long needles), where comparing line lists at every position is quadratic
    (one hunk of 30,000 identical lines took seconds)."""

    def __init__(self, lines: list[str]) -> None:
        self._codes: dict[str, str] = {}
        self._text = "".join(self._code(line) for line in lines)
        self._reversed: str | None = None

    def _code(self, line: str) -> str:
        code = self._codes.get(line)
        if code is None:
            code = self._codes[line] = chr(len(self._codes))  # at most ~1.1 million lines: one per char
        return code

    def locate(self, old: list[str], expected: int, floor: int) -> int | None:
        """Where ``old`` occurs at or after ``floor``, nearest to ``expected`` (the lower position
        on a tie), as git applies a hunk at an offset when the lines above it moved."""
        last = len(self._text) - len(old)
        if last < floor:
            return None
        expected = min(max(expected, floor), last)
        if not old:
            return expected
        codes = [self._codes.get(line) for line in old]
        if any(code is None for code in codes):
            return None  # a line the file does not have
        needle = "".join(code for code in codes if code is not None)
        after = self._text.find(needle, expected, last + len(old))
        # The nearest at or before ``expected``: a forward search on the reversed text (``rfind``
        # has no linear-time guarantee).
        if self._reversed is None:
            self._reversed = self._text[::-1]
        size = len(self._text)
        found = self._reversed.find(needle[::-1], size - expected - len(old), size - floor)
        before = size - found - len(old) if found != -1 else -1
        if before == -1:
            return None if after == -1 else after
        if after == -1 or expected - before <= after - expected:
            return before
        return after


def _lines(content: str) -> list[str]:
    return content.splitlines()


def _content(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def _check_new(files: Mapping[str, str], path: str) -> None:
    """ToolError unless ``path`` can become a new file (not the root, not taken by a file or a
    directory, no file where one of its directories would be)."""
    if not path:
        raise ToolError("error: a patch names no file path")
    prefix = path + "/"
    if path in files or any(name.startswith(prefix) for name in files):
        raise ToolError(f"error: {path}: already exists in working directory")
    parts = path.split("/")
    for depth in range(1, len(parts)):
        if "/".join(parts[:depth]) in files:
            raise ToolError(f"error: {path}: {'/'.join(parts[:depth])} is a file, not a directory")


def apply_patch(files: Mapping[str, str], patch: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    """The files after applying a unified diff, and what changed (``[{"path", "change"}]``).
    All or nothing: ToolError (``files`` untouched) when any file or hunk does not apply."""
    if len(patch) > MAX_PATCH_CHARS:
        raise ToolError(f"error: patch too large ({len(patch)} characters, at most {MAX_PATCH_CHARS})")
    result = dict(files)
    changes: list[dict[str, str]] = []
    for file_patch in _parse(patch):
        old_path = normalise_path(file_patch.old_path) if file_patch.old_path is not None else None
        new_path = normalise_path(file_patch.new_path) if file_patch.new_path is not None else None
        if old_path is None and new_path is None:
            raise ToolError("error: a patch from /dev/null to /dev/null changes nothing")
        if old_path is None:
            assert new_path is not None
            _check_new(result, new_path)
            if any(hunk.old for hunk in file_patch.hunks):
                raise ToolError(f"error: {new_path}: a new file's hunks may only add lines")
            result[new_path] = _content(_apply_hunks(new_path, [], file_patch.hunks))
            changes.append({"path": new_path, "change": "created"})
            continue
        if old_path not in result:
            raise ToolError(f"error: {old_path}: No such file or directory")
        patched = _apply_hunks(old_path, _lines(result[old_path]), file_patch.hunks)
        if new_path is None:
            if patched:
                raise ToolError(
                    f"error: {old_path}: a deletion must remove every line of the file (patch does not apply)"
                )
            del result[old_path]
            changes.append({"path": old_path, "change": "deleted"})
            continue
        if new_path != old_path:
            _check_new(result, new_path)
            del result[old_path]
        result[new_path] = _content(patched)
        change = "modified" if new_path == old_path else f"renamed from {old_path}"
        changes.append({"path": new_path, "change": change})
    return result, changes


def make_patch(path: str, before: str, after: str) -> str:
    """The unified diff (git's ``a/``/``b/`` form, 3 lines of context) turning ``before`` into ``after``."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
        )
    )


def iter_diff(
    committed: Mapping[str, str], files: Mapping[str, str], path: str | None = None
) -> Iterator[str]:
    """``git diff`` of the working files against the committed baseline (all files, or those at or
    under ``path``), sorted by path, in pieces: a reader that needs only its start stops early."""
    prefix = normalise_path(path) if path else ""
    for name in sorted(set(committed) | set(files)):
        if prefix and name != prefix and not name.startswith(prefix + "/"):
            continue
        before, after = committed.get(name), files.get(name)
        if before == after:
            continue
        from_name = f"a/{name}" if before is not None else _DEV_NULL
        to_name = f"b/{name}" if after is not None else _DEV_NULL
        yield f"diff --git a/{name} b/{name}\n"
        if before is None:
            yield "new file mode 100644\n"
        elif after is None:
            yield "deleted file mode 100644\n"
        yield from difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            (after or "").splitlines(keepends=True),
            from_name,
            to_name,
        )


def changed_paths(committed: Mapping[str, str], files: Mapping[str, str], path: str | None = None) -> int:
    """How many files ``iter_diff`` shows (without diffing them)."""
    prefix = normalise_path(path) if path else ""
    return sum(
        1
        for name in set(committed) | set(files)
        if (not prefix or name == prefix or name.startswith(prefix + "/"))
        and committed.get(name) != files.get(name)
    )


def diff_files(committed: Mapping[str, str], files: Mapping[str, str], path: str | None = None) -> str:
    """``iter_diff`` as one text."""
    return "".join(iter_diff(committed, files, path))


def is_directory(files: Mapping[str, str], path: str) -> bool:
    """Whether ``path`` (normalised; "" is the root) holds any file."""
    if not path:
        return True
    prefix = path + "/"
    return any(name.startswith(prefix) for name in files)


def files_under(files: Mapping[str, str], path: str) -> list[str]:
    """Files at or below ``path``, sorted."""
    if not path:
        return sorted(files)
    prefix = path + "/"
    return sorted(name for name in files if name == path or name.startswith(prefix))
