"""Worker processes: each import-connected group of modules parsed, analysed and checked in one.

The analysis needs every module of a group in the process that simulates it, and sending a
syntax tree costs about a fifth of parsing it (pickling, then unpickling), so trees of
other groups never travel: a worker parses its group, builds the project index and the
summaries for it, checks it, and sends back findings only. Groups are independent (see
ddplint.run.prefilter), so the findings are the same as in one process; the runner sorts them.

The largest group is checked in the calling process while the workers help load it (see
ddplint.run.shared_load), then take the others, queued behind its loading: they check those while the
caller checks it, which they cannot help with. One process fewer holds a copy of the
interpreter, and the workers are started before the caller builds any tree, so they never hold a
copy of those.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from concurrent.futures import BrokenExecutor, Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ddplint.diagnostics import Diagnostic
from ddplint.engine.checker import FileResult, Linter
from ddplint.run.discovery import file_size
from ddplint.run.group import as_skeletons, check_guarded, collector_paused, use_cache
from ddplint.settings import Settings

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


@dataclass
class GroupResult:
    files: list[FileResult] = field(default_factory=list)
    # Files outside the run read as context (for the cache).
    context: list[str] = field(default_factory=list)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def groups_of(files: list[Path], modules: dict[Path, str], components: dict[str, str]) -> list[list[Path]]:
    """Files split by component, each group in discovery order, the largest groups first."""
    groups: dict[str, list[Path]] = {}
    for path in files:
        groups.setdefault(components[modules[path]], []).append(path)
    return sorted(groups.values(), key=lambda g: -sum(file_size(p) for p in g))


def check_group(
    settings: Settings,
    options,
    paths: list[str],
    check: set[str] | None,
    unloaded: dict[str, tuple[str, ...]] | None = None,
    outside: set[Path] | frozenset[Path] = frozenset(),
) -> GroupResult:
    """Load, analyse and check one group; `check` None means every file of it. `unloaded` and
    `outside`: the run's modules left unparsed (see ddplint.run.prefilter), never read as context."""
    from ddplint.engine.context_modules import load_neighbours
    from ddplint.run.shared_load import add_group

    linter = Linter(settings, noqa=options.noqa)
    use_cache(linter, options)
    linter.project.unloaded = dict(unloaded or {})
    out = GroupResult()
    with collector_paused():
        linter.keep_texts = False  # a worker never fixes (see Linter.keep_texts)
        loaded, failed = add_group(linter, [Path(p) for p in paths], skeletons=as_skeletons(linter, options))
        out.files.extend(FileResult(str(path), [diagnostic]) for path, diagnostic in failed)
        if options.context_budget > 0:
            load_neighbours(linter, loaded, options.context_budget, skip=outside)
        for facts in loaded:
            if check is None or facts.filename in check:
                out.files.append(check_guarded(linter, facts, options))
    given = set(paths)
    out.context = sorted(name for name in linter.project.files if name not in given)
    return out


def _portable(result: GroupResult) -> GroupResult:
    """Findings without trees: the text of a file stays only where a finding needs a snippet."""
    files = []
    for file in result.files:
        diagnostics: list[Diagnostic] = [replace(d) for d in file.diagnostics]
        files.append(replace(file, facts=None, diagnostics=diagnostics))
    return GroupResult(files, result.context)


def _work(args) -> GroupResult:
    return _portable(check_group(*args))


_not_ours: dict[int, set] = {}


def start_pool(workers: int) -> ProcessPoolExecutor | None:
    """Worker processes for the run, or None where none can start. They are forked when first
    given work, before this process builds any tree, and after it imports what parsing needs:
    they inherit libcst instead of importing it each (a tenth of a second), and share its pages."""
    # Imported here: multiprocessing is a tenth of ddplint's imports, and most one-file runs
    # (pre-commit, an editor) start no worker.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from ddplint.syntax import pickling as treepickle  # noqa: F401  (both import libcst)

    try:
        pool = ProcessPoolExecutor(max_workers=max(1, workers), initializer=_worker_started)
    except OSError:
        return None
    # The processes already running: a program calling ddplint may have children of its own.
    _not_ours[id(pool)] = set(multiprocessing.active_children())
    return pool


def _worker_started() -> None:
    """A worker may be forked while the caller has the cycle collector paused (see
    group.collector_paused); it frees the facts of each module it sends back, which hold
    cycles, so it collects, but never looks at what it inherited."""
    gc.freeze()
    gc.enable()


def finish(pool: ProcessPoolExecutor | None) -> None:
    """Let the workers leave once their work is done, and wait for them: the command ends its
    process at once (see ddplint.integrations.cli.entry), and a worker not yet told to leave would wait for
    work forever."""
    if pool is None:
        return
    import multiprocessing  # imported already: a pool was started

    pool.shutdown(wait=False)
    not_ours = _not_ours.pop(id(pool), set())
    for child in multiprocessing.active_children():
        if child not in not_ours:
            child.join()


def check_elsewhere(
    pool: ProcessPoolExecutor | None,
    settings: Settings,
    options,
    groups: list[list[Path]],
    check: set[Path] | None,
    unloaded: dict[str, tuple[str, ...]] | None = None,
    outside: set[Path] | frozenset[Path] = frozenset(),
) -> Iterator[GroupResult]:
    """Give `groups` to the pool's workers; the results, in order, as the caller asks for them
    (see `_gathered`)."""
    tasks = [
        (
            settings,
            options,
            [str(p) for p in group],
            None if check is None else {str(p) for p in group if p in check},
            unloaded,
            outside,
        )
        for group in groups
    ]
    futures: list[Future] = []
    if pool is not None:
        try:
            for task in tasks:
                futures.append(pool.submit(_work, task))
        except (OSError, RuntimeError):
            pass  # the pool is broken: what was not submitted is checked in this process
    return _gathered(futures, tasks)


def _gathered(futures: list[Future], tasks: list) -> Iterator[GroupResult]:
    """The groups' results in order. Asked for once the caller is free: what no worker has
    started yet is checked here meanwhile (the smallest groups, from the end), and so is what a
    worker that died (or never started) left undone."""
    here: dict[int, GroupResult] = {}
    for index in reversed(range(len(futures))):
        if futures[index].cancel():
            here[index] = _work(tasks[index])
    for index, task in enumerate(tasks):
        if index in here:
            yield here.pop(index)
            continue
        if index >= len(futures):
            yield _work(task)
            continue
        try:
            yield futures[index].result()
        except (BrokenExecutor, OSError):  # a worker died (BrokenProcessPool)
            yield _work(task)
