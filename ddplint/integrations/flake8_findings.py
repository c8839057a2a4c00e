"""The findings flake8's plugin reports (see ddplint.integrations.flake8_plugin, which loads this
module only once flake8 may report one of ddplint's codes).

When flake8 is given paths (not stdin), ddplint checks the files flake8 checks in one run, as
`ddplint check` does, and answers each file from that run: each file alone would analyse its
project again (a whole `flake8 .` took four to fifteen times as long). The run is done while
flake8 parses its options, before it forks its workers, or else when a process first asks. The
file on disk is read only to confirm it holds flake8's `lines`; a file that does not is checked
from `lines`, alone.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import time
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ddplint.config import ConfigError, Settings, load_settings
from ddplint.diagnostics import INTERNAL_ERROR, IO_ERROR, SYNTAX_ERROR, Diagnostic
from ddplint.engine.checker import Linter
from ddplint.engine.context_modules import MAX_MODULES, load_neighbours
from ddplint.run.buffer import check_buffer
from ddplint.run.carry import Carry
from ddplint.run.group import collector_paused
from ddplint.run.memory import give_back_free_memory
from ddplint.syntax.reading import LoadError, read_source
from ddplint.syntax.reparse import DocumentParser

if TYPE_CHECKING:
    from ddplint.integrations.flake8_plugin import Selection

# flake8 reports unreadable and unparsable files itself (E902, E999).
_FLAKE8_OWN = frozenset({IO_ERROR, SYNTAX_ERROR})


@lru_cache(maxsize=64)
def _analysis_settings(folder: str) -> Settings:
    try:
        found = load_settings(None, Path(folder))
    except ConfigError:
        found = Settings()
    return Settings(collectives=found.collectives, rank_predicates=found.rank_predicates, root=found.root)


@lru_cache(maxsize=1)
def _whole_run(paths: tuple[str, ...], cwd: str, budget: float, noqa: bool) -> dict[str, list[Diagnostic]]:
    """Resolved file name → its findings, for every file `ddplint check` would check among
    `paths` (those the prefilter skips have none). Empty when the run fails: each file is then
    checked alone (and reports what goes wrong), without trying the run again."""
    from ddplint.run.runner import RunOptions, run

    # flake8's parallel workers are daemon processes, which may not start processes of their own.
    jobs = 1 if multiprocessing.current_process().daemon else None
    options = RunOptions(context_budget=budget, jobs=jobs, noqa=noqa, read_trees=True)
    try:
        result = run(list(paths), _analysis_settings(cwd), options)
    except Exception:  # a bug of ours must not stop flake8's run
        return {}
    found: dict[str, list[Diagnostic]] = {os.path.realpath(path): [] for path in result.discovered}
    for file in result.files:
        found[os.path.realpath(file.filename)] = file.diagnostics
    return found


def _flake8_files(options: Any) -> tuple[str, ...] | None:
    """The files flake8 checks: its paths with its own `--exclude` and `--filename` applied (a
    vendored folder flake8 leaves alone is not read); the paths as given with another flake8.
    None when flake8 reads stdin."""
    paths = tuple(options.filenames or ()) or (".",)  # flake8's default
    if "-" in paths:
        return None
    try:
        exclude = (*options.exclude, *options.extend_exclude)
        return _expanded(paths, options.stdin_display_name, tuple(options.filename), exclude, os.getcwd())
    except Exception:
        return paths


@lru_cache(maxsize=1)
def _expanded(
    paths: tuple[str, ...], stdin_name: str, patterns: tuple[str, ...], exclude: tuple[str, ...], cwd: str
) -> tuple[str, ...]:
    """flake8's own expansion of its paths (relative to `cwd`, part of the key only)."""
    from flake8.discover_files import expand_paths

    return tuple(
        expand_paths(paths=paths, stdin_display_name=stdin_name, filename_patterns=patterns, exclude=exclude)
    )


@lru_cache(maxsize=1)
def _reporting(files: tuple[str, ...], selection: Selection) -> tuple[str, ...]:
    """Those of `files` flake8 may report ddplint's codes for: a `per-file-ignores` entry that
    ignores them all keeps a file out of the run (it is still read as context where needed)."""
    return tuple(name for name in files if selection.for_file(name))


def _run_files(options: Any, selection: Selection) -> tuple[str, ...] | None:
    files = _flake8_files(options)
    return None if files is None else _reporting(files, selection)


def _start_method() -> str:
    """How flake8's workers will start (the first method listed is the platform's default)."""
    return multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]


