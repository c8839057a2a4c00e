"""Parsing an edited document again, libcst parsing only the pieces the edit changed.

An editor sends the whole text of a document on every change, and most of it is as it was.
The text is cut as ddplint.syntax.pieces cuts a large module, but each statement of the module
is a piece of its own, and a statement longer than SPLIT_OVER is cut between the statements of
its block: a piece's text then stays the same wherever else the document changes. A piece whose
text, with the stand-in lines around it, is one the previous version parsed takes that parse's
nodes; only the others go to libcst. The result is checked to print back to the text, else the
caller parses the document whole (so a syntax error is reported as a whole parse reports it).

Printing the whole tree back took a third of a parse of timm's train.py: a statement of the
module that was reused is not printed again, as its text in the module cannot have changed
(a statement prints the same wherever it stands in a module of the same indentation and line
ends).
"""

from __future__ import annotations

from ddplint.syntax.lazycst import cst
from ddplint.syntax.pieces import Parsed, assemble

# Smaller documents are parsed whole: locating the cuts would cost about what it saves.
REUSE_FROM = 8 * 1024
# A statement longer than this is cut between the statements of its block (a `def`, a `class`).
SPLIT_OVER = 4 * 1024


class DocumentParser:
    """The parses of one document's versions, each made from the pieces of the one before."""

    def __init__(self) -> None:
        # What the previous version's parse took from libcst.
        self._parsed = Parsed()
        # The previous version's statements of the module (by identity) → their printed text,
        # for a module of `_style` (its default indentation and line end).
        self._printed: dict[int, tuple[cst.BaseStatement, str]] = {}
        self._style: tuple[str, str] | None = None
        self.reused = 0  # pieces taken from the previous version by the latest parse

    def parse(self, text: str) -> cst.Module | None:
        """The module `text`, or None when it is left to a whole parse (small, unreadable,
        rejected by libcst, or not printing back to itself)."""
        self.reused = 0
        if len(text) <= REUSE_FROM:
            self._forget()
            return None
        parsed = Parsed()
        module = assemble(text, SPLIT_OVER, alone=True, known=self._parsed, parsed=parsed)
        printed = self._print(module) if module is not None else None
        if printed is None or printed[0] != text:
            # The last version that parsed is kept: once fixed again, the text reuses its pieces.
            return None
        before = self._parsed.pieces
        self.reused = sum(1 for source, piece in parsed.pieces.items() if before.get(source) is piece)
        self._parsed, self._printed, self._style = parsed, printed[1], printed[2]
        return module

    def _forget(self) -> None:
        self._parsed, self._printed, self._style = Parsed(), {}, None

    def state(self) -> tuple | None:
        """What another process needs to go on from the latest parse, in plain containers of
        nodes and strings (the nodes are the module's own: pickled with it, they cost little
        more); None when nothing was parsed in pieces."""
        if not self._parsed.pieces:
            return None
        return (
            self._parsed.pieces,
            list(self._parsed.joined.values()),
            list(self._printed.values()),
            self._style,
        )

    def resume(self, state: tuple) -> None:
        """Go on from a `state` of another process's parser (entries keyed by identity are keyed
        anew). Only a parser that has parsed nothing resumes; a state of another shape is ignored."""
        if self._parsed.pieces:
            return
        try:
            pieces, joined, printed, style = state
            known = Parsed(dict(pieces), {id(entry[0]): tuple(entry) for entry in joined})
            texts = {id(entry[0]): tuple(entry) for entry in printed}
        except (TypeError, ValueError, IndexError):
            return
        if all(isinstance(k, str) and isinstance(v, cst.Module) for k, v in known.pieces.items()):
            self._parsed, self._printed, self._style = known, texts, style

    def _print(
        self, module: cst.Module
    ) -> tuple[str, dict[int, tuple[cst.BaseStatement, str]], tuple[str, str]] | None:
        """`module.code`, with the statements printed for the previous version not printed again,
        the text of each statement of the module and its style; None when too deep to print."""
        style = (module.default_indent, module.default_newline)
        known = self._printed if style == self._style else {}
        printed: dict[int, tuple[cst.BaseStatement, str]] = {}
        body = module.body
        try:
            if not body:
                return module.code, printed, style
            parts = [module.code_for_node(line) for line in module.header]
            for statement in body[:-1]:
                kept = known.get(id(statement))
                code = (
                    kept[1] if kept is not None and kept[0] is statement else module.code_for_node(statement)
                )
                printed[id(statement)] = (statement, code)
                parts.append(code)
            # The last statement with the footer: the module drops its line end when the text has none.
            parts.append(module.with_changes(header=(), body=body[-1:]).code)
        except RecursionError:
            return None
        return "".join(parts), printed, style
