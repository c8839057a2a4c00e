"""SARIF 2.1.0, as GitHub code scanning reads it: rules from the rule pages, relative URIs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from ddplint._meta import __url__, __version__, rule_url
from ddplint.diagnostics import Diagnostic, Location
from ddplint.rules import ALL_RULES, Rule
from ddplint.rules.pages import page_sections, rule_page

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"


def rule_descriptor(rule: Rule) -> dict:
    page = rule_page(rule.code)
    sections = page_sections(rule.code) if page else {}
    what = sections.get("What it does") or rule.summary
    descriptor = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": what},
        "help": {"text": page or rule.summary, "markdown": page or rule.summary},
        "helpUri": rule_url(rule.code),
        "defaultConfiguration": {"level": "error"},
    }
    return descriptor


def artifact_uri(filename: str, base: Path) -> dict:
    """A URI relative to `base` (the %SRCROOT%) when the file lies under it, else absolute."""
    path = Path(os.path.abspath(filename))
    try:
        relative = path.relative_to(base)
    except ValueError:
        return {"uri": path.as_uri()}
    # The name's bytes, so that a name not in the file system's encoding still points at its file.
    return {"uri": quote(os.fsencode(relative.as_posix())), "uriBaseId": SRCROOT}


def region(start: Location, end: Location) -> dict:
    end_column = end.column if (end.row, end.column) > (start.row, start.column) else start.column
    return {
        "startLine": max(1, start.row),
        "startColumn": max(1, start.column),
        "endLine": max(1, end.row, start.row),
        "endColumn": max(1, end_column),
    }


def _fixes(d: Diagnostic, artifact: dict) -> list[dict]:
    # A notebook's fixes change its cells, not spans of its JSON: `ddplint check --fix` applies them.
    if d.fix is None or not d.fix.edits or d.source is None or d.cell is not None:
        return []
    replacements = [
        {
            "deletedRegion": region(d.edit_location(edit.start), d.edit_location(edit.end)),
            "insertedContent": {"text": edit.content},
        }
        for edit in d.fix.edits
    ]
    change = {"artifactLocation": artifact, "replacements": replacements}
    return [{"description": {"text": d.fix.message}, "artifactChanges": [change]}]


def result(d: Diagnostic, index: dict[str, int], base: Path) -> dict:
    artifact = artifact_uri(d.filename, base)
    out: dict = {"ruleId": d.code}
    if d.code in index:
        out["ruleIndex"] = index[d.code]
    out["level"] = "warning" if d.severity == "warning" else "error"
    out["message"] = {"text": d.message}
    where = region(d.location, d.end_location)
    if d.cell is not None:
        # A notebook is a JSON file to SARIF viewers: the region is the row of the JSON holding
        # the line, and the message and properties say where in which cell.
        where = {"startLine": d.file_row}
        out["message"] = {"text": f"{d.place}: {d.message}"}
    out["locations"] = [{"physicalLocation": {"artifactLocation": artifact, "region": where}}]
    fixes = _fixes(d, artifact)
    if fixes:
        out["fixes"] = fixes
    if d.when:
        out["properties"] = {"when": list(d.when)}
    if d.cell is not None:
        start, end = d.shown(d.location), d.shown(d.end_location)
        out.setdefault("properties", {})["notebook"] = {"cell": d.cell, "region": region(start, end)}
    return out


def sarif_log(diagnostics: list[Diagnostic], base: Path | None = None) -> dict:
    base = Path(os.path.abspath(base or Path.cwd()))
    rules = [rule_descriptor(rule) for rule in ALL_RULES]
    index = {rule.code: i for i, rule in enumerate(ALL_RULES)}
    driver = {
        "name": "ddplint",
        "version": __version__,
        "semanticVersion": __version__,
        "informationUri": __url__,
        "rules": rules,
    }
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {SRCROOT: {"uri": base.as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [result(d, index, base) for d in diagnostics],
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def render_sarif(diagnostics: list[Diagnostic]) -> str:
    return json.dumps(sarif_log(diagnostics), indent=2, ensure_ascii=False) + "\n"
