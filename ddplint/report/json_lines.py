"""One JSON object a line, the objects of the `json` format: findings stream and `grep` well."""

from __future__ import annotations

import json

from ddplint.diagnostics import Diagnostic
from ddplint.report.json_format import diagnostic_dict


def render_json_lines(diagnostics: list[Diagnostic]) -> str:
    return "".join(json.dumps(diagnostic_dict(d), ensure_ascii=False) + "\n" for d in diagnostics)
