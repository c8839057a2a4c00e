"""Suppression comments: `# noqa[: CODES]` on a line, `# ddplint: noqa[: CODES]` for a file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ddplint.diagnostics import Diagnostic

# A code has digits (as flake8 and ruff require): words after the codes are an explanation.
_CODES = r"[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*"
NOQA_COMMENT = re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODES}))?", re.IGNORECASE)
_FILE = re.compile(rf"^\s*#\s*ddplint:\s*noqa(?::\s*(?P<codes>{_CODES}))?\s*$", re.IGNORECASE)


def _split(codes: str | None) -> frozenset[str] | None:
    if not codes:
        return None  # everything
    return frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c)


@dataclass
class Suppressions:
    # row → codes (None: all codes) for line-level noqa comments.
    lines: dict[int, frozenset[str] | None] = field(default_factory=dict)
    # File-wide: None when nothing is suppressed, an empty set meaning all codes.
    file_codes: frozenset[str] | None = None
    whole_file: bool = False

    def suppresses(self, diagnostic: Diagnostic) -> bool:
        code = diagnostic.code
        if self.whole_file:
            return True
        if self.file_codes and any(code.startswith(c) for c in self.file_codes):
            return True
        for row in {diagnostic.location.row, diagnostic.noqa_row}:
            if row in self.lines:
                codes = self.lines[row]
                if codes is None or any(code.startswith(c) for c in codes):
                    return True
        return False


def parse_suppressions(lines: list[str]) -> Suppressions:
    result = Suppressions()
    file_codes: set[str] = set()
    for row, line in enumerate(lines, start=1):
        if "noqa" not in line.lower():
            continue
        whole = _FILE.match(line)
        if whole:
            codes = _split(whole.group("codes"))
            if codes is None:
                result.whole_file = True
            else:
                file_codes |= codes
            continue
        if "#" not in line:
            continue
        match = NOQA_COMMENT.search(line[line.index("#") :])
        if match:
            result.lines[row] = _split(match.group("codes"))
    result.file_codes = frozenset(file_codes) if file_codes else None
    return result
