"""pylint's parseable shape, `path:row: [CODE] message`, for tools that read pylint output."""

from __future__ import annotations

from ddplint.diagnostics import Diagnostic


def render_pylint(diagnostics: list[Diagnostic]) -> str:
    return "".join(f"{d.filename}:{_row(d)}: [{d.code}] {d.message}\n" for d in diagnostics)


def _row(d: Diagnostic) -> str:
    row = d.shown(d.location).row
    return str(row) if d.cell is None else f"cell {d.cell}:{row}"
