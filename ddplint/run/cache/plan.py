"""Planning a run with the cache: which files to parse, which to check, which findings to reuse.

The analysis follows imports in both directions (see ddplint.run.prefilter), so a file's findings
depend on every module of its import-connected component: they are stored under a key over
the settings and the path, module name and content of each file of that component, plus the
modules from outside the run that were read as its context. A changed helper changes the key of
every module connected to it, and those are checked again; a component with nothing changed is
not even parsed.
"""

from __future__ import annotations

import ast
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ddplint.diagnostics import Diagnostic
from ddplint.engine.checker import Linter
from ddplint.run import prefilter
from ddplint.run.cache.findings import Cache, Entry, digest, settings_key
from ddplint.syntax.reading import LoadError, read_source


@dataclass
class Plan:
    load: list[Path]  # parse these, in discovery order
    check: set[Path]  # check these (all loaded but for context)
    cached: dict[Path, list[Diagnostic]] = field(default_factory=dict)
    keys: dict[Path, str] = field(default_factory=dict)
    entries: dict[Path, Entry] = field(default_factory=dict)
    modules: dict[Path, str] = field(default_factory=dict)
    graph: prefilter.ImportGraph | None = None
    unloaded: dict[str, tuple[str, ...]] = field(default_factory=dict)  # see prefilter.Selection


def plan(files: list[Path], linter: Linter, cache: Cache, *, use_prefilter: bool, jobs: int = 1) -> Plan:
    triggers = linter.trigger_names()
    words = prefilter.trigger_words(triggers or ())
    modules = prefilter.module_names(files)
    entries: dict[Path, Entry] = {}
    scans: dict[Path, prefilter.Scan | None] = {}
    contents: dict[Path, str] = {}
    dirty: set[Path] = set()
    for path in files:
        try:
            # Only regular files are read here: a FIFO named `x.py` would block the run.
            # Anything else is left to `read_source`, which reports it.
            if not stat.S_ISREG(path.stat().st_mode):
                raise OSError("not a regular file")
            data = path.read_bytes()
        except OSError:
            scans[path] = None
            contents[path] = "unreadable"
            continue
        content = contents[path] = digest(data)
        entry = cache.load(path)
        if entry is None or entry.content != content:
            entry = Entry(content)
        if entry.scan is None:
            scanned = prefilter.scanned_bytes(path, data)
            entry.scan = prefilter.scan(scanned, modules[path], path.name == "__init__.py", words)
            dirty.add(path)
        entries[path] = entry
        scans[path] = entry.scan
    graph = prefilter.ImportGraph(modules, scans)
    keys = _component_keys(files, modules, contents, graph, linter)
    context = _ContextCheck()
    stale_keys = {keys[p] for p in files if not _fresh(entries.get(p), keys[p], context)}
    stale = [p for p in files if keys[p] in stale_keys]
    result = Plan([], set(), keys=keys, entries=entries, modules=modules, graph=graph)
    result.cached = {p: entries[p].diagnostics for p in files if keys[p] not in stale_keys}
    # Only the components with a change are selected, outlined and parsed again.
    needed = set(stale)
    if use_prefilter and triggers is not None and stale:
        selection = prefilter.split(stale, {p: modules[p] for p in stale}, {p: scans[p] for p in stale})
        if prefilter.outlining_pays(selection, scans):
            words = prefilter.outline_words(triggers)
            missing = [p for p in selection.kept if p in entries and not entries[p].outlined]
            read = prefilter.outline_files(missing, modules, words, linter.settings.max_file_size, jobs)
            for path, found in read.items():
                entries[path].outline, entries[path].outlined = found, True
                dirty.add(path)
            outlines = {p: entries[p].outline if p in entries else None for p in selection.kept}
            selection = prefilter.refine(selection, outlines)
        needed, result.unloaded = set(selection.kept), selection.unloaded
        for path in stale:
            entry = entries.get(path)
            if path in needed or entry is None:
                continue  # kept, or unreadable (the load reports it)
            if not selection.known_to_parse(path):
                if entry.parses is None:
                    entry.parses = parses(path, linter.settings.max_file_size)
                if not entry.parses:
                    needed.add(path)
                    continue
            # Skipped: no findings under this key, so the next run reuses that without a look.
            entry.key, entry.diagnostics, entry.context = keys[path], [], []
            dirty.add(path)
    result.check = needed
    result.load = [p for p in files if p in needed]
    for path in dirty - result.check:
        cache.store(path, entries[path])  # scans and syntax checks of files not checked now
    return result


def _fresh(entry: Entry | None, key: str, context: _ContextCheck) -> bool:
    """Whether an entry holds findings computed under `key`, around unchanged context modules."""
    return (
        entry is not None
        and entry.key == key
        and entry.diagnostics is not None
        and context.unchanged(entry.context)
    )


def record(
    cache: Cache, plan: Plan, path: Path, diagnostics: list[Diagnostic], context: list[tuple[str, str]]
) -> None:
    """Store a checked file's findings under its key, with the modules from outside the run
    that were read around it. An internal error is stored too: the same version of ddplint
    fails the same way, and one failing file must not make its whole group stale."""
    entry = plan.entries.get(path)
    if entry is None:
        return
    entry.key = plan.keys[path]
    entry.diagnostics = diagnostics
    entry.context = context
    cache.store(path, entry)


def context_of(paths: list[str]) -> list[tuple[str, str]]:
    """(path, content hash) of the modules read as context."""
    out = []
    for name in sorted(paths):
        try:
            out.append((name, digest(Path(name).read_bytes())))
        except OSError:
            out.append((name, "unreadable"))
    return out


class _ContextCheck:
    """Whether the context modules an entry was computed with are still what they were."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def unchanged(self, context: list[tuple[str, str]]) -> bool:
        for name, content in context:
            now = self.seen.get(name)
            if now is None:
                now = self.seen[name] = context_of([name])[0][1]
            if now != content:
                return False
        return True


def _component_keys(
    files, modules, contents, graph: prefilter.ImportGraph, linter: Linter
) -> dict[Path, str]:
    component = graph.components()
    members: dict[str, list[str]] = {}
    for path in files:
        members.setdefault(component[modules[path]], []).append(
            f"{path.resolve()}\0{modules[path]}\0{contents[path]}"
        )
    base = settings_key(linter.settings, linter.codes)
    hashes = {cid: digest(base, *sorted(parts)) for cid, parts in members.items()}
    return {path: hashes[component[modules[path]]] for path in files}


def parses(path: Path, max_bytes: int = 0) -> bool:
    """Whether a file reads (within the size limit), decodes and parses (CPython's parser:
    several times cheaper)."""
    try:
        source = read_source(str(path), None, max_bytes)
        ast.parse(source.text, str(path))  # syntax tree only: nothing is compiled to run
    except (LoadError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
