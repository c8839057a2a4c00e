"""ruff's JSON shape: a list of findings with 1-based rows and columns."""

from __future__ import annotations

import json

from ddplint.diagnostics import Diagnostic, Location


def _loc(location: Location) -> dict[str, int]:
    return {"row": location.row, "column": location.column}


def diagnostic_dict(d: Diagnostic) -> dict:
    fix = None
    if d.fix is not None:
        edits = [
            {
                "content": edit.content,
                "location": _loc(d.shown(d.edit_location(edit.start))),
                "end_location": _loc(d.shown(d.edit_location(edit.end))),
            }
            for edit in d.fix.edits
        ]
        fix = {"applicability": d.fix.applicability.value, "message": d.fix.message, "edits": edits}
    # In a notebook, as ruff has it: rows count from the top of the cell `cell` names (1-based,
    # code cells counted); None elsewhere.
    noqa = d.shown(Location(d.noqa_row, 1)).row if d.noqa_row else d.noqa_row
    out = {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "filename": d.filename,
        "cell": d.cell,
        "location": _loc(d.shown(d.location)),
        "end_location": _loc(d.shown(d.end_location)),
        "noqa_row": noqa,
        "url": d.url,
        "severity": d.severity,
        "fix": fix,
    }
    if d.when:  # only under some launch configurations: CI can filter on it
        out["when"] = list(d.when)
    return out


def render_json(diagnostics: list[Diagnostic]) -> str:
    return json.dumps([diagnostic_dict(d) for d in diagnostics], indent=2, ensure_ascii=False) + "\n"