def run_ahead(options: Any, selection: Selection, budget: float, noqa: bool) -> None:
    """The run over flake8's files, done in flake8's own process while it parses its options:
    the workers it then forks inherit it (else each does it, alone)."""
    if _start_method() != "fork":
        return  # workers started afresh would not inherit it: each asks when it needs it
    files = _run_files(options, selection)
    if not files:
        return  # stdin, or no file flake8 reports ddplint's codes for
    _whole_run(files, os.getcwd(), budget, noqa)
    if len(_flake8_files(options) or ()) < 2:
        # flake8 checks one file in its own process, then exits: no worker will copy it.
        settle_for_exit()
        return
    # The trees' cycles freed, and the pages they held given back, before the workers copy
    # this process: else each worker's collector walks them again.
    gc.collect()
    give_back_free_memory()


def findings(
    filename: str,
    lines: list[str],
    options: Any,
    selection: Selection | None,
    budget: float,
    noqa: bool,
    *,
    last: bool = False,
) -> list[tuple[int, int, str]]:
    """(row, 0-based column, "CODE message") of each finding flake8 is to report for `lines`;
    `last`: the only file flake8's process checks (stdin) before it exits."""
    diagnostics = None
    if options is not None and selection is not None:
        diagnostics = _from_whole_run(filename, lines, options, selection, budget, noqa)
    if diagnostics is None:
        folder = str(Path(filename).resolve().parent)
        diagnostics = check_buffer(
            filename, "".join(lines), _analysis_settings(folder), budget=budget, noqa=noqa
        ).diagnostics
        if last:
            settle_for_exit()
    return rows_of(diagnostics)


def settle_for_exit() -> None:
    """Put what the check left (the trees of the modules around the file, garbage or not) out
    of the cycle collector's reach, in a flake8 process that checks nothing else before it exits:
    its collections while pyflakes and pycodestyle run, and its last one at exit, walked them all
    (0.8 of 2.3 s on timm's `train.py`)."""
    gc.freeze()


def buffer_rows(
    filename: str,
    text: str,
    *,
    from_stdin: bool,
    budget: float,
    noqa: bool,
    parser: DocumentParser | None = None,
    carry: Carry | None = None,
) -> list[tuple[int, int, str]]:
    """`findings` for flake8 checking the one file `filename` (or stdin shown as it), from
    another process: with the settings of the working folder where its run over the file would
    take them (the file holds `text`), else of the file's folder; `parser` and `carry` as the
    file's earlier checks left them."""
    _analysis_settings.cache_clear()  # a process that outlives this run: the settings may change
    folder = Path(filename).resolve().parent
    if not from_stdin and _same_text(_disk_text(filename) or "", [text]):
        folder = Path.cwd()
    with collector_paused():
        diagnostics = check_buffer(
            filename,
            text,
            _analysis_settings(str(folder)),
            budget=budget,
            noqa=noqa,
            parser=parser,
            carry=carry,
        ).diagnostics
    return rows_of(diagnostics)


def load_context_in_steps(filename: str, step: float) -> Iterator[None]:
    """Load the modules around `filename` (as saved) into the module cache that `buffer_rows`
    reads, `step` seconds at a time, pausing between steps; over when all are in (or as many as
    a check takes, or a step adds none)."""
    settings = _analysis_settings(os.getcwd())  # a saved file's, as `buffer_rows` takes them
    linter = Linter(settings)
    facts = linter.facts_for(read_source(filename))
    before = -1
    while True:
        linter = Linter(settings)  # each step adds to a fresh project what the cache holds
        linter.project.add(facts)
        started = time.monotonic()
        with collector_paused():
            loaded = load_neighbours(linter, [facts], step)
        if loaded >= MAX_MODULES or loaded <= before or time.monotonic() - started < step:
            return
        before = loaded
        yield


def rows_of(diagnostics: list[Diagnostic]) -> list[tuple[int, int, str]]:
    found = []
    for d in diagnostics:
        if d.code in _FLAKE8_OWN:
            continue
        code = "DDP900" if d.code == INTERNAL_ERROR else d.code
        # flake8 columns are 0-based (it adds one when printing).
        found.append((d.location.row, d.location.column - 1, f"{code} {d.message}"))
    return found


def _disk_text(filename: str) -> str | None:
    try:
        return read_source(filename).text
    except LoadError:
        return None


def _from_whole_run(
    filename: str, lines: list[str], options: Any, selection: Selection, budget: float, noqa: bool
) -> list[Diagnostic] | None:
    """This file's findings in the run over flake8's files; None when that run did not check it
    (excluded, not parsed, not read) or flake8's text is not the file's."""
    files = _run_files(options, selection)
    if not files:
        return None  # stdin
    run = _whole_run(files, os.getcwd(), budget, noqa)
    found = run.get(os.path.realpath(filename))
    if found is None or any(d.code in _FLAKE8_OWN for d in found):
        return None
    text = _disk_text(filename)
    return found if text is not None and _same_text(text, lines) else None


def _same_text(read: str, lines: list[str]) -> bool:
    """flake8 reads with universal newlines: compare line breaks as `\n`."""
    given = "".join(lines)
    return read == given or read.replace("\r\n", "\n").replace("\r", "\n") == given
