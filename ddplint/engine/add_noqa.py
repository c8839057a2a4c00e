"""`--add-noqa`: a `# noqa: CODES` comment for every finding, where the noqa reader looks for it."""

from __future__ import annotations

import io
import re
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field, replace

from ddplint.diagnostics import Diagnostic, Location
from ddplint.engine.noqa import NOQA_COMMENT, parse_suppressions

_NO_SAFE_LINE = (
    "neither its line nor the first line of its statement can end in a comment "
    "(they continue with `\\` or inside a string)"
)
_ROW_ONE = Location(1, 1)
_SEPARATOR = re.compile(r"[\s,]+")
# Rows as Python counts them: `\r\n`, `\r` or `\n` end a line (a form feed does not).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass
class NoqaOutcome:
    text: str
    # Comments written or extended: one a line, however many codes it gained.
    added: int = 0
    # Findings no line could take a comment for, each with the reason.
    skipped: list[tuple[Diagnostic, str]] = field(default_factory=list)


def add_noqa(text: str, diagnostics: list[Diagnostic]) -> NoqaOutcome:
    """`text` with each finding's code in a `# noqa` comment on its row.

    The finding's own row is used, or, when that row cannot end in a comment (it ends in `\\`
    or inside a string), the first row of its statement: both are rows the noqa reader accepts.
    """
    try:
        lines_ending, comments = _line_ends(text)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return NoqaOutcome(text, skipped=[(d, "the file does not tokenize") for d in diagnostics])
    by_row: dict[int, list[Diagnostic]] = defaultdict(list)
    outcome = NoqaOutcome(text)
    for d in diagnostics:
        row = next((r for r in dict.fromkeys((d.location.row, d.noqa_row)) if r in lines_ending), None)
        if row is None:
            outcome.skipped.append((d, _NO_SAFE_LINE))
            continue
        by_row[row].append(d)
    lines = _LINES.findall(text)
    for row, found in by_row.items():
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        new_body = _with_codes(body, comments.get(row), {d.code for d in found})
        # The reader takes the first noqa comment after the line's first `#`, even one inside a
        # string: check that it reads this one as meant.
        read_as = parse_suppressions([new_body])
        missed = [d for d in found if not read_as.suppresses(replace(d, location=_ROW_ONE, noqa_row=1))]
        if missed:
            outcome.skipped.extend(
                (d, "the noqa reader would read an earlier noqa text on that line") for d in missed
            )
        elif new_body != body:
            lines[row - 1] = new_body + line[len(body) :]
            outcome.added += 1
    outcome.text = "".join(lines)
    return outcome


def _line_ends(text: str) -> tuple[set[int], dict[int, tuple[int, str]]]:
    """Rows a comment can be appended to (they end a logical or physical line, outside any string
    and without `\\`), and each row's comment: (column, text)."""
    ends: set[int] = set()
    comments: dict[int, tuple[int, str]] = {}
    for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
        if token.type in (tokenize.NEWLINE, tokenize.NL):
            ends.add(token.start[0])
        elif token.type == tokenize.COMMENT:
            comments[token.start[0]] = (token.start[1], token.string)
    return ends, comments


def _with_codes(body: str, comment: tuple[int, str] | None, codes: set[str]) -> str:
    """`body` (one line, no line break) with `codes` merged into its noqa comment, or one added."""
    if comment is not None:
        column, string = comment
        match = NOQA_COMMENT.search(string)
        if match is not None:
            if match.group("codes") is None:
                return body  # a comment without codes already covers them all
            old = [c.upper() for c in _SEPARATOR.split(match.group("codes")) if c]
            merged = ", ".join(sorted(set(old) | codes))
            start, end = column + match.start("codes"), column + match.end("codes")
            return body[:start] + merged + body[end:]
    return f"{body.rstrip()}  # noqa: {', '.join(sorted(codes))}"
