"""The default format: the finding, its source line with carets, notes and help, like ruff's."""

from __future__ import annotations

from ddplint.diagnostics import Diagnostic
from ddplint.report.concise import fix_marker


def snippet(d: Diagnostic) -> list[str]:
    if d.source is None:
        return []
    row = d.location.row
    if row > len(d.source.line_starts):
        return []
    text = d.source.line_text(row)
    row = d.shown(d.location).row  # in a notebook: counted from the top of the cell
    width = len(str(row))
    pad = " " * width
    start = d.location.column - 1
    end = d.end_location.column - 1 if d.end_location.row == row else len(text)
    # Tabs widen on screen: count them as one column so the carets stay under the code.
    shown = text.replace("\t", " ")
    carets = "^" * max(1, end - start)
    return [f"{pad} |", f"{row} | {shown}", f"{pad} | {' ' * start}{carets}", f"{pad} |"]


def render_full(diagnostics: list[Diagnostic]) -> str:
    out: list[str] = []
    for d in diagnostics:
        out.append(f"{d.filename}:{d.place}: {d.code} {fix_marker(d)}[{d.name}] {d.message}")
        pad = " " * len(str(d.shown(d.location).row))
        out.extend(snippet(d))
        out.extend(f"{pad} = {note}" for note in d.notes)
        if d.help:
            out.append(f"{pad} = help: {d.help}")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")
