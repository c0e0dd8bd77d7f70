"""The one loader of the registries whose entries are modules: ``{name: "package.module"}`` tables
whose modules each define one class with that ``name`` (episode environments, tool designs).

A module is imported when its entry is first used, so a registry costs nothing until then (the
validator's score state reads the episode registry without loading any simulation).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import TypeVar

__all__ = ["registered_class", "registered_module"]

T = TypeVar("T")


def registered_module(table: Mapping[str, str], name: str, what: str) -> ModuleType:
    """The module registered as ``name``; a ``KeyError`` naming the known ones for another name."""
    try:
        target = table[name]
    except KeyError:
        raise KeyError(f"unknown {what} {name!r} (known: {', '.join(table)})") from None
    return importlib.import_module(target)


def registered_class(table: Mapping[str, str], name: str, base: type[T], what: str) -> type[T]:
    """The subclass of ``base`` whose ``name`` is ``name``, from the module registered as ``name``."""
    module = registered_module(table, name, what)
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, base) and getattr(value, "name", None) == name:
            return value
    raise KeyError(f"module {module.__name__} defines no {what} named {name!r}")
