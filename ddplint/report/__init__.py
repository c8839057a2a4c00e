"""Output formats. Each takes the sorted diagnostics and returns the text to print."""

from __future__ import annotations

from collections.abc import Callable

from ddplint.diagnostics import Diagnostic
from ddplint.report.concise import render_concise
from ddplint.report.full import render_full
from ddplint.report.github import render_github
from ddplint.report.json_format import render_json
from ddplint.report.sarif import render_sarif

FORMATS: dict[str, Callable[[list[Diagnostic]], str]] = {
    "full": render_full,
    "concise": render_concise,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
}
