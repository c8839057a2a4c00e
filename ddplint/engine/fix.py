"""Applying fixes: non-overlapping edits per pass, repeated to a fixed point, verified, written atomically."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ddplint.diagnostics import Applicability, Diagnostic, Edit
from ddplint.engine.checker import Linter
from ddplint.model.facts import ModuleFacts
from ddplint.syntax.reading import LoadError
from ddplint.syntax.source import Source, SourceError

MAX_PASSES = 10


@dataclass
class FixOutcome:
    text: str
    fixed: int
    remaining: list[Diagnostic]
    error: str | None = None
    # How many findings of each code the fixes removed, for --show-fixes.
    fixed_codes: Counter[str] = field(default_factory=Counter)
    # The fixed text's Source, to write it with (a notebook's cells are where the fixes left them).
    source: Source | None = None


def allowed(unsafe: bool) -> frozenset[Applicability]:
    return frozenset({Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE})


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply edits that do not overlap (the caller guarantees it), from last to first."""
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        text = text[: edit.start] + edit.content + text[edit.end :]
    return text


def _non_overlapping(diagnostics: list[Diagnostic], kinds: frozenset[Applicability]) -> list[Edit]:
    """The edits of the fixes of `kinds` that do not overlap; in a notebook, the checker has
    already turned the fixes it cannot take into advice (see Notebook.advise_blocked_fixes)."""
    chosen: list[Edit] = []
    taken: list[tuple[int, int]] = []
    for diagnostic in diagnostics:
        fix = diagnostic.fix
        if fix is None or fix.applicability not in kinds or not fix.edits:
            continue
        spans = [(e.start, e.end) for e in fix.edits]
        if any(_overlaps(span, other) for span in spans for other in taken):
            continue  # left for the next pass
        taken.extend(spans)
        chosen.extend(fix.edits)
    return chosen


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    # Two insertions at one point overlap too: their order would be arbitrary.
    return (a[0] < b[1] and b[0] < a[1]) or a[0] == b[0]


def fix_module(linter: Linter, facts: ModuleFacts, *, unsafe: bool = False) -> FixOutcome:
    """Fix one module to a fixed point; never returns text that does not parse."""
    kinds = allowed(unsafe)
    source = facts.source
    original = facts
    text = source.text
    notebook = source.notebook
    fixed = 0
    fixed_codes: Counter[str] = Counter()
    diagnostics = linter.check(facts)
    for _ in range(MAX_PASSES):
        edits = _non_overlapping(diagnostics, kinds)
        if not edits:
            break
        candidate = apply_edits(text, edits)
        if notebook is not None:
            notebook = notebook.edited(edits, candidate)
        new_source = Source(
            source.filename, candidate, source.encoding, source.bom, source.newline, notebook=notebook
        )
        try:
            new_facts = linter.facts_for(new_source, facts.module_name)
        except LoadError as exc:
            return FixOutcome(
                text,
                fixed,
                diagnostics,
                error=f"a fix produced code that does not parse ({exc.diagnostic.message}); "
                "the file was left as it was after the previous pass",
                fixed_codes=fixed_codes,
            )
        linter.project.replace(new_facts)
        new_diagnostics = linter.check(new_facts)
        fixed += max(0, len(diagnostics) - len(new_diagnostics))
        fixed_codes += Counter(d.code for d in diagnostics) - Counter(d.code for d in new_diagnostics)
        text, facts, diagnostics = candidate, new_facts, new_diagnostics
    if notebook is not None and text != source.text:
        problem = _notebook_problem(facts.source, text)
        if problem is not None:  # nothing is written: the notebook as it is
            linter.project.replace(original)
            return FixOutcome(source.text, 0, linter.check(original), error=problem)
    return FixOutcome(text, fixed, diagnostics, fixed_codes=fixed_codes, source=facts.source)


def _notebook_problem(source: Source, text: str) -> str | None:
    """Why the fixed cells cannot be written into the notebook, or None."""
    try:
        source.to_bytes(text)
    except SourceError as exc:
        return f"the fixes were not written: {exc}"
    return None


def write_atomically(path: Path, source: Source, text: str) -> None:
    """Replace `path` with `text` encoded as the original was; old or new file, never half."""
    data = source.to_bytes(text)
    # Through a symbolic link, replace the file it points to, and keep the link.
    path = Path(os.path.realpath(path))
    mode = stat.S_IMODE(path.stat().st_mode)
    folder = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".ddplint-tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
