"""GitLab Code Quality: a JSON array of issues, shown in merge request widgets and diffs."""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path

from ddplint.diagnostics import INTERNAL_ERROR, IO_ERROR, SYNTAX_ERROR, Diagnostic

INPUT_ERRORS = (IO_ERROR, SYNTAX_ERROR, INTERNAL_ERROR)


def project_path(filename: str, root: Path) -> str:
    """The path relative to the project root, as GitLab matches it against the repository;
    a file outside the root keeps its absolute path."""
    path = Path(os.path.abspath(filename))
    try:
        return path.relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return path.as_posix()


def source_line(d: Diagnostic) -> str:
    # A problem with the file itself is about the file, not a line; whether its text is at hand
    # depends on whether it came from the cache, and its fingerprint must not.
    if d.code in INPUT_ERRORS or d.source is None:
        return ""
    if not 1 <= d.location.row <= len(d.source.line_starts):
        return ""
    return d.source.line_text(d.location.row).strip()


def fingerprints(diagnostics: list[Diagnostic], paths: list[str]) -> list[str]:
    """A hash of what the finding is about, not where: code, file, the line's text and the
    count of identical ones before it. It survives lines added above, so GitLab sees the same
    issue across a change rather than one fixed and one new."""
    seen: Counter[tuple[str, str, str]] = Counter()
    out = []
    for d, path in zip(diagnostics, paths):
        key = (d.code, path, source_line(d))
        occurrence = seen[key]
        seen[key] += 1
        text = "\0".join((*key, str(occurrence)))
        out.append(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
    return out


def gitlab_issues(diagnostics: list[Diagnostic], root: Path) -> list[dict]:
    paths = [project_path(d.filename, root) for d in diagnostics]
    return [
        {
            "description": f"{d.code} {d.message}" + (f" ({d.place})" if d.cell is not None else ""),
            "check_name": d.code,
            "fingerprint": fingerprint,
            "severity": "major",
            # In a notebook, the row of its JSON that holds the line, as the file is shown.
            "location": {"path": path, "lines": {"begin": max(1, d.file_row)}},
        }
        for d, path, fingerprint in zip(diagnostics, paths, fingerprints(diagnostics, paths))
    ]


def render_gitlab(diagnostics: list[Diagnostic], root: Path) -> str:
    return json.dumps(gitlab_issues(diagnostics, root), indent=2, ensure_ascii=False) + "\n"
