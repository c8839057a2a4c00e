"""Output formats. Each takes the sorted diagnostics and returns the text to print."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from ddplint.diagnostics import Diagnostic

# Format → (module under ddplint.report, its render function). A format's module is imported
# when it is asked for: most runs print one format, and JSON, XML and hashing cost a
# pre-commit run 8 ms to import.
FORMATS: dict[str, tuple[str, str]] = {
    "full": ("full", "render_full"),
    "concise": ("concise", "render_concise"),
    "grouped": ("grouped", "render_grouped"),
    "json": ("json_format", "render_json"),
    "json-lines": ("json_lines", "render_json_lines"),
    "junit": ("junit", "render_junit"),
    "pylint": ("pylint", "render_pylint"),
    "github": ("github", "render_github"),
    "azure": ("azure", "render_azure"),
    "sarif": ("sarif", "render_sarif"),
}
# Formats whose paths are relative to the project root (the configuration's folder, else the
# current one), since the consumer matches them against the repository.
ROOTED_FORMATS: dict[str, tuple[str, str]] = {"gitlab": ("gitlab", "render_gitlab")}
FORMAT_NAMES = sorted([*FORMATS, *ROOTED_FORMATS])


def render(output_format: str, diagnostics: list[Diagnostic], root: Path) -> str:
    if output_format in ROOTED_FORMATS:
        return _renderer(ROOTED_FORMATS[output_format])(diagnostics, root)
    return _renderer(FORMATS[output_format])(diagnostics)


def _renderer(entry: tuple[str, str]):
    module, function = entry
    return getattr(import_module(f"ddplint.report.{module}"), function)
