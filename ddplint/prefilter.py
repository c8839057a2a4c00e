"""A byte scan that spares the parser the files no finding can involve.

Every finding needs one of the enabled rules' triggers (`DataLoader`, `dist.all_reduce`, a DDP
wrapper, ...) spelled in a module of the run that is connected to the finding's file by
imports, in either direction: a training script with no torch token reaches `dist.all_reduce`
through its own helpers, and a helper with no torch token is simulated with the DDP model its
caller passes. So the run keeps every module connected to a file that spells a trigger, and
skips the rest: not parsed, not checked (only syntax-checked, so E999 is still reported).

The scan over-approximates (a trigger in a comment, an import in a docstring, every module a
`from` import could name): a false alarm costs a parse, never a finding. Calls spelled through
a name the module never imports are not followed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ddplint.names import module_name_for, relative_base

# `from ..pkg.mod import (a, b as c)`, `from . import x`, with backslash continuations.
_FROM = re.compile(rb"\bfrom[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]*(\([^)]*\)|(?:[^\n#;\\]|\\\r?\n)*)")
# `import a.b as c, d` (also matches the tail of a `from` import: one more candidate, no harm).
_IMPORT = re.compile(rb"\bimport[ \t]+((?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,?[ \t]*)+)")
_NAME = re.compile(rb"[\w.]+")


def trigger_words(names: Iterable[str]) -> list[tuple[bytes, ...]]:
    """Each trigger as the words it is spelled with: a qualified name needs every dotted part.

    A name starting with `*` is looked for as plain text. Python code names
    `torch.distributed.all_reduce` only through an import that spells
    `torch` and `distributed` and a use that spells `all_reduce` (a project module re-exporting
    it spells them itself, and is connected to its users by the import graph).
    """
    out = set()
    for name in names:
        if name.startswith("*"):
            out.add((b"*" + name[1:].encode(),))  # plain text, anywhere
        elif name:
            out.add(tuple(part.encode() for part in name.split(".") if part))
    return sorted(out)


def _is_word_char(byte: int) -> bool:
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122 or byte >= 128


def _has_word(data: bytes, word: bytes) -> bool:
    size = len(data)
    pos = data.find(word)
    while pos != -1:
        end = pos + len(word)
        if (pos == 0 or not _is_word_char(data[pos - 1])) and (end == size or not _is_word_char(data[end])):
            return True
        pos = data.find(word, pos + 1)
    return False


def mentions(data: bytes, triggers: list[tuple[bytes, ...]]) -> bool:
    """Whether `data` spells every word of some trigger (`bytes.find`: far faster than re)."""
    seen: dict[bytes, bool] = {}
    for words in triggers:
        for word in words:
            found = seen.get(word)
            if found is None:
                found = seen[word] = word[1:] in data if word[:1] == b"*" else _has_word(data, word)
            if not found:
                break
        else:
            return True
    return False


def _statements(data: bytes) -> Iterable[bytes]:
    """The text around every `import` keyword: its line, extended over `(...)` and `\\`."""
    pos = data.find(b"import")
    while pos != -1:
        start = data.rfind(b"\n", 0, pos) + 1
        end = data.find(b"\n", pos)
        end = len(data) if end == -1 else end
        while data[start:end].rstrip().endswith(b"\\") and end < len(data):
            nxt = data.find(b"\n", end + 1)
            end = len(data) if nxt == -1 else nxt
        segment = data[start:end]
        if segment.count(b"(") > segment.count(b")"):
            close = data.find(b")", end)
            if close != -1 and close - end < 20000:
                end = close + 1
                segment = data[start:end]
        yield segment
        pos = data.find(b"import", end)


def imported_modules(data: bytes, module_name: str, is_package: bool) -> set[str]:
    """Every dotted name an import statement in `data` may load, relative imports resolved."""
    found: set[str] = set()
    for segment in _statements(data):
        for match in _FROM.finditer(segment):
            dots, module, names = match.groups()
            base = module.decode("ascii", "replace")
            if dots:
                package = relative_base(module_name, is_package, len(dots))
                base = f"{package}.{base}" if package and base else (package or base)
            if base:
                found.add(base)
            for name in _NAME.findall(names):
                text = name.decode("ascii", "replace")
                if text != "as":
                    found.add(f"{base}.{text}" if base else text)
        for match in _IMPORT.finditer(segment):
            for name in _NAME.findall(match.group(1)):
                if name != b"as":
                    found.add(name.decode("ascii", "replace"))
    return found


@dataclass
class Selection:
    kept: list[Path]
    skipped: list[Path]
    modules: dict[Path, str] | None = None
    graph: ImportGraph | None = None


@dataclass(frozen=True)
class Scan:
    """What the byte scan learnt about one file."""

    triggers: bool  # spells a trigger word
    imports: frozenset[str]  # dotted names its import statements may load


def scan(data: bytes, module_name: str, is_package: bool, words: list[bytes]) -> Scan:
    return Scan(mentions(data, words), frozenset(imported_modules(data, module_name, is_package)))


class ImportGraph:
    """The run's own modules and the imports between them.

    Nodes are module names, not files: two scripts named alike are one node, so whichever of
    them the project index picks for a name is the same with and without the prefilter.
    """

    def __init__(self, modules: dict[Path, str], scans: dict[Path, Scan | None]) -> None:
        self.modules = modules
        known = set(modules.values())
        self.edges: dict[str, set[str]] = {name: set() for name in known}
        for path, found in scans.items():
            if found is not None:
                name = modules[path]
                self.edges[name] |= _project_modules(found.imports, known) - {name}
        self.importers: dict[str, set[str]] = {}
        for name, targets in self.edges.items():
            for target in targets:
                self.importers.setdefault(target, set()).add(name)

    def needed(self, seeds: set[str]) -> set[str]:
        """Every module connected to a seed by imports, in either direction.

        Forward: the rules look into what a module imports (a helper that loops over the
        loader it is given, a callee two calls down that all-reduces). Backward: the analysis
        simulates callees in their callers' context (a DDP-wrapped model passed in) and
        reports in the callee, and a program that wraps a model makes `backward()` a
        collective in every module it imports.
        """
        both = {name: self.edges.get(name, set()) | self.importers.get(name, set()) for name in self.edges}
        return closure(seeds, both)

    def components(self) -> dict[str, str]:
        """Module → a name for its import-connected component (its first module, sorted)."""
        both = {name: self.edges.get(name, set()) | self.importers.get(name, set()) for name in self.edges}
        component: dict[str, str] = {}
        for name in sorted(both):
            if name not in component:
                for member in closure({name}, both):
                    component[member] = name
        return component

    def imported_by(self, names: set[str]) -> set[str]:
        """`names` and everything they import, directly or not."""
        return closure(names, self.edges)


def module_names(files: list[Path]) -> dict[Path, str]:
    packages: dict[Path, str] = {}
    return {path: _module_name(path, packages) for path in files}


def select(files: list[Path], trigger_names: Iterable[str] | None, *, graph: bool = False) -> Selection:
    """Split `files` (order kept) into those the run must parse and those it can skip.

    `trigger_names` None means some enabled rule may fire anywhere: everything is kept (and
    files are scanned only when `graph` asks for the import graph).
    """
    if trigger_names is None and not graph:
        return Selection(list(files), [])
    words = trigger_words(trigger_names or ())
    modules = module_names(files)
    scans: dict[Path, Scan | None] = {}
    for path in files:
        try:
            scans[path] = scan(path.read_bytes(), modules[path], path.name == "__init__.py", words)
        except OSError:
            scans[path] = None  # unreadable: the full load reports it
    if trigger_names is None:
        return Selection(list(files), [], modules, ImportGraph(modules, scans))
    return split(files, modules, scans)


def split(files: list[Path], modules: dict[Path, str], scans: dict[Path, Scan | None]) -> Selection:
    graph = ImportGraph(modules, scans)
    seeds = {modules[p] for p, found in scans.items() if found is None or found.triggers}
    needed = graph.needed(seeds)
    kept = [p for p in files if modules[p] in needed]
    skipped = [p for p in files if modules[p] not in needed]
    return Selection(kept, skipped, modules, graph)


def _module_name(path: Path, packages: dict[Path, str]) -> str:
    """`module_name_for`, asking the file system once per folder rather than once per file."""
    if path.name == "__init__.py":
        return module_name_for(path)
    folder = path.parent
    package = packages.get(folder)
    if package is None:
        package = packages[folder] = (
            module_name_for(folder / "__init__.py") if (folder / "__init__.py").is_file() else ""
        )
    return f"{package}.{path.stem}" if package else path.stem


def _project_modules(names: Iterable[str], known: set[str]) -> set[str]:
    """The project modules importing `names` loads: `a.b.c` loads `a`, `a.b` and `a.b.c`."""
    out: set[str] = set()
    for name in names:
        while True:
            if name in known:
                out.add(name)
            cut = name.rfind(".")
            if cut < 0:
                break
            name = name[:cut]
    return out


def closure(start: set[str], edges: dict[str, set[str]]) -> set[str]:
    seen = set(start)
    stack = list(start)
    while stack:
        for nxt in edges.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen
