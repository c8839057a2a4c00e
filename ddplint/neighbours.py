"""The project around one file: the modules it imports from its own package, found on disk.

Tools that hand us a single file (flake8, editors, stdin) still need the project index: a call
into a sibling module may reach a collective two calls down. Imports are followed breadth-first
from the file, within a time and size budget; past it, the analysis uses what it has.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Iterator
from pathlib import Path

from ddplint.facts import ModuleFacts
from ddplint.linter import Linter, LoadError

DEFAULT_BUDGET = 2.0  # seconds
MAX_MODULES = 200
_CACHE_SIZE = 512

# Resolved path → ((mtime_ns, size), facts): one flake8 worker or editor session loads a module once.
_cache: OrderedDict[Path, tuple[tuple[int, int], ModuleFacts]] = OrderedDict()


def import_root(path: Path) -> Path:
    """The folder imports are resolved from: above the outermost package holding `path`."""
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return folder


def module_files(root: Path, qualname: str) -> Iterator[Path]:
    """Files under `root` that `qualname` may live in: the longest module prefix, and its packages."""
    parts = qualname.split(".")
    found = False
    for cut in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:cut])
        package = base / "__init__.py"
        if package.is_file():
            yield package
            found = True
        elif not found and base.with_suffix(".py").is_file():
            yield base.with_suffix(".py")
            found = True


def _load(linter: Linter, path: Path) -> ModuleFacts:
    stat = path.stat()
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _cache.get(path)
    if cached is not None and cached[0] == key:
        _cache.move_to_end(path)
        return cached[1]
    facts = linter.load(str(path))
    _cache[path] = (key, facts)
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return facts


def load_neighbours(
    linter: Linter,
    modules: list[ModuleFacts],
    budget: float = DEFAULT_BUDGET,
    max_modules: int = MAX_MODULES,
) -> int:
    """Add the project modules that `modules` import (transitively) to `linter.project`.

    Files already among `modules` are not read again. Returns how many modules were added.
    """
    deadline = time.monotonic() + budget
    seen: set[Path] = set()
    queue: deque[tuple[Path, ModuleFacts]] = deque()
    for facts in modules:
        try:
            path = facts.path.resolve()
        except OSError:
            continue
        seen.add(path)
        queue.append((import_root(path), facts))
    loaded = 0
    while queue:
        root, current = queue.popleft()
        for target in sorted(set(current.imports.aliases.values())):
            for path in module_files(root, target):
                if path in seen:
                    continue
                if time.monotonic() > deadline or loaded >= max_modules:
                    return loaded
                seen.add(path)
                try:
                    module = _load(linter, path)
                except (LoadError, OSError, RecursionError, MemoryError):
                    continue  # context is best effort: the checked file is still checked
                linter.project.add(module)
                queue.append((root, module))
                loaded += 1
    return loaded
