"""One run over many files: discover, load every module into the project, then check each."""

from __future__ import annotations

import difflib
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ddplint.config import Settings
from ddplint.diagnostics import IO_ERROR, Diagnostic, input_error
from ddplint.discovery import discover
from ddplint.fixer import fix_module, write_atomically
from ddplint.linter import FileResult, Linter, LoadError, internal_error
from ddplint.neighbours import DEFAULT_BUDGET, load_neighbours


@dataclass
class RunOptions:
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    force_exclude: bool = False
    # Seconds for reading the project modules around the checked files that the run does not
    # include (pre-commit passes only the changed files); 0 turns it off.
    context_budget: float = DEFAULT_BUDGET


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    checked: int = 0

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
    linter = Linter(settings)
    result = RunResult()
    found = discover(paths, settings, force_exclude=options.force_exclude)
    for given, reason in found.errors:
        result.files.append(FileResult(given, [input_error(IO_ERROR, given, reason)]))
    loaded = []
    for path in found.files:
        filename = str(path)
        try:
            facts = linter.load(filename)
            linter.project.add(facts)
        except LoadError as exc:
            result.files.append(FileResult(filename, [exc.diagnostic]))
            continue
        except Exception:  # a bug of ours: report it, go on with the other files
            result.files.append(FileResult(filename, [internal_error(filename, "reading the module")]))
            continue
        loaded.append(facts)
    result.checked = len(found.files)
    if options.context_budget > 0:
        load_neighbours(linter, loaded, options.context_budget)
    for facts in loaded:
        try:
            result.files.append(check_one(linter, facts, options))
        except Exception:
            where = "fixing" if options.fix or options.diff else "checking"
            error = internal_error(facts.filename, where)
            result.files.append(FileResult(facts.filename, [error], facts))
    result.files.sort(key=lambda f: f.filename)
    return result


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


def _nothing_written(linter: Linter, facts, result: FileResult) -> None:
    """The fixes stay unwritten: report the findings of the file as it is."""
    result.diagnostics = linter.check(facts)
    result.fixed_count = 0
    result.fixed_codes = Counter()


def is_read_only(path: Path) -> bool:
    """No write permission for us, or no write bit at all: root may write, but should not."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False  # the write itself reports the problem
    return not os.access(path, os.W_OK) or not mode & 0o222


def unified_diff(filename: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{filename}",
        tofile=f"b/{filename}",
    )
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in lines)
