"""Sparing the parser the files no finding can involve, in two passes.

The byte scan: every finding needs one of the enabled rules' triggers (`DataLoader`,
`dist.all_reduce`, a DDP wrapper, ...) spelled in a module of the run that is connected to the
finding's file by imports, in either direction. Modules connected to no such module are
skipped without being read further (only syntax-checked, so E999 is still reported).

The definition pass: in a package whose `__init__` re-exports everything, every module is
connected to every other, so each kept module is outlined (ddplint.run.outline: CPython's parser,
tree dropped at once) and its top-level definitions linked to the ones they name. A module is
parsed with libcst only when it holds a definition that spells a trigger or a rank, names one
(directly or not), or is named by one of those (see `refine` for why that is enough). The pass
pays only where modules that spell no trigger are most of the text (a model zoo); elsewhere
it is skipped (see `outlining_pays`).

Both passes over-approximate (a trigger in a comment, a name in a string): a false alarm costs a
parse, never a finding. Calls spelled through a name the module never imports are not followed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ddplint.analysis.divergence.triggers import IN_A_PROGRAM_THAT_WRAPS
from ddplint.model.locations import Aliases
from ddplint.model.names import module_name_for, module_stem, relative_base
from ddplint.run.discovery import file_size
from ddplint.run.outline import MODULE, Outline, outline
from ddplint.syntax.depth import accepted_key, note_accepted
from ddplint.syntax.reading import NOTEBOOK_SUFFIX

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
    # Module name → what its imports bind, for the skipped modules that parse: the analysis
    # follows imports through them (a module imported by one that wraps a model).
    unloaded: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def known_to_parse(self, path: Path) -> bool:
        """Skipped after CPython parsed it for its outline: no syntax error to report."""
        return self.modules is not None and self.modules.get(path) in self.unloaded


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
    them the project index picks for a name is the same with and without the prefilter. An
    import of a module in folders without `__init__.py` is resolved by path, as the project
    index resolves it (see ddplint.model.locations).
    """

    def __init__(self, modules: dict[Path, str], scans: dict[Path, Scan | None]) -> None:
        self.modules = modules
        known = set(modules.values())
        # Module names in folders without `__init__.py`, for this graph and the definition pass.
        self.aliases = Aliases((path, name, name) for path, name in modules.items())
        self.edges: dict[str, set[str]] = {name: set() for name in known}
        for path, found in scans.items():
            if found is not None:
                name = modules[path]
                targets = _project_modules(found.imports, known, self.aliases, path, name)
                self.edges[name] |= targets - {name}
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


def scanned_bytes(path: Path, data: bytes) -> bytes:
    """What the scan reads of a file: a notebook's code cells, any other file as it is."""
    if path.suffix != NOTEBOOK_SUFFIX:
        return data
    from ddplint.syntax.reading import LoadError, read_source

    try:
        return read_source(str(path), data).text.encode()
    except LoadError:
        return data  # the load reports it


def module_names(files: list[Path]) -> dict[Path, str]:
    packages: dict[Path, str] = {}
    return {path: _module_name(path, packages) for path in files}


def select(
    files: list[Path],
    trigger_names: Iterable[str] | None,
    *,
    graph: bool = False,
    max_bytes: int = 0,
    jobs: int = 1,
) -> Selection:
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
            data = scanned_bytes(path, path.read_bytes())
            scans[path] = scan(data, modules[path], path.name == "__init__.py", words)
        except OSError:
            scans[path] = None  # unreadable: the full load reports it
    if trigger_names is None:
        return Selection(list(files), [], modules, ImportGraph(modules, scans))
    selection = split(files, modules, scans)
    if not outlining_pays(selection, scans):
        return selection
    outlines = outline_files(selection.kept, modules, outline_words(trigger_names), max_bytes, jobs)
    return refine(selection, outlines)


def split(files: list[Path], modules: dict[Path, str], scans: dict[Path, Scan | None]) -> Selection:
    graph = ImportGraph(modules, scans)
    seeds = {modules[p] for p, found in scans.items() if found is None or found.triggers}
    needed = graph.needed(seeds)
    kept = [p for p in files if modules[p] in needed]
    skipped = [p for p in files if modules[p] not in needed]
    return Selection(kept, skipped, modules, graph)


# The definition-level pass -----------------------------------------------------------------


def outline_words(trigger_names: Iterable[str]) -> list[tuple[bytes, ...]]:
    """What makes a definition a seed: a trigger, or a source of a value's origin (and a call of
    `backward()`: see IN_A_PROGRAM_THAT_WRAPS)."""
    from ddplint.analysis.origins import source_names

    return trigger_words({*trigger_names, *source_names()})


