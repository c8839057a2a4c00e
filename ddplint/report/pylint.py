"""pylint's parseable shape, `path:row: [CODE] message`, for tools that read pylint output."""

from __future__ import annotations

from ddplint.diagnostics import Diagnostic


def render_pylint(diagnostics: list[Diagnostic]) -> str:
    return "".join(f"{d.filename}:{d.location.row}: [{d.code}] {d.message}\n" for d in diagnostics)
