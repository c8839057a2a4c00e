"""Output formats. Each takes the sorted diagnostics and returns the text to print."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ddplint.diagnostics import Diagnostic
from ddplint.report.azure import render_azure
from ddplint.report.concise import render_concise
from ddplint.report.full import render_full
from ddplint.report.github import render_github
from ddplint.report.gitlab import render_gitlab
from ddplint.report.grouped import render_grouped
from ddplint.report.json_format import render_json
from ddplint.report.json_lines import render_json_lines
from ddplint.report.junit import render_junit
from ddplint.report.pylint import render_pylint
from ddplint.report.sarif import render_sarif

FORMATS: dict[str, Callable[[list[Diagnostic]], str]] = {
    "full": render_full,
    "concise": render_concise,
    "grouped": render_grouped,
    "json": render_json,
    "json-lines": render_json_lines,
    "junit": render_junit,
    "pylint": render_pylint,
    "github": render_github,
    "azure": render_azure,
    "sarif": render_sarif,
}
# Formats whose paths are relative to the project root (the configuration's folder, else the
# current one), since the consumer matches them against the repository.
ROOTED_FORMATS: dict[str, Callable[[list[Diagnostic], Path], str]] = {"gitlab": render_gitlab}
FORMAT_NAMES = sorted([*FORMATS, *ROOTED_FORMATS])


def render(output_format: str, diagnostics: list[Diagnostic], root: Path) -> str:
    if output_format in ROOTED_FORMATS:
        return ROOTED_FORMATS[output_format](diagnostics, root)
    return FORMATS[output_format](diagnostics)
