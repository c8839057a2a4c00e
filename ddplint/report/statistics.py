"""`--statistics` (findings counted per code) and `--show-fixes` (what `--fix` changed), like ruff."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping

from ddplint.diagnostics import Applicability, Diagnostic
from ddplint.rules import RULES_BY_CODE


def _name(code: str, diagnostics: list[Diagnostic]) -> str:
    rule = RULES_BY_CODE.get(code)
    return rule.name if rule else next(d.name for d in diagnostics if d.code == code)


def statistics(diagnostics: list[Diagnostic]) -> list[dict]:
    """One entry a code, most frequent first, then by code."""
    counts = Counter(d.code for d in diagnostics)
    fixable = Counter(
        d.code for d in diagnostics if d.fix is not None and d.fix.applicability is Applicability.SAFE
    )
    order = sorted(counts, key=lambda code: (-counts[code], code))
    return [
        {
            "code": code,
            "name": _name(code, diagnostics),
            "count": counts[code],
            "fixable": fixable[code] == counts[code],
        }
        for code in order
    ]


def render_statistics(diagnostics: list[Diagnostic], as_json: bool = False) -> str:
    rows = statistics(diagnostics)
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return ""
    count_width = max(len(str(r["count"])) for r in rows)
    code_width = max(len(r["code"]) for r in rows)
    any_fixable = any(r["fixable"] for r in rows)
    lines = []
    for r in rows:
        marker = ("[*] " if r["fixable"] else "[ ] ") if any_fixable else ""
        lines.append(f"{r['count']:>{count_width}}\t{r['code']:<{code_width}}\t{marker}{r['name']}")
    return "\n".join(lines) + "\n"


def render_fixes(fixed: Mapping[str, Counter[str]]) -> str:
    """`Fixed N errors:` then, per file, how many findings of each code were fixed."""
    total = sum(sum(codes.values()) for codes in fixed.values())
    if not total:
        return "No errors fixed.\n"
    lines = [f"Fixed {total} error{'s' if total != 1 else ''}:"]
    for filename in sorted(fixed):
        lines.append(f"- {filename}:")
        for code, count in sorted(fixed[filename].items()):
            rule = RULES_BY_CODE.get(code)
            name = f" ({rule.name})" if rule else ""
            lines.append(f"    {count} × {code}{name}")  # noqa: RUF001 (ruff's own spelling)
    return "\n".join(lines) + "\n"