# Outlining costs a tenth of a libcst parse: below this many files a pool costs more than it saves.
POOL_THRESHOLD = 64
# Outlining every kept module costs about a fifth of parsing them (a tenth, and the depth check
# the parse is then spared). It can spare only modules that spell no trigger (those that do hold
# a seed, and are parsed anyway), and in practice spares a fair part of them only in model zoos,
# where they are most of the text. Measured (share of the kept text that spells no trigger →
# share the pass spared): timm + examples 83 % → 52 %, detectron2 73 % → 18 %, nanoGPT 64 % →
# 10 %, all of torch 55 % → 0.5 %, open_clip 47 % → 1 %, torch's distributed code 15 % → 0.3 %.
OUTLINE_WHEN = 2 / 3


def outlining_pays(selection: Selection, scans: dict[Path, Scan | None]) -> bool:
    """Whether the modules that spell no trigger are most of the kept text, as in a model zoo:
    elsewhere (torch's own code, a trainer's) the definition pass costs more than it spares."""
    total = spared = 0
    for path in selection.kept:
        size = file_size(path)
        total += size
        found = scans.get(path)
        if found is not None and not found.triggers:
            spared += size
    return spared >= OUTLINE_WHEN * total


def outline_files(
    paths: list[Path], modules: dict[Path, str], words: list[tuple[bytes, ...]], max_bytes: int, jobs: int
) -> dict[Path, Outline | None]:
    """Each path's outline, None where it does not read or parse (the full load reports why);
    in worker processes when there are many."""
    tasks = [(path, modules[path], words, max_bytes) for path in paths]
    results = None
    if jobs > 1 and len(tasks) >= POOL_THRESHOLD:
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        try:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                chunk = max(1, len(tasks) // (4 * jobs))
                results = list(pool.map(_outline_task, tasks, chunksize=chunk))
        except (BrokenProcessPool, OSError):
            results = None  # no worker processes here (or one died): outline in this process
    if results is None:
        results = [_outline_task(task) for task in tasks]
    out = {}
    for path, (found, accepted) in zip(paths, results):
        if accepted is not None:
            note_accepted(accepted)  # libcst's parse of this text needs no depth check
        out[path] = found
    return out


def _outline_task(task) -> tuple[Outline | None, tuple[int, int] | None]:
    from ddplint.syntax.reading import LoadError, read_source

    path, module_name, words, max_bytes = task
    try:
        source = read_source(str(path), None, max_bytes)
        found = outline(
            source.text,
            str(path),
            module_name,
            path.name == "__init__.py",
            lambda text: mentions(text, words),
            IN_A_PROGRAM_THAT_WRAPS,
        )
    except (LoadError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None, None
    return found, accepted_key(source.text)


def refine(selection: Selection, outlines: dict[Path, Outline | None]) -> Selection:
    """Of the modules the byte scan kept, keep those holding a definition that can matter.

    A definition matters when it spells a trigger or an origin (a seed), when it names a
    seed, directly or through other definitions (it may reach a collective, or return a
    loader), or when one of those names it (a callee simulated in its caller's context, whose
    result the caller branches on). What is left cannot take part in a finding: it reaches no
    collective, runs in no caller that does, and passes only values of no known origin to the
    functions it calls (see `Origins.parameter`, which lets such callers say nothing).
    Modules that CPython cannot parse are kept, so the full load reports them.
    """
    assert selection.modules is not None and selection.graph is not None
    modules = selection.modules
    by_module: dict[str, Outline] = {}
    for path in selection.kept:
        found = outlines.get(path)
        if found is not None:
            name = modules[path]
            by_module[name] = merged(by_module[name], found) if name in by_module else found
    paths: dict[str, list[Path]] = {}
    for path, name in modules.items():
        paths.setdefault(name, []).append(path)
    graph = DefinitionGraph(by_module, selection.graph.aliases, paths)
    seeds = {(module, name) for module, found in by_module.items() for name in found.triggered}
    needed = closure(seeds | closure(seeds, graph.referrers), graph.edges)
    names = {module for module, _ in needed}
    names.update(module for node in needed for module in graph.via.get(node, ()))
    kept, skipped = [], list(selection.skipped)
    for path in selection.kept:
        (kept if outlines.get(path) is None or modules[path] in names else skipped).append(path)
    unloaded = {modules[p]: outlines[p].imports for p in reversed(skipped) if outlines.get(p) is not None}
    return Selection(kept, skipped, modules, selection.graph, unloaded)


def merged(first: Outline, second: Outline) -> Outline:
    """Two scripts of one module name are one node (see ImportGraph): their definitions unite."""
    names = dict(first.names)
    for name, spelled in second.names.items():
        names[name] = names.get(name, frozenset()) | spelled
    bindings = dict(first.bindings)
    for name, targets in second.bindings.items():
        bindings[name] = bindings.get(name, frozenset()) | targets
    return Outline(
        names,
        first.triggered | second.triggered,
        bindings,
        first.stars + second.stars,
        first.imports,
        first.variables | second.variables,
    )


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
    return f"{package}.{module_stem(path)}" if package else module_stem(path)


def _project_modules(
    names: Iterable[str],
    known: set[str],
    aliases: Aliases[str] | None = None,
    importer: Path | None = None,
    importer_module: str = "",
) -> set[str]:
    """The project modules importing `names` loads: `a.b.c` loads `a`, `a.b` and `a.b.c`, each
    the module so named, else the one an alias from `importer` denotes."""
    out: set[str] = set()
    for name in names:
        while True:
            if name in known:
                out.add(name)
            elif aliases and importer is not None:
                found = aliases.resolve(importer, importer_module, name)
                if found is not None:
                    out.add(found)
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


Node = tuple[str, str]  # (module name, definition name; MODULE for the module's own statements)


class DefinitionGraph:
    """Which top-level definitions name which, across the run's modules (see ddplint.run.outline).

    A name is followed through the module's imports, a package's re-exports and star imports
    to the definition it denotes; a name that is no definition of the module it ends in (a
    global, a submodule, a name the module computes) leads to that module's own statements.
    The modules a name passes through on the way (a package re-exporting a helper) are kept in
    `via`: the analysis resolves the name through them too, so they must be loaded with it.
    """

    def __init__(
        self,
        outlines: dict[str, Outline],
        aliases: Aliases[str] | None = None,
        paths: dict[str, list[Path]] | None = None,
    ) -> None:
        self.outlines = outlines
        # Imports of modules in folders without `__init__.py`: resolved from each file of the
        # importing module (see ddplint.model.locations).
        self.aliases = aliases
        self.paths = paths or {}
        self._resolved: dict[tuple[str, str, bool], tuple[frozenset[Node], frozenset[str]]] = {}
        self.edges: dict[Node, set[Node]] = {}
        self.via: dict[Node, set[str]] = {}
        for module, found in outlines.items():
            # Most names are locals, attributes of `self`, builtins: no definition, no import.
            # Of those, only the module's own variables lead anywhere: to its statements.
            own = (module, MODULE)
            for name, spelled in found.names.items():
                targets: set[Node] = set()
                passed: set[str] = set()
                for dotted in spelled:
                    head = dotted.partition(".")[0]
                    if not found.stars and head not in found.names and head not in found.bindings:
                        if head in found.variables:
                            targets.add(own)
                        continue
                    nodes, through = self.resolve(module, dotted)
                    targets |= nodes
                    passed |= through
                targets.discard((module, name))
                self.edges[(module, name)] = targets
                if passed:
                    self.via[(module, name)] = passed
        self.referrers: dict[Node, set[Node]] = {}
        for node, targets in self.edges.items():
            for target in targets:
                self.referrers.setdefault(target, set()).add(node)

    def resolve(
        self, module: str, dotted: str, depth: int = 0, *, fallback: bool = True
    ) -> tuple[frozenset[Node], frozenset[str]]:
        """The definitions `dotted`, spelled in `module`, may denote, and the other modules the
        name passes through; without `fallback`, only definitions found (a star import offers
        every name, but holds only its own)."""
        key = (module, dotted, fallback)
        known = self._resolved.get(key)
        if known is not None:
            return known
        self._resolved[key] = (frozenset(), frozenset())  # a re-export cycle resolves to nothing more
        found = self.outlines[module]
        head, _, rest = dotted.partition(".")
        out: set[Node] = set()
        passed: set[str] = set()
        if head != MODULE and head in found.names:
            out.add((module, head))
        elif head in found.bindings:
            for target in found.bindings[head]:
                nodes, through = self._locate(f"{target}.{rest}" if rest else target, depth, module)
                out |= nodes
                passed |= through
        else:
            if depth < 20:
                for star in found.stars:
                    if star in self.outlines:
                        nodes, through = self.resolve(star, dotted, depth + 1, fallback=False)
                        if nodes:
                            out |= nodes
                            passed |= through | {star}
            if fallback and not out:
                out.add((module, MODULE))
        result = self._resolved[key] = (frozenset(out), frozenset(passed))
        return result

    def _locate(self, qualified: str, depth: int, importer: str = "") -> tuple[set[Node], set[str]]:
        """The run's definitions a qualified name, imported by `importer`, denotes, through
        its longest module prefix, and the modules passed through."""
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            if module not in self.outlines:
                module = self._alias(module, importer) or module
            if module in self.outlines:
                if cut == len(parts) or depth >= 20:
                    return {(module, MODULE)}, set()
                nodes, through = self.resolve(module, ".".join(parts[cut:]), depth + 1)
                return set(nodes), {*through, module}
        return set(), set()  # not a module of the run

    def _alias(self, name: str, importer: str) -> str | None:
        if not self.aliases:
            return None
        for path in self.paths.get(importer, ()):
            found = self.aliases.resolve(path, importer, name)
            if found is not None:
                return found
        return None
