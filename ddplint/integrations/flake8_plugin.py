"""flake8 plugin: ddplint's findings as `DDPxxx` codes in flake8's output.

flake8 owns selection (`--select`, `--ignore`, `--extend-ignore`, `per-file-ignores`);
`[tool.ddplint]` contributes only what the analysis needs (`collectives`, `rank-predicates`).
flake8 applies a noqa comment to the row it is on; ddplint also applies one on the first row of
a statement spanning several rows, and `# ddplint: noqa` file comments, as `ddplint check` does
(all off with flake8's `--disable-noqa`).
The findings are always those of flake8's `lines`: editors lint unsaved buffers.

When flake8 is given paths (not stdin), ddplint checks the files flake8 checks in one run, as
`ddplint check` does, and answers each file from that run: each file alone would analyse its
project again (a whole `flake8 .` took four to fifteen times as long). The run is done while
flake8 parses its options, before it forks its workers, or else when a process first asks. The
file on disk is read only to confirm it holds flake8's `lines`; a file that does not is checked
from `lines`, alone.
"""

from __future__ import annotations

import ast
import gc
import multiprocessing
import os
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from ddplint._meta import __version__
from ddplint.config import ConfigError, Settings, load_settings
from ddplint.diagnostics import INTERNAL_ERROR, IO_ERROR, SYNTAX_ERROR, Diagnostic
from ddplint.engine.context_modules import DEFAULT_BUDGET
from ddplint.rules import ALL_RULES
from ddplint.run.buffer import check_buffer
from ddplint.run.memory import give_back_free_memory
from ddplint.syntax.reading import LoadError, read_source

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


def _reports_ours(options: Any) -> bool:
    """Does flake8 select any of ddplint's codes (`--select`, `--ignore` and their `extend-`)?"""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        engine = DecisionEngine(options)
        return any(engine.decision_for(rule.code) is Decision.Selected for rule in ALL_RULES)
    except Exception:  # another flake8: leave it to the first file
        return False


def _start_method() -> str:
    """How flake8's workers will start (the first method listed is the platform's default)."""
    return multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]


def _same_text(read: str, lines: list[str]) -> bool:
    """flake8 reads with universal newlines: compare line breaks as `\n`."""
    given = "".join(lines)
    return read == given or read.replace("\r\n", "\n").replace("\r", "\n") == given


class Plugin:
    name = "ddplint"
    version = __version__
    context_budget = DEFAULT_BUDGET
    honour_noqa = True
    # flake8's options, for the paths it checks (read when checking: flake8's Python API sets
    # them after parsing the options).
    options: Any = None

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        # `tree` is what makes flake8 treat this as an AST plugin; ddplint parses with libcst.
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, manager: Any) -> None:
        manager.add_option(
            "--ddplint-context-budget",
            type=float,
            default=DEFAULT_BUDGET,
            parse_from_config=True,
            help="Seconds ddplint may spend reading the modules a file imports and the modules "
            "of its package that import it (0: the file alone). Default: %(default)s",
        )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls.context_budget = max(0.0, options.ddplint_context_budget)
        cls.honour_noqa = not getattr(options, "disable_noqa", False)
        cls.options = options
        cls._run_ahead(options)

    @classmethod
    def _run_ahead(cls, options: Any) -> None:
        """The run over flake8's paths, done here, in flake8's own process: the workers it then
        forks inherit it (else each does it, alone); only when flake8 reports DDP codes."""
        if not getattr(options, "filenames", None) or not _reports_ours(options):
            return  # flake8's Python API gives its paths later: asked for by the first file
        if _start_method() != "fork":
            return  # workers started afresh would not inherit it: each asks when it needs it
        files = _flake8_files(options)
        if files is None:
            return  # stdin
        _whole_run(files, os.getcwd(), cls.context_budget, cls.honour_noqa)
        # The trees' cycles freed, and the pages they held given back, before the workers copy
        # this process: else each worker's collector walks them again.
        gc.collect()
        give_back_free_memory()

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            diagnostics = self._from_whole_run()
            if diagnostics is None:
                folder = str(Path(self.filename).resolve().parent)
                diagnostics = check_buffer(
                    self.filename,
                    "".join(self.lines),
                    _analysis_settings(folder),
                    budget=self.context_budget,
                    noqa=self.honour_noqa,
                ).diagnostics
        except Exception as exc:  # a bug of ours must not stop flake8's run
            yield (
                1,
                0,
                f"DDP900 internal error in ddplint ({type(exc).__name__}: {exc}) — please report",
                type(self),
            )
            return
        for d in diagnostics:
            if d.code in _FLAKE8_OWN:
                continue
            code = "DDP900" if d.code == INTERNAL_ERROR else d.code
            # flake8 columns are 0-based (it adds one when printing).
            yield d.location.row, d.location.column - 1, f"{code} {d.message}", type(self)

    def _from_whole_run(self) -> list[Diagnostic] | None:
        """This file's findings in the run over flake8's paths; None when that run did not
        check it (excluded, not parsed, not read) or flake8's text is not the file's."""
        if self.options is None:
            return None  # not run by flake8
        files = _flake8_files(self.options)
        if files is None:
            return None  # stdin
        run = _whole_run(files, os.getcwd(), self.context_budget, self.honour_noqa)
        found = run.get(os.path.realpath(self.filename))
        if found is None or any(d.code in _FLAKE8_OWN for d in found):
            return None
        try:
            text = read_source(self.filename).text
        except LoadError:
            return None
        return found if _same_text(text, self.lines) else None
