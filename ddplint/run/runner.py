"""One run over many files: discover, load every module into the project, then check each."""

from __future__ import annotations

import difflib
import gc
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from ddplint.config import Settings
from ddplint.diagnostics import INTERNAL_ERROR, IO_ERROR, Diagnostic, input_error
from ddplint.engine.checker import FileResult, Linter, LoadError, internal_error, read_source
from ddplint.engine.context_modules import DEFAULT_BUDGET, load_neighbours
from ddplint.engine.fix import fix_module, write_atomically
from ddplint.run import prefilter
from ddplint.run import shared_load as readahead
from ddplint.run import workers as parallel
from ddplint.run.cache import plan as incremental
from ddplint.run.cache.findings import Cache, is_folder, settings_key
from ddplint.run.cache.trees import TreeCache, kept_trees
from ddplint.run.discovery import discover


@dataclass
class RunOptions:
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    force_exclude: bool = False
    # Seconds for reading the project modules around the checked files that the run does not
    # include (pre-commit passes only the changed files); 0 turns it off.
    context_budget: float = DEFAULT_BUDGET
    # Skip files no finding can involve (see ddplint.run.prefilter); off only to prove it invisible.
    prefilter: bool = True
    # Reuse findings from `.ddplint_cache/` (see ddplint.run.cache.plan); the command line turns it on.
    cache: bool = False
    # Worker processes (see ddplint.run.workers); None: one per CPU (the command line's default).
    jobs: int | None = 1
    # Off for flake8's --disable-noqa: suppression comments are ignored.
    noqa: bool = True
    # Keep parsed modules in the cache (see ddplint.run.cache.trees); None: once an earlier run has
    # left one, so that a run that has no cache to restore (a fresh CI job) spends nothing on it.
    keep_trees: bool | None = None
    # Without the cache: still read the modules it keeps parsed, if the project has one, and
    # write nothing (flake8's run over its files; see ddplint.run.cache.trees.kept_trees).
    read_trees: bool = False


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    # Every file the run was to check, those the prefilter skipped included (they have no finding).
    discovered: list[Path] = field(default_factory=list)

    @property
    def checked(self) -> int:
        return len(self.discovered)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        out = [d for f in self.files for d in f.diagnostics]
        return sorted(out, key=Diagnostic.sort_key)

    @property
    def fixed(self) -> int:
        return sum(f.fixed_count for f in self.files)

    @property
    def fixed_codes(self) -> dict[str, Counter[str]]:
        """File → code → how many findings the fixes removed, for --show-fixes."""
        return {f.filename: f.fixed_codes for f in self.files if f.fixed_codes}

    @property
    def diffs(self) -> list[str]:
        return [f.diff for f in self.files if f.diff]


def run(paths: list[str], settings: Settings, options: RunOptions | None = None) -> RunResult:
    options = options or RunOptions()
    linter = Linter(settings, noqa=options.noqa)
    result = RunResult()
    found = discover(paths, settings, force_exclude=options.force_exclude)
    for given, reason in found.errors:
        result.files.append(FileResult(given, [input_error(IO_ERROR, given, reason)]))
    result.discovered = list(found.files)
    cache = use_cache(linter, options)
    if linter.trees is not None:
        options = replace(options, keep_trees=linter.trees.keep)  # the workers decide alike
    jobs = options.jobs or parallel.default_jobs()
    workers = jobs > 1 and not (options.fix or options.diff)
    planned = None
    check: set[Path] | None = None  # None: every loaded file
    if cache is not None:
        planned = incremental.plan(found.files, linter, cache, use_prefilter=options.prefilter, jobs=jobs)
        files, check, modules, graph = planned.load, planned.check, planned.modules, planned.graph
        unloaded = planned.unloaded
        for path, diagnostics in planned.cached.items():
            result.files.append(FileResult(str(path), _revived(path, diagnostics)))
    else:
        triggers = linter.trigger_names() if options.prefilter else None
        selection = prefilter.select(
            found.files, triggers, graph=workers, max_bytes=settings.max_file_size, jobs=jobs
        )
        keep = set(selection.kept)
        keep.update(
            path
            for path in selection.skipped
            if not selection.known_to_parse(path) and not incremental.parses(path, settings.max_file_size)
        )
        files = [path for path in found.files if path in keep]
        modules, graph, unloaded = selection.modules, selection.graph, selection.unloaded
    # The run's files that are not loaded: never read again as context for the loaded ones.
    outside = set(found.files) - set(files)
    groups = [files]
    if workers and graph is not None and modules is not None and files:
        groups = parallel.groups_of(files, modules, graph.components())
    # The largest group here, the others in worker processes meanwhile (see ddplint.run.workers),
    # which also help load this one (see ddplint.run.shared_load), then check the others while this
    # process checks it: they are queued behind its loading.
    needs_pool = len(groups) > 1 or len(groups[0]) >= readahead.MIN_FILES
    pool = parallel.start_pool(jobs - 1) if workers and needs_pool else None
    others: list[Iterator[parallel.GroupResult]] = []

    def check_others() -> None:
        if not others:
            others.append(
                parallel.check_elsewhere(pool, settings, options, groups[1:], check, unloaded, outside)
            )

    try:
        linter.project.unloaded = unloaded
        _check_in_process(
            linter, groups[0], check, options, result, cache, planned, outside, pool, check_others
        )
        check_others()  # loading has queued them already; this keeps any group from going unchecked
        by_name = {str(path): path for path in files}
        for group in others[0]:
            result.files.extend(group.files)
            if planned is not None:
                context = incremental.context_of(group.context)
                for file in group.files:
                    incremental.record(cache, planned, by_name[file.filename], file.diagnostics, context)
    finally:
        parallel.finish(pool)
    result.files.sort(key=lambda f: f.filename)
    return result


