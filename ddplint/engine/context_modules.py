"""The project around some files: the modules they import, and the other modules of their package.

Tools that hand us a few files (flake8, editors, stdin, pre-commit) still need the project index:
a call into a sibling module may reach a collective two calls down, and the loop that iterates a
loader may live in the module that imports the one building it. Imports are followed first, then
the package's modules that import a checked one, nearest folder first, within a time and size
budget; past it, the analysis uses what it has. Unrelated modules stay out: the analysis
simulates every module it is given.
"""

from __future__ import annotations

import os
import stat
import time
from collections import OrderedDict, deque
from collections.abc import Iterator
from itertools import chain
from pathlib import Path

from ddplint.engine.checker import Linter
from ddplint.model.facts import ModuleFacts
from ddplint.model.locations import MAX_LEVELS
from ddplint.settings import DEFAULT_EXCLUDES

DEFAULT_BUDGET = 2.0  # seconds
MAX_MODULES = 200
MAX_CONTEXT_BYTES = 2 * 1024 * 1024
_CACHE_SIZE = 512

# Resolved path → ((mtime_ns, size), facts): one flake8 worker or editor session loads a module once.
_cache: OrderedDict[Path, tuple[tuple[int, int], ModuleFacts]] = OrderedDict()


def import_root(path: Path) -> Path:
    """The folder imports are resolved from: above the outermost package holding `path`."""
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return folder


def module_files(root: Path, qualname: str, known: dict | None = None) -> Iterator[Path]:
    """Files under `root` that `qualname` may live in: the longest module prefix, and its packages.
    `known` keeps what the file system said about each prefix, for the next name."""
    known = {} if known is None else known
    parts = qualname.split(".")
    # Files lie only in folders that exist: most names a module imports are of other projects
    # (`torch.nn.functional` beside a project without a `torch/` folder), one look each.
    folders = _folders_down(root, parts, known)
    found = False
    for cut in range(min(len(parts), folders + 1), 0, -1):
        key = (root, *parts[:cut])
        files = known.get(key)
        if files is None:
            # Strings, not Paths, for the look-ups (pathlib's parsing was most of the walk of
            # the imports, asked again at each change in an editor): a Path for what is found.
            base = os.path.join(root, *parts[:cut])
            package, module = os.path.join(base, "__init__.py"), base + ".py"
            files = known[key] = (
                Path(package) if cut <= folders and os.path.isfile(package) else None,
                Path(module) if os.path.isfile(module) else None,
            )
        package, module = files
        if package is not None:
            yield package
            found = True
        elif not found and module is not None:
            yield module
            found = True


def _folders_down(root: Path, parts: list[str], known: dict) -> int:
    """How many of `parts`, from the first, name folders below `root` (`a/b/` for `a.b.c`: 2)."""
    depth = 0
    while depth < len(parts):
        key = ("folder", root, *parts[: depth + 1])
        is_folder = known.get(key)
        if is_folder is None:
            is_folder = known[key] = os.path.isdir(os.path.join(root, *parts[: depth + 1]))
        if not is_folder:
            break
        depth += 1
    return depth


def namespace_files(
    root: Path,
    target: str,
    top: Path | None = None,
    known: dict | None = None,
    folders: dict[tuple[Path, str], bool] | None = None,
) -> list[Path]:
    """The files importing `target` from `root` loads when they are in folders without
    `__init__.py` above `root` (see ddplint.model.locations): from `root`'s parents, nearest
    first, no higher than `top` (the project's root) when `root` is inside it. A package met on
    the way (`~/torch/` above a checkout) is no folder of the project: it is passed by."""
    head, dot, _ = target.partition(".")
    if not dot:
        return []  # a module alone above the root (`../data.py`) is no folder of scripts
    folders = {} if folders is None else folders
    bounded = top is not None and top in root.parents
    folder = root
    for _ in range(MAX_LEVELS):
        if folder.parent == folder or (bounded and folder == top):
            break
        folder = folder.parent
        key = (folder, head)
        namespace = folders.get(key)
        if namespace is None:
            below = folder / head
            namespace = folders[key] = below.is_dir() and not (below / "__init__.py").is_file()
        if namespace:
            found = [p for p in module_files(folder, target, known) if p.parent != folder]
            if found:
                return found
    return []


def _absolute(path: Path) -> Path | None:
    try:
        return path.resolve()
    except OSError:
        return None


def package_top(folder: Path) -> Path | None:
    """The outermost package folder holding `folder`, or None when `folder` is not a package."""
    if not (folder / "__init__.py").is_file():
        return None
    while (folder.parent / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return folder


def package_modules(top: Path) -> Iterator[Path]:
    """Every module of a package, walking only into subpackages (folders with `__init__.py`)."""
    for here, dirs, files in os.walk(top):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".") and d not in DEFAULT_EXCLUDES and Path(here, d, "__init__.py").is_file()
        )
        yield from (Path(here, f) for f in sorted(files) if f.endswith(".py"))


