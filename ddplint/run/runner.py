"""One run over many files: discover, load every module into the project, then check each."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ddplint.diagnostics import INTERNAL_ERROR, IO_ERROR, Diagnostic, input_error
from ddplint.engine.checker import FileResult, Linter
from ddplint.engine.context_modules import load_neighbours
from ddplint.run import prefilter, shared_load, workers
from ddplint.run.cache import plan
from ddplint.run.carry import bring_kept, keep_flags
from ddplint.run.discovery import discover
from ddplint.run.group import RunOptions, as_skeletons, check_guarded, collector_paused, use_cache
from ddplint.settings import Settings
from ddplint.syntax.reading import LoadError, read_source


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
    jobs = options.jobs or workers.default_jobs()
    in_workers = jobs > 1 and not (options.fix or options.diff)
    planned = None
    check: set[Path] | None = None  # None: every loaded file
    if cache is not None:
        planned = plan.plan(found.files, linter, cache, use_prefilter=options.prefilter, jobs=jobs)
        files, check, modules, graph = planned.load, planned.check, planned.modules, planned.graph
        unloaded = planned.unloaded
        for path, diagnostics in planned.cached.items():
            result.files.append(FileResult(str(path), _revived(path, diagnostics)))
    else:
        triggers = linter.trigger_names() if options.prefilter else None
        selection = prefilter.select(
            found.files, triggers, graph=in_workers, max_bytes=settings.max_file_size, jobs=jobs
        )
        keep = set(selection.kept)
        keep.update(
            path
            for path in selection.skipped
            if not selection.known_to_parse(path) and not plan.parses(path, settings.max_file_size)
        )
        files = [path for path in found.files if path in keep]
        modules, graph, unloaded = selection.modules, selection.graph, selection.unloaded
    # The run's files that are not loaded: never read again as context for the loaded ones.
    outside = set(found.files) - set(files)
    groups = [files]
    if in_workers and graph is not None and modules is not None and files:
        groups = workers.groups_of(files, modules, graph.components())
    # The largest group here, the others in worker processes meanwhile (see ddplint.run.workers),
    # which also help load this one (see ddplint.run.shared_load), then check the others while this
    # process checks it: they are queued behind its loading.
    needs_pool = len(groups) > 1 or len(groups[0]) >= shared_load.MIN_FILES
    pool = workers.start_pool(jobs - 1) if in_workers and needs_pool else None
    others: list[Iterator[workers.GroupResult]] = []

    def check_others() -> None:
        if not others:
            others.append(
                workers.check_elsewhere(pool, settings, options, groups[1:], check, unloaded, outside)
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
                context = plan.context_of(group.context)
                for file in group.files:
                    plan.record(cache, planned, by_name[file.filename], file.diagnostics, context)
    finally:
        workers.finish(pool)
    result.files.sort(key=lambda f: f.filename)
    return result


def _check_in_process(
    linter, files, check, options, result, cache, planned, outside, pool=None, then=lambda: None
) -> None:
    by_name = {str(path): path for path in files}
    with collector_paused():
        linter.keep_texts = options.fix or options.diff  # what fixes nothing reads few texts again
        skeletons = as_skeletons(linter, options)
        loaded, failed = shared_load.add_group(linter, files, pool, then, skeletons)
        if pool is not None:
            pool.shutdown(wait=False)  # every task is given: a worker leaves once it has no more
        for path, diagnostic in failed:
            result.files.append(FileResult(str(path), [diagnostic]))
            if planned is not None and diagnostic.code != INTERNAL_ERROR:  # a bug of ours: not kept
                plan.record(cache, planned, path, [diagnostic], [])
        if options.context_budget > 0:
            load_neighbours(linter, loaded, options.context_budget, skip=outside)
        checked_here = [f for f in loaded if check is None or by_name[f.filename] in check]
        if linter.trees is not None and checked_here:
            bring_kept(linter.project, linter.settings, linter.trees, checked_here)
        context = None
        for facts in loaded:
            path = by_name[facts.filename]
            if check is not None and path not in check:
                continue  # read only for what its neighbours' analysis needs
            checked = check_guarded(linter, facts, options)
            result.files.append(checked)
            if planned is not None:
                if context is None:
                    context = plan.context_of([n for n in linter.project.files if n not in by_name])
                plan.record(cache, planned, path, checked.diagnostics, context)
        if linter.trees is not None and checked_here:
            keep_flags(linter.project, linter.settings, linter.trees, checked_here)


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


__all__ = ["RunOptions", "RunResult", "run"]
