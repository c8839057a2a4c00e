"""Checking the modules of one import group in this process: the checks, the fixes, their writing."""

from __future__ import annotations

import difflib
import gc
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ddplint.diagnostics import IO_ERROR, Diagnostic, input_error
from ddplint.engine.checker import FileResult, Linter, internal_error
from ddplint.engine.context_modules import DEFAULT_BUDGET
from ddplint.engine.fix import fix_module, write_atomically
from ddplint.model import skeleton
from ddplint.model.facts import ModuleFacts
from ddplint.run.cache.findings import Cache, is_folder, settings_key
from ddplint.run.cache.trees import TreeCache, kept_trees
from ddplint.syntax.source import Source


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


def check_guarded(linter: Linter, facts, options: RunOptions) -> FileResult:
    """One module of the run, reported; then it drops its positions (an entry per node, kept for
    every module with a finding they added up): a later message naming one of its lines computes
    them again.

    A module that came as a skeleton (see ddplint.model.skeleton) then goes back to it, its tree
    let go, when its check was all that read its nodes and kept none: the check read no other
    module whole, and left every table that may hold nodes as large as it was (see
    Project.extent). The run then holds the trees of the modules the analysis simulates and of
    the one being checked, not of every module checked so far."""
    back = skeleton.way_back(facts)
    reads, extent = skeleton.read_whole, linter.project.extent() if back is not None else ()
    try:
        return check_one(linter, facts, options)
    except Exception:  # a bug of ours: report it, go on with the other files
        where = "fixing" if options.fix or options.diff else "checking"
        return FileResult(facts.filename, [internal_error(facts.filename, where)], facts)
    finally:
        facts.forget_positions()
        if (
            back is not None
            and type(facts) is ModuleFacts  # read whole by the check,
            and skeleton.read_whole == reads + 1  # alone,
            and linter.project.extent() == extent  # and nothing kept
        ):
            skeleton.put_back(facts, back)


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


def as_skeletons(linter: Linter, options: RunOptions) -> bool:
    """Whether the run reads the modules it checks from the kept trees as skeletons, to put
    each back after its check (see `check_guarded`): it fixes nothing, which would need them."""
    return linter.trees is not None and not (options.fix or options.diff)


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
        result.diff = fixes_diff(facts.source, outcome.source or facts.source, outcome.text)
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
                write_atomically(path, outcome.source or facts.source, outcome.text)
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


def fixes_diff(before: Source, after: Source, text: str) -> str:
    """The fixes as a diff: of the file, or of each changed cell of a notebook (`nb.ipynb:cell 2`)."""
    if before.notebook is None or after.notebook is None:
        return unified_diff(before.filename, before.text, text)
    old = before.notebook.cell_texts(before.text)
    new = after.notebook.cell_texts(text)
    return "".join(
        unified_diff(f"{before.filename}:cell {cell.number}", a, b)
        for cell, a, b in zip(before.notebook.cells, old, new)
        if a != b
    )


def unified_diff(filename: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{filename}",
        tofile=f"b/{filename}",
    )
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in lines)
