"""Loading the largest import group with help from the worker processes.

A group's modules must all live in the process that analyses it (see ddplint.run.workers), so the
largest group is checked in one process, and on a package whose modules all import each other
that is the whole run. Its loading can be shared: a worker parses some of its modules, builds
their facts and sends them back pickled (see ddplint.syntax.pickling: unpickling costs an eighth of
parsing), while this process loads the others, receiving each as soon as it is ready. Once done
with its own, this process also loads those no worker has started, from the smallest up, while
the workers go on from the largest down. A module's tree and facts travel in one pickle, which
keeps every node's identity but whitespace's, so the facts, and the findings, are the same as
when loaded here.
"""

from __future__ import annotations

import gc
import os
import pickle
import shutil
import tempfile
from collections import deque
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor, Future
from pathlib import Path

from ddplint.diagnostics import Diagnostic
from ddplint.engine.checker import Linter, internal_error
from ddplint.model.facts import ModuleFacts
from ddplint.run import memory
from ddplint.run.cache.trees import TreeCache
from ddplint.run.discovery import file_size
from ddplint.settings import Settings
from ddplint.syntax.parse import run_with_large_stack
from ddplint.syntax.reading import LoadError

# Below this many files a worker's help costs more than it saves.
MIN_FILES = 24
# What a module loaded elsewhere costs, relative to loading it here: this process unpickles it,
# the worker loads and pickles it.
RECEIVE_COST = 0.13
WORKER_COST = 1.12
# What keeping a module parsed here costs on top of parsing it, when the run keeps trees (see
# ddplint.run.cache.trees), and reading a kept one instead: about what receiving it costs.
STORE_COST = 0.13
# What checking a module costs, relative to parsing it: this process checks the whole group once
# it is loaded, while the workers have nothing left to do (a tenth on all of torch).
CHECK_COST = 0.1

Loaded = ModuleFacts | LoadError | Exception


def load_group(
    linter: Linter,
    paths: list[Path],
    pool: Executor | None,
    then: Callable[[], object] = lambda: None,
    skeletons: bool = False,
) -> list[tuple[Path, Loaded]]:
    """Each path with its facts, or the LoadError (or other exception) loading it raised, in
    the order given; `pool`'s workers load a share of them when there are enough to parse
    (modules kept from an earlier run are read back here). `then` is called before this process
    loads anything, once the workers' share is queued: what it gives the workers comes after.
    `skeletons`: modules kept are read back as skeletons, read whole when their check needs it
    (see ddplint.model.skeleton)."""
    stored: set[Path] = set()
    if linter.trees is not None and pool is not None:  # only the worker's share depends on it
        stored = {path for path in paths if linter.trees.has(str(path))}
    if pool is None or len(paths) - len(stored) < MIN_FILES:
        then()
        loaded = {path: _load_here(linter, path, skeletons) for _, path in _largest_first(paths)}
        return [(path, loaded[path]) for path in paths]
    try:
        folder = tempfile.mkdtemp(prefix="ddplint-")
    except OSError:
        folder = None  # the pickles come back through the pool's pipe
    try:
        return _load_shared(linter, paths, pool, folder, stored, then, skeletons)
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _load_shared(
    linter: Linter,
    paths: list[Path],
    pool: Executor,
    folder: str | None,
    stored: set[Path],
    then: Callable[[], object],
    skeletons: bool = False,
):
    futures: dict[Path, Future] = {}
    storing = linter.trees is not None and linter.trees.keep
    shared, own = _shared_out(paths, stored, storing=storing)
    trees = str(linter.trees.folder) if storing else None
    try:
        for path in shared:
            futures[path] = pool.submit(_load_elsewhere, linter.settings, str(path), folder, trees)
    except (OSError, RuntimeError):  # no worker processes, or the pool is closing
        pass
    then()
    loaded: dict[Path, Loaded] = {}
    # In the order given: the workers take them from the front, this process from the back.
    pending = deque(futures)

    def receive_ready() -> None:
        # As soon as they are ready, between this process's own: left to the end, they would be
        # unpickled while the workers have nothing left to do.
        while pending and futures[pending[0]].done():
            path = pending.popleft()
            loaded[path] = _received(linter, path, futures[path])

    for path in own + [path for path in shared if path not in futures]:  # largest first
        loaded[path] = _load_here(linter, path, skeletons)
        receive_ready()
    while pending and futures[pending[-1]].cancel():  # the smallest first: not started yet
        path = pending.pop()
        loaded[path] = _load_here(linter, path, skeletons)
        receive_ready()
    for path in pending:
        loaded[path] = _received(linter, path, futures[path])
    return [(path, loaded[path]) for path in paths]


def add_group(
    linter: Linter,
    paths: list[Path],
    pool: Executor | None = None,
    then: Callable[[], object] = lambda: None,
    skeletons: bool = False,
) -> tuple[list[ModuleFacts], list[tuple[Path, Diagnostic]]]:
    """Load `paths` (see `load_group`) into the linter's project: the facts added, in order, and
    for each file that did not load its diagnostic (E999 and the like, or E900 for a bug of ours)."""
    added: list[ModuleFacts] = []
    failed: list[tuple[Path, Diagnostic]] = []
    for path, facts in load_group(linter, paths, pool, then, skeletons):
        if isinstance(facts, LoadError):
            failed.append((path, facts.diagnostic))
        elif isinstance(facts, Exception):  # a bug of ours: report it, go on with the other files
            failed.append((path, internal_error(str(path), "reading the module", facts)))
        else:
            linter.project.add(facts)
            added.append(facts)
    return added, failed


