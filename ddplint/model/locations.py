"""Imports of modules in folders without `__init__.py`, resolved by where the files are.

A training repository is often a folder of scripts: `main.py` beside `data_loading/loader.py`,
no `__init__.py` anywhere, and `from data_loading.loader import build` works because Python puts
the script's folder on `sys.path` (and `data_loading` is then a namespace package). Such a module
is named by its file alone (`loader`, see `module_name_for`); the name an import spells for it
(`data_loading.loader`) is one of its *aliases*: its folders, read from an ancestor folder down.

An importer finds an alias from the folder its own absolute imports start from (its folder, or
the one above its outermost package) and that folder's ancestors, nearest first, as if each were
on `sys.path`. An alias rooted in no such folder (a sibling project's `data_loading/`) is not
found. A module named so by packages (`__init__.py` files) is always found first, by the caller:
only names no module of the project bears are resolved here. The model, the run's grouping and the
context read around a single file all resolve with these functions, so that they agree.
"""

from __future__ import annotations

import keyword
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")

# How many folders above its own a module may be imported from: as deep as training code nests
# its folders (torch's own `distributed/_shard/sharded_tensor/_ops/` is five below `torch/`).
MAX_LEVELS = 8


def import_start(path: str | Path, module_name: str) -> str:
    """The folder a module's absolute imports start from: the one holding its outermost package
    (its own folder for a loose script), as an absolute path."""
    folder = os.path.dirname(os.path.abspath(path))
    up = module_name.count(".") + (1 if os.path.basename(path) == "__init__.py" else 0)
    for _ in range(up):
        folder = os.path.dirname(folder)
    return folder


def aliases(path: str | Path, module_name: str) -> Iterator[tuple[str, str]]:
    """The other names an import may give a module, each with the folder it is read from:
    `a/b/m.py` (named `m`) is `b.m` from `a/`, `a.b.m` from `a/`'s parent. Folders whose names
    an import cannot spell end the list."""
    root = import_start(path, module_name)
    name = module_name
    for _ in range(MAX_LEVELS):
        head = os.path.basename(root)
        parent = os.path.dirname(root)
        if parent == root or not head.isidentifier() or keyword.iskeyword(head):
            return
        name, root = f"{head}.{name}", parent
        yield name, root


class Aliases(Generic[T]):
    """What each alias denotes, for resolving the imports of a set of modules."""

    def __init__(self, modules: Iterable[tuple[str | Path, str, T]]) -> None:
        # Alias → (the folder it is read from, what it denotes), in the order given.
        self._by_alias: dict[str, list[tuple[str, T]]] = {}
        for path, module_name, value in modules:
            for alias, root in aliases(path, module_name):
                self._by_alias.setdefault(alias, []).append((root, value))

    def __bool__(self) -> bool:
        return bool(self._by_alias)

    def resolve(self, importer: str | Path, importer_module: str, name: str) -> T | None:
        """What importing `name` from the module at `importer` loads, when `name` is an alias:
        the one read from the nearest folder the importer's imports start from or above."""
        candidates = self._by_alias.get(name)
        if not candidates:
            return None
        folder = import_start(importer, importer_module)
        best: tuple[str, T] | None = None
        for root, value in candidates:
            if _within(folder, root) and (best is None or len(root) > len(best[0])):
                best = (root, value)
        return best[1] if best is not None else None


def _within(folder: str, root: str) -> bool:
    return folder == root or folder.startswith(root.rstrip(os.sep) + os.sep)