def _check_in_process(
    linter, files, check, options, result, cache, planned, outside, pool=None, then=lambda: None
) -> None:
    by_name = {str(path): path for path in files}
    with collector_paused():
        linter.keep_texts = options.fix or options.diff  # what fixes nothing reads few texts again
        loaded, failed = readahead.add_group(linter, files, pool, then)
        if pool is not None:
            pool.shutdown(wait=False)  # every task is given: a worker leaves once it has no more
        for path, diagnostic in failed:
            result.files.append(FileResult(str(path), [diagnostic]))
            if planned is not None and diagnostic.code != INTERNAL_ERROR:  # a bug of ours: not kept
                incremental.record(cache, planned, path, [diagnostic], [])
        if options.context_budget > 0:
            load_neighbours(linter, loaded, options.context_budget, skip=outside)
        context = None
        for facts in loaded:
            path = by_name[facts.filename]
            if check is not None and path not in check:
                continue  # read only for what its neighbours' analysis needs
            checked = _check_guarded(linter, facts, options)
            result.files.append(checked)
            if planned is not None:
                if context is None:
                    context = incremental.context_of([n for n in linter.project.files if n not in by_name])
                incremental.record(cache, planned, path, checked.diagnostics, context)


def _check_guarded(linter: Linter, facts, options: RunOptions) -> FileResult:
    try:
        return check_one(linter, facts, options)
    except Exception:  # a bug of ours: report it, go on with the other files
        where = "fixing" if options.fix or options.diff else "checking"
        return FileResult(facts.filename, [internal_error(facts.filename, where)], facts)


def use_cache(linter: Linter, options: RunOptions) -> Cache | None:
    """The findings cache for this run, if it has one; the linter then keeps the modules it
    parses there too, and reads them back (see ddplint.run.cache.trees). Without it, `read_trees`
    still has the linter read what the project keeps."""
    if options.fix or options.diff:
        return None  # fixes rewrite files: always computed afresh
    if not options.cache:
        if options.read_trees:
            linter.trees = kept_trees(linter.settings.root)
        return None
    cache = Cache(linter.settings.root, settings_key(linter.settings, linter.codes))
    keep = is_folder(cache.root) if options.keep_trees is None else options.keep_trees
    linter.trees = TreeCache.under(cache.root, keep=keep)
    return cache


def _revived(path: Path, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Cached findings, named as this run names the file, with its text for snippets."""
    if not diagnostics:
        return []
    try:
        source = read_source(str(path))
    except LoadError:
        source = None
    for d in diagnostics:
        d.filename = str(path)
        d.source = source
    return diagnostics


@contextmanager
def collector_paused() -> Iterator[None]:
    """Keep Python's cycle collector out of the way while trees are built and held.

    Parsing allocates millions of acyclic nodes; every collection walks all those alive, a
    third of parse time on large runs. Trees stay alive until the run ends, so there is
    nothing for the collector to find meanwhile.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def check_one(linter: Linter, facts, options: RunOptions) -> FileResult:
    if not (options.fix or options.diff):
        return FileResult(facts.filename, linter.check(facts), facts)
    outcome = fix_module(linter, facts, unsafe=options.unsafe_fixes)
    result = FileResult(facts.filename, outcome.remaining, facts, outcome.text, outcome.fixed, outcome.error)
    result.fixed_codes = outcome.fixed_codes
    if outcome.error:
        result.diagnostics.append(input_error(IO_ERROR, facts.filename, outcome.error))
    changed = outcome.text != facts.source.text
    if changed and options.diff:
        result.diff = unified_diff(facts.filename, facts.source.text, outcome.text)
        # Report what would be fixed as still present: nothing was written.
        _nothing_written(linter, facts, result)
    elif changed and options.fix:
        path = Path(facts.filename)
        if is_read_only(path):
            _nothing_written(linter, facts, result)
            result.diagnostics.append(
                input_error(IO_ERROR, facts.filename, "cannot write fixes: file is read-only")
            )
        else:
            try:
                write_atomically(path, facts.source, outcome.text)
            except OSError as exc:
                _nothing_written(linter, facts, result)
                reason = exc.strerror or str(exc)
                result.diagnostics.append(
                    input_error(IO_ERROR, facts.filename, f"cannot write fixes: {reason}")
                )
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def is_read_only(path: Path) -> bool:
    """No write permission, or no write bit at all: root may write anything, but a file whose
    owner made it read-only is not ours to change."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return True
    return not os.access(path, os.W_OK) or not (mode & 0o222)


def _nothing_written(linter: Linter, facts, result: FileResult) -> None:
    """The fixes stay unwritten: report the findings of the file as it is."""
    result.diagnostics = linter.check(facts)
    result.fixed_count = 0
    result.fixed_codes = Counter()


def unified_diff(filename: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{filename}",
        tofile=f"b/{filename}",
    )
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in lines)
