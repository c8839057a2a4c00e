"""Findings under the name of their file, like ruff's `grouped` format."""

from __future__ import annotations

from itertools import groupby

from ddplint.diagnostics import Diagnostic
from ddplint.report.concise import fix_marker


def file_group(filename: str, diagnostics: list[Diagnostic]) -> str:
    # Rows and columns padded to the widest in the file, so the codes line up.
    row_width = max(len(str(d.location.row)) for d in diagnostics)
    column_width = max(len(str(d.location.column)) for d in diagnostics)
    lines = [f"{filename}:"]
    for d in diagnostics:
        position = f"{d.location.row:>{row_width}}:{d.location.column:<{column_width}}"
        lines.append(f"  {position} {d.code} {fix_marker(d)}{d.message}")
    return "\n".join(lines) + "\n"


def render_grouped(diagnostics: list[Diagnostic]) -> str:
    groups = [file_group(name, list(found)) for name, found in groupby(diagnostics, lambda d: d.filename)]
    return "\n".join(groups)
