"""One line a finding: `path:row:col: CODE message` (`path:cell N:row:col: ...` in a notebook)."""

from __future__ import annotations

from ddplint.diagnostics import Diagnostic


def fix_marker(diagnostic: Diagnostic) -> str:
    fix = diagnostic.fix
    return "[*] " if fix is not None and fix.applicability.value == "safe" else ""


def render_concise(diagnostics: list[Diagnostic]) -> str:
    return "".join(f"{d.filename}:{d.place}: {d.code} {fix_marker(d)}{d.message}\n" for d in diagnostics)
