"""Findings under the name of their file, like ruff's `grouped` format."""

from __future__ import annotations

from itertools import groupby

from ddplint.diagnostics import Diagnostic
from ddplint.report.concise import fix_marker


def file_group(filename: str, diagnostics: list[Diagnostic]) -> str:
    # Rows and columns padded to the widest in the file, so the codes line up.
    # In a notebook, rows count from the top of their cell, which is named first (`cell 3:12:5`).
    cells = [f"cell {d.cell}:" if d.cell is not None else "" for d in diagnostics]
    shown = [d.shown(d.location) for d in diagnostics]
    cell_width = max(len(cell) for cell in cells)
    row_width = max(len(str(at.row)) for at in shown)
    column_width = max(len(str(at.column)) for at in shown)
    lines = [f"{filename}:"]
    for d, cell, at in zip(diagnostics, cells, shown):
        position = f"{cell:>{cell_width}}{at.row:>{row_width}}:{at.column:<{column_width}}"
        lines.append(f"  {position} {d.code} {fix_marker(d)}{d.message}")
    return "\n".join(lines) + "\n"


def render_grouped(diagnostics: list[Diagnostic]) -> str:
    groups = [file_group(name, list(found)) for name, found in groupby(diagnostics, lambda d: d.filename)]
    return "\n".join(groups)
