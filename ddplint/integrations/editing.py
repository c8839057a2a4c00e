"""Editor-side helpers that need no editor library: client column units, `# noqa` quick edits."""

from __future__ import annotations

import io
import re
import tokenize

from ddplint.diagnostics import Diagnostic
from ddplint.engine.noqa import NOQA_COMMENT
from ddplint.syntax.source import Source


def client_units(text: str, encoding: str = "utf-16") -> int:
    """Length of `text` in the units a language client counts columns in."""
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def noqa_line(line: str, code: str) -> str | None:
    """`line` with `code` added to its `# noqa: ...` comment (or a new one); None if it has `# noqa`."""
    match = NOQA_COMMENT.search(line)
    if match is None:
        body = line.rstrip()
        return f"{body}  # noqa: {code}"
    codes = match.group("codes")
    if codes is None:
        return None  # a bare noqa comment already suppresses every code
    if code in re.split(r"[\s,]+", codes.upper()):
        return None
    end = match.end("codes")
    return f"{line[:end]}, {code}{line[end:]}"


def disable_edit(d: Diagnostic) -> tuple[int, str] | None:
    """(row, new text of that row) with a `# noqa: CODE` comment that suppresses `d`, or None.

    The finding's own row comes first; the statement's first row when the finding's row ends
    inside a string, where a comment would become part of the text.
    """
    source = d.source
    if source is None:
        return None
    for row in dict.fromkeys((d.location.row, d.noqa_row)):
        if row > len(source.line_starts):
            continue
        new_line = noqa_line(source.line_text(row), d.code)
        if new_line is None:
            continue
        start, end = line_span(source, row)
        text = source.text[:start] + new_line + source.text[end:]
        if _is_noqa_comment(text, row, d):
            return row, new_line
    return None


def _is_noqa_comment(text: str, row: int, d: Diagnostic) -> bool:
    """Whether `row` of `text` ends in a real comment (not string content) suppressing `d`."""
    try:
        comments = [
            token.string
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type == tokenize.COMMENT and token.start[0] == row
        ]
    except (tokenize.TokenError, SyntaxError):
        return False
    return any(_names(comment, d.code) for comment in comments)


def _names(comment: str, code: str) -> bool:
    match = NOQA_COMMENT.search(comment)
    if match is None:
        return False
    codes = match.group("codes")
    return codes is None or code in re.split(r"[\s,]+", codes.upper())


def line_span(source: Source, row: int) -> tuple[int, int]:
    """Character offsets of a row's text, without its line break."""
    start = source.line_starts[row - 1]
    return start, start + len(source.line_text(row))