def _load(linter: Linter, path: Path) -> ModuleFacts:
    stat = path.stat()
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _cache.get(path)
    if cached is not None and cached[0] == key:
        _cache.move_to_end(path)
        return cached[1]
    facts = linter.load(str(path), context=True)
    _cache[path] = (key, facts)
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return facts


def load_neighbours(
    linter: Linter,
    modules: list[ModuleFacts],
    budget: float = DEFAULT_BUDGET,
    max_modules: int = MAX_MODULES,
    skip: set[Path] | frozenset[Path] = frozenset(),
) -> int:
    """Add the project modules around `modules` to `linter.project`; return how many were added.

    First what `modules` import, transitively; then the package modules that import one of
    `modules` (and what those import). Unrelated modules are left out: every module added is
    analysed with the checked ones. Files already among `modules` are not read again, nor
    those in `skip` (files of the run it chose not to load).
    """
    deadline = time.monotonic() + budget
    seen: set[Path] = set()
    for path in skip:
        try:
            seen.add(path.resolve())
        except OSError:
            continue
    imports: deque[tuple[Path, ModuleFacts]] = deque()
    starts: list[Path] = []
    for facts in modules:
        try:
            path = facts.path.resolve()
        except OSError:
            continue
        seen.add(path)
        starts.append(path)
        imports.append((import_root(path), facts))
    checked = {facts.module_name for facts in modules}
    top = _absolute(linter.settings.root)
    siblings = chain(_siblings(starts), _scripts_above(starts, top))
    started = set(starts)
    loaded = 0
    # Modules import the same names over and over (`torch`, their own package): ask the file
    # system once per name.
    located: dict[tuple[Path, str], list[Path]] = {}
    prefixes: dict = {}  # and once per module prefix (`torch.distributed.` of many names)
    folders: dict[tuple[Path, str], bool] = {}  # and once per folder name above an import root

    def files_of(root: Path, target: str) -> list[Path]:
        key = (root, target)
        found = located.get(key)
        if found is None:
            found = list(module_files(root, target, prefixes))
            if not found:
                found = namespace_files(root, target, top, prefixes, folders)
            located[key] = found
        return found

    def imports_file(module: ModuleFacts, root: Path, files: set[Path]) -> bool:
        """Whether `module` imports one of `files` by path (a script above a folder of scripts)."""
        targets = {t for t in module.imports.aliases.values() if "." in t}
        return any(path in files for target in sorted(targets) for path in files_of(root, target))

    while True:
        importer = False  # candidates kept only if they import a checked module
        if imports:
            root, current = imports.popleft()
            candidates = [p for t in sorted(set(current.imports.aliases.values())) for p in files_of(root, t)]
        else:
            sibling = next(siblings, None)
            if sibling is None:
                return loaded
            if sibling in seen or not _may_import(sibling, checked):
                continue
            root, candidates, importer = import_root(sibling), [sibling], True
        for path in candidates:
            if path in seen:
                continue
            if time.monotonic() > deadline or loaded >= max_modules:
                return loaded
            seen.add(path)
            try:
                module = _load(linter, path)
            except Exception:  # LoadError, OSError, or a bug of ours on a file nobody asked about
                continue  # context is best effort: the checked files are still checked
            if importer and not _imports_any(module, checked) and not imports_file(module, root, started):
                continue
            linter.project.add(module)
            imports.append((root if path.is_relative_to(root) else import_root(path), module))
            loaded += 1


def _may_import(path: Path, modules: set[str]) -> bool:
    """A cheap byte scan: can `path` import one of `modules`? (Confirmed after parsing.)"""
    try:
        info = path.stat()
        # Only regular files (a FIFO would block the read) of a size we would parse.
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONTEXT_BYTES:
            return False
        data = path.read_bytes()
    except OSError:
        return False
    return any(name.rsplit(".", 1)[-1].encode() in data for name in modules)


def _imports_any(module: ModuleFacts, modules: set[str]) -> bool:
    return any(
        target == name or target.startswith(name + ".")
        for target in module.imports.aliases.values()
        for name in modules
    )


def _scripts_above(starts: list[Path], top: Path | None) -> Iterator[Path]:
    """The scripts in the folders above each start file's import root, up to the project's root
    (`main.py` above `data_loading/loader.py`): what may import it by path. Nothing outside the
    project's root: no folder above it is known to be the project's."""
    if top is None:
        return
    folders: dict[Path, None] = {}
    for start in starts:
        folder = import_root(start)
        for _ in range(MAX_LEVELS):
            if folder == top or top not in folder.parents:
                break
            folder = folder.parent
            folders[folder] = None
    for folder in folders:
        yield from sorted(p for p in folder.glob("*.py") if p.is_file())


def _siblings(starts: list[Path]) -> Iterator[Path]:
    """The modules beside each start file that belongs to a package, then the rest of each
    outermost package; each listed once. Loose scripts only bring what they import: a folder
    of unrelated scripts is not a project."""
    folders = [f for f in dict.fromkeys(start.parent for start in starts) if (f / "__init__.py").is_file()]
    for folder in folders:
        yield from sorted(folder.glob("*.py"))
    for top in dict.fromkeys(top for top in map(package_top, folders) if top is not None):
        yield from package_modules(top)
