"""Writing `--add-noqa` comments into the files of a run, as `--fix` writes its fixes."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

from ddplint.diagnostics import INTERNAL_ERROR, IO_ERROR, SYNTAX_ERROR, Diagnostic
from ddplint.engine.add_noqa import add_noqa
from ddplint.engine.fix import write_atomically
from ddplint.run.group import is_read_only
from ddplint.syntax.parse import parse_source
from ddplint.syntax.reading import LoadError, read_source
from ddplint.syntax.source import Source, SourceError

# Problems with the input itself: no comment suppresses them.
_NOT_SUPPRESSIBLE = {IO_ERROR, SYNTAX_ERROR, INTERNAL_ERROR}


@dataclass
class NoqaRun:
    added: int = 0
    # One line each: why a finding or a file was left without its comment.
    problems: list[str] = field(default_factory=list)


def add_noqa_to_files(diagnostics: list[Diagnostic]) -> NoqaRun:
    """Add a `# noqa` comment for each finding to its file; a file is written only when the result
    parses, keeping its encoding, BOM and newlines."""
    result = NoqaRun()
    by_file: dict[str, list[Diagnostic]] = defaultdict(list)
    for d in diagnostics:
        if d.code in _NOT_SUPPRESSIBLE:
            result.problems.append(f"{d.filename}: {d.code} {d.message}")
        else:
            by_file[d.filename].append(d)
    for filename, found in by_file.items():
        result.added += _add_to_file(filename, found, result.problems)
    return result


def _add_to_file(filename: str, diagnostics: list[Diagnostic], problems: list[str]) -> int:
    try:
        source = read_source(filename)
    except LoadError as exc:
        problems.append(f"{filename}: {exc.diagnostic.message}")
        return 0
    outcome = add_noqa(source.text, diagnostics)
    for d, reason in outcome.skipped:
        where = f"{filename}:{d.place}"
        problems.append(f"{where}: no `# noqa: {d.code}` added: {reason}")
    if outcome.text == source.text:
        return 0
    if source.notebook is not None:
        notebook = source.notebook.relined(source.text, outcome.text)
        if notebook is None:
            problems.append(f"{filename}: left as it was: a comment would change a line of IPython syntax")
            return 0
        source = replace(source, notebook=notebook)
    try:
        parse_source(Source(filename, outcome.text, source.encoding, source.bom, source.newline))
    except LoadError as exc:
        problems.append(f"{filename}: left as it was: with the comments it would not parse ({exc})")
        return 0
    path = Path(filename)
    if is_read_only(path):
        problems.append(f"{filename}: cannot add noqa comments: file is read-only")
        return 0
    try:
        write_atomically(path, source, outcome.text)
    except SourceError as exc:  # a notebook that cannot take the comments
        problems.append(f"{filename}: left as it was: {exc}")
        return 0
    except OSError as exc:
        problems.append(f"{filename}: cannot add noqa comments: {exc.strerror or exc}")
        return 0
    return outcome.added
