"""Checking one in-memory buffer (flake8's `lines`, an editor's unsaved text, stdin) in its project."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ddplint.diagnostics import Diagnostic
from ddplint.engine.checker import Linter
from ddplint.engine.context_modules import DEFAULT_BUDGET, load_neighbours
from ddplint.engine.fix import fix_module
from ddplint.model.facts import ModuleFacts
from ddplint.run.cache.trees import kept_trees
from ddplint.run.carry import Carry
from ddplint.settings import Settings
from ddplint.syntax.reading import NOTEBOOK_SUFFIX, LoadError, read_source
from ddplint.syntax.reparse import DocumentParser
from ddplint.syntax.source import Source, detect_newline


@dataclass
class BufferResult:
    facts: ModuleFacts | None
    diagnostics: list[Diagnostic]
    # Set when fixing: the fixed text, and how many findings of each code the fixes removed.
    fixed_text: str | None = None
    fixed_codes: Counter[str] = field(default_factory=Counter)
    fix_error: str | None = None
    # The fixed text's Source (a notebook's cells where the fixes left them), to write it with.
    fixed_source: Source | None = None


def buffer_source(filename: str, data: bytes | str) -> Source:
    """Bytes are decoded like a file (encoding cookie, BOM); text is taken as it is."""
    if isinstance(data, bytes) or filename.endswith(NOTEBOOK_SUFFIX):
        return read_source(filename, data if isinstance(data, bytes) else data.encode("utf-8"))
    return Source(filename, data, newline=detect_newline(data))


def check_buffer(
    filename: str,
    data: bytes | str,
    settings: Settings | None = None,
    *,
    budget: float = DEFAULT_BUDGET,
    fix: bool = False,
    unsafe_fixes: bool = False,
    noqa: bool = True,
    parser: DocumentParser | None = None,
    carry: Carry | None = None,
) -> BufferResult:
    """Check `data` as the content of `filename`, with the modules it imports read from disk.

    `budget` bounds the seconds spent loading those modules (0: the buffer alone). `noqa` off
    ignores suppression comments (flake8's `--disable-noqa`). `parser`: the parses of the
    document's earlier versions (an editor's), whose unchanged pieces are not parsed again.
    `carry`: what the document's last check settled, taken where it still holds, then replaced
    by what this check settles (see ddplint.run.carry).
    """
    linter = Linter(settings, noqa=noqa)
    if budget > 0:
        linter.trees = kept_trees(linter.settings.root)
    try:
        source = buffer_source(filename, data)
        if linter.trees is not None:
            # The pieces `ddplint check` kept of the file: only what the buffer changed is parsed.
            if parser is None:
                parser = linter.trees.parser_for_edit(source)
            else:
                linter.trees.resume(parser, source)
        facts = linter.facts_for(source, parser=parser)
    except LoadError as exc:
        return BufferResult(None, [exc.diagnostic])
    linter.project.add(facts)
    if budget > 0:
        load_neighbours(linter, [facts], budget)
    if not fix:
        if carry is not None:
            carry.bring(linter.project, linter.settings)
        diagnostics = linter.check(facts)
        if carry is not None:
            carry.keep(linter.project, linter.settings)
        return BufferResult(facts, diagnostics)
    outcome = fix_module(linter, facts, unsafe=unsafe_fixes)
    return BufferResult(
        facts, outcome.remaining, outcome.text, outcome.fixed_codes, outcome.error, outcome.source
    )