def _largest_first(paths: list[Path]) -> list[tuple[int, Path]]:
    """Each path with its size, largest first. Parsing a module takes, for a moment, many times
    its tree's memory (see ddplint.run.memory): best spent while few trees are held."""
    return sorted(((file_size(path), path) for path in paths), key=lambda pair: -pair[0])


def _shared_out(
    paths: list[Path], stored: set[Path] | frozenset[Path] = frozenset(), *, storing: bool = False
) -> tuple[list[Path], list[Path]]:
    """The files one worker loads and those this process loads, each largest first (the
    worker's are then ready before this process asks for them): chosen so that the worker
    finishes when this process has loaded and checked its group (sizes stand in for time).
    Modules kept parsed (`stored`) are read here; `storing`: what this process parses, it also
    keeps."""
    parse_here = 1 + STORE_COST if storing else 1.0
    largest_first = _largest_first(paths)
    here = CHECK_COST * sum(size for size, _ in largest_first)
    elsewhere = 0.0
    shared, own = [], []
    for size, path in largest_first:
        if path in stored:
            own.append(path)
            here += size * STORE_COST
        elif elsewhere + size * WORKER_COST < here + size * parse_here:
            shared.append(path)
            elsewhere += size * WORKER_COST
            here += size * RECEIVE_COST
        else:
            own.append(path)
            here += size * parse_here
    return shared, own


def _load_here(linter: Linter, path: Path, skeleton: bool = False) -> Loaded:
    try:
        facts = linter.load(str(path), context=skeleton)
    except Exception as exc:  # LoadError, or a bug of ours: the caller reports it
        return exc
    return _settled(linter, facts)


def _settled(linter: Linter, facts: ModuleFacts) -> ModuleFacts:
    """A module just loaded: its text freed if the run keeps none (see Source.forget_text), then
    the memory its loading took given back (see ddplint.run.memory)."""
    size = len(facts.source.text)
    if not linter.keep_texts:
        facts.source.forget_text(_TreeOf(facts))
    memory.parsed(size)
    return facts


class _TreeOf:
    """A module's tree, for a forgotten text to be printed from (see Source.forget_text), read
    only then: a skeleton has none yet, and one put back (see ddplint.model.skeleton) has
    let its own go."""

    __slots__ = ("facts",)

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts

    @property
    def code(self) -> str:
        return self.facts.tree.code


def _received(linter: Linter, path: Path, future: Future) -> Loaded:
    try:
        kind, payload = future.result()
        if kind == "file":
            kind, payload = "facts", _read_once(payload)
    except (BrokenExecutor, OSError, pickle.PickleError):  # the worker died (BrokenProcessPool)
        return _load_here(linter, path)  # the worker died: load it here
    if kind == "facts":
        from ddplint.syntax import pickling  # libcst: only once modules are loaded

        # The payload and the unpickler's memo are given back too.
        return _settled(linter, pickling.loads(payload))
    if kind == "error":
        return LoadError(payload)
    return _load_here(linter, path)  # it could not be sent (nested too deep to pickle)


def _read_once(filename: str) -> bytes:
    with open(filename, "rb") as handle:
        data = handle.read()
    os.unlink(filename)
    return data


def _load_elsewhere(
    settings: Settings, filename: str, folder: str | None, trees: str | None = None
) -> tuple[str, object]:
    """In a worker: load one module; its facts pickled (in a file of `folder` when given), the
    diagnostic of its LoadError, or a request to load it in the calling process. With `trees`
    (a folder of kept trees), the module is kept parsed there too (see ddplint.run.cache.trees).

    A file, because a pipe holds 64 KB: the worker would wait while the calling process, busy
    parsing, reads the rest a few milliseconds at a time.

    The cycle collector is paused meanwhile, as in the calling process (see
    group.collector_paused): it would walk the growing tree again and again, a fifth of the
    work. The facts' own cycles are then freed by collecting the youngest generation only,
    which holds nothing older than this module, and the pages they held go back to the system.
    """
    gc.disable()
    try:
        kind, payload = _load_and_pickle(settings, filename, trees)
    finally:
        gc.collect(0)
        gc.enable()
        memory.give_back_free_memory()
    if kind == "facts" and folder is not None:
        try:
            handle, written = tempfile.mkstemp(suffix=".pickle", dir=folder)
            with os.fdopen(handle, "wb") as out:
                out.write(payload)
            return "file", written
        except OSError:
            pass  # through the pipe, then
    return kind, payload


def _load_and_pickle(settings: Settings, filename: str, trees: str | None = None) -> tuple[str, object]:
    try:
        facts = Linter(settings).load(filename)
    except LoadError as exc:
        return "error", exc.diagnostic
    except Exception:
        return "here", None  # the calling process meets the same error and reports it
    try:
        from ddplint.syntax import pickling

        # Pickling recurses once per nesting level of the tree: a deep stack, as for parsing.
        blob = run_with_large_stack(lambda: pickling.dumps(facts))
    except (RecursionError, MemoryError, pickle.PickleError, TypeError, AttributeError):
        blob = None
    if blob is not None and trees is not None:
        TreeCache(Path(trees)).store(facts, blob)
    return ("facts", blob) if blob is not None else ("here", None)
