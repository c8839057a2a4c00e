"""Parsing a large module in pieces, so that libcst's parser never holds more than one piece.

While it runs, libcst's parser needs 300 to 600 bytes per byte of text (its tokens and memo
tables), against the 20 or so that the finished tree keeps: torch's 1.3 MB table of operators
takes 0.8 GB to parse. A module larger than WHOLE_UP_TO is cut into pieces of about
PIECE_BYTES, only where a cut cannot change the tree, as CPython's parser locates them:

- between two statements of the module or of a `def`/`class` body, where the lines between
  them are blank or comments no deeper than the second (a deeper comment may belong to the
  block above: libcst decides by indentation);
- before the first element of a list, set or dict literal assigned or evaluated as a
  statement, and between two of its elements with only a comma, blank space and comments
  between them; inside an element longer than a piece whose value is such a literal too.

Each piece is parsed in the indentation it has in the module, under stand-in `class _:` lines
for the blocks around it, and the nodes are put together. The result equals the tree of one
whole parse (tests compare them node for node); if it does not print back to the text, the
caller parses the module whole (libcst itself prints a few spellings otherwise, such as the space
in `except E :`).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

from ddplint.syntax.depth import check_depth
from ddplint.syntax.lazycst import cst
from ddplint.syntax.source import detect_newline, line_starts


def first_line(node: ast.AST) -> int:
    """The line a statement starts on, its decorators included."""
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


# Pieces of about this size peak at 20 to 40 MB while parsed.
PIECE_BYTES = 64 * 1024
# Modules up to this size are parsed whole: they peak at 100 to 150 MB, and in pieces torch's
# modules of 64 to 256 KiB took a third longer (locating the cuts, printing the result to check
# it); its larger ones take as long either way.
WHOLE_UP_TO = 256 * 1024
MARKER = "__ddplint_piece__"  # a stand-in element, dropped from the pieces' literals

_BLANK = re.compile(r"[ \t]*")
_COMMENT = re.compile(r"#[^\r\n]*")
_SPACE = " \t\r\n"


@dataclass
class _Literal:
    """A list, set or dict literal that is a statement's value (or an element of one), and
    where it may be cut."""

    open: int  # offset of its opening bracket
    first: int  # offset of its first element
    end: int  # just past its closing bracket
    dict: bool
    cuts: list[int]  # offsets of the elements that begin a clean piece
    # Elements longer than a piece whose value is a literal too, by the offset of their start.
    inner: dict[int, _Literal] = field(default_factory=dict)


@dataclass
class _Statement:
    start: int  # where the lines before it begin: just past the statement before
    end: int  # just past its last line
    indent: str  # of its first line
    clean_before: bool  # a cut at `start` leaves the tree as it is (see _Lines.between)
    body: _Body | None = None  # of a `def` or `class` whose block may be cut
    literal: _Literal | None = None


@dataclass
class _Body:
    start: int  # the line after the block's header
    statements: list[_Statement] = field(default_factory=list)


@dataclass
class Parsed:
    """What one assembly took from libcst, for the next version of the text to reuse."""

    # Each text handed to libcst (a piece under its stand-in lines) → its module.
    pieces: dict[str, cst.Module] = field(default_factory=dict)
    # A `def` or `class` cut inside, by its header's node: that node, its block's statements,
    # and the statement put together from them.
    joined: dict[int, tuple[cst.CSTNode, list[cst.BaseStatement], cst.BaseStatement]] = field(
        default_factory=dict
    )


def parse_in_pieces(text: str, limit: int | None = None) -> cst.Module | None:
    """The module `text` parsed piece by piece, or None when it is small enough, or when CPython
    cannot read it or the pieces do not print back to it (both left to a whole parse).

    `limit` bounds the pieces where the cuts allow; by default, PIECE_BYTES for a module larger
    than WHOLE_UP_TO."""
    if len(text) <= (WHOLE_UP_TO if limit is None else limit):
        return None
    module = assemble(text, PIECE_BYTES if limit is None else limit)
    if module is None:
        return None
    try:
        printed = module.code
    except RecursionError:  # deeper than this thread allows: the whole parse, as before
        return None
    return module if printed == text else None


def assemble(
    text: str,
    limit: int,
    *,
    alone: bool = False,
    known: Parsed | None = None,
    parsed: Parsed | None = None,
) -> cst.Module | None:
    """The pieces of `text` parsed and put together, not yet checked to print back to it; None
    when CPython cannot read it or libcst rejects a piece.

    `alone`: each statement a piece of its own (a statement longer than `limit` is still cut
    inside), so that a piece's text stays the same when the text elsewhere changes. What libcst
    parses is recorded in `parsed`, and, when recorded, looked up in `known` first: a piece's
    text found there takes its nodes, and a statement put together from nodes all found there
    is the one put together then."""
    if MARKER in text:
        return None
    planned = _plan(text, limit)
    if planned is None or planned[1] is None:
        return None
    plan, indent = planned
    pieces = _Pieces(text, limit, indent, alone=alone, known=known, parsed=parsed)
    try:
        body = pieces.block(plan, ())
    except cst.ParserSyntaxError:
        return None  # what CPython accepts and libcst does not: the whole parse says where
    if pieces.first is None:
        return None
    return cst.Module(
        body=body,
        header=pieces.first.header,
        footer=pieces.footer,
        encoding=pieces.first.encoding,
        default_indent=indent,
        default_newline=pieces.first.default_newline,
        has_trailing_newline=text.endswith(("\n", "\r")),
    )


# Where to cut: read with CPython's parser, whose tree is dropped before libcst runs ----------


def _plan(text: str, limit: int) -> tuple[_Body, str | None] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None  # libcst may know newer grammar: parsed whole
    lines = _Lines(text)
    return _Planner(lines, limit).body(tree.body, 0), _default_indent(tree.body, lines)


class _Lines:
    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)

    def offset(self, line: int, column: int) -> int:
        """Offset of CPython's (line, UTF-8 column)."""
        start = self.starts[line - 1]
        head = self.text[start : start + column]
        if not head.isascii():
            head = self.line(line).encode("utf-8", "surrogatepass")[:column].decode("utf-8", "replace")
        return start + len(head)

    def end_of(self, line: int) -> int:
        """Just past line `line`, its line end included."""
        return self.starts[line] if line < len(self.starts) else len(self.text)

    def line(self, line: int) -> str:
        """Line `line` (1-based), its line end included."""
        return self.text[self.starts[line - 1] : self.end_of(line)]

    def blank_or_comment(self, line: int) -> bool:
        text = self.line(line).strip(" \t\r\n\f")
        return not text or text.startswith("#")

    def between(self, first: int, last: int, indent: str) -> bool:
        """Whether lines first..last (1-based, inclusive) are blank or comments, indented no
        deeper than `indent`: the next statement's in a whole parse, as no block above can
        take them into its footer (libcst gives a block the lines up to its last comment or
        blank line indented as deep as the block)."""
        for line in range(first, last + 1):
            content = self.line(line).rstrip("\r\n")
            stripped = content.lstrip(" \t")
            if stripped and not stripped.startswith("#"):
                return False
            if not indent.startswith(content[: len(content) - len(stripped)]):
                return False
        return True


class _Planner:
    def __init__(self, lines: _Lines, limit: int) -> None:
        self.lines = lines
        self.limit = limit

    def body(self, nodes: Sequence[ast.stmt], start: int) -> _Body:
        lines = self.lines
        body = _Body(start)
        previous_end_line = None
        for node in nodes:
            first = first_line(node)
            indent = _BLANK.match(lines.text, lines.starts[first - 1]).group()
            if previous_end_line is None:
                cut, clean = start, True
            else:
                cut = lines.end_of(previous_end_line)
                clean = first > previous_end_line and lines.between(previous_end_line + 1, first - 1, indent)
            statement = _Statement(cut, lines.end_of(node.end_lineno), indent, clean)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                statement.body = self.block(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.Expr)):
                statement.literal = self.literal(node.value)
            body.statements.append(statement)
            previous_end_line = node.end_lineno
        return body

    def block(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> _Body | None:
        """The block of a `def` or `class`, from the line after its header, when it has lines."""
        lines = self.lines
        first = first_line(node.body[0])
        header_end = first - 1  # the header's last line: the last before `first` not blank or a comment
        while header_end > node.lineno and lines.blank_or_comment(header_end):
            header_end -= 1
        if header_end < node.lineno or first <= node.lineno:
            return None  # `def f(): return 1`
        return self.body(node.body, lines.end_of(header_end))

    def literal(self, value: ast.expr | None) -> _Literal | None:
        if isinstance(value, (ast.List, ast.Set)):
            starts: list[ast.expr | None] = list(value.elts)
            values = list(value.elts)
        elif isinstance(value, ast.Dict):
            starts, values = list(value.keys), list(value.values)  # `**other` has no key: no cut before it
        else:
            return None
        lines = self.lines
        text = lines.text
        open_ = lines.offset(value.lineno, value.col_offset)
        if text[open_] not in "[{":
            return None
        if not starts or starts[0] is None:
            return None
        first = lines.offset(starts[0].lineno, starts[0].col_offset)
        if _COMMENT.sub("", text[open_ + 1 : first]).strip(_SPACE):
            return None  # `[(a), b]`: CPython's start of `a` is inside the parenthesis
        end = lines.offset(value.end_lineno, value.end_col_offset)
        found = _Literal(open_, first, end, isinstance(value, ast.Dict), [])
        previous_end = None
        for head, element in zip(starts, values):
            element_end = lines.offset(element.end_lineno, element.end_col_offset)
            if head is not None:
                begin = lines.offset(head.lineno, head.col_offset)
                if (
                    previous_end is not None
                    and _COMMENT.sub("", text[previous_end:begin]).strip(_SPACE) == ","
                ):
                    found.cuts.append(begin)
                if element_end - begin > self.limit:
                    inner = self.literal(element)
                    if inner is not None:
                        found.inner[begin] = inner
            previous_end = element_end
        return found if found.cuts else None


class _NotSimple(Exception):
    pass


def _default_indent(nodes: Sequence[ast.stmt], lines: _Lines) -> str | None:
    """The indentation libcst takes as the module's default: that of its first indented block;
    None when that is not this simple (a `match`, whose cases are indented, or a form feed)."""
    try:
        return _first_indent(nodes, lines) or "    "
    except _NotSimple:
        return None


def _first_indent(nodes: Sequence[ast.stmt], lines: _Lines) -> str | None:
    for node in nodes:
        if isinstance(node, getattr(ast, "Match", ())):
            raise _NotSimple
        handlers = [handler.body for handler in getattr(node, "handlers", ())]
        for block in (
            getattr(node, "body", None),
            *handlers,
            getattr(node, "orelse", None),
            getattr(node, "finalbody", None),
        ):
            if not block or not isinstance(block, list):
                continue
            start = lines.starts[first_line(block[0]) - 1]
            indent = _BLANK.match(lines.text, start).group()
            if lines.text.startswith("\f", start + len(indent)):
                raise _NotSimple
            # Unindented: on its header's line (`if x: y`), or an `elif`, whose blocks count.
            found = indent or _first_indent(block[:1], lines)
            if found:
                return found
    return None


# Parsing the pieces --------------------------------------------------------------------------


def _groups(cuts: list[int], end: int, limit: int) -> list[tuple[int, int]]:
    """Consecutive [start, stop) spans from the allowed cuts to `end`, each the longest that
    fits in `limit`, or one cut to the next when that alone is longer."""
    bounds = [*cuts, end]
    spans = []
    i = 0
    while i < len(cuts):
        k = i + 1
        while k + 1 < len(bounds) and bounds[k + 1] - bounds[i] <= limit:
            k += 1
        spans.append((bounds[i], bounds[k]))
        i = k
    return spans


class _Pieces:
    def __init__(
        self,
        text: str,
        limit: int,
        indent: str,
        *,
        alone: bool = False,
        known: Parsed | None = None,
        parsed: Parsed | None = None,
    ) -> None:
        self.text = text
        self.limit = limit
        self.group = 0 if alone else limit  # the most a piece of several statements may hold
        self.indent = indent
        self.known = known or Parsed()
        self.parsed = parsed
        self.newline = detect_newline(text)  # libcst's default: the first one
        self.first: cst.Module | None = None  # the piece that starts the module: its header
        self.footer: Sequence[cst.EmptyLine] = ()  # of the piece that ends it
        self.latest: cst.Module | None = None

    def block(self, body: _Body, context: tuple[str, ...]) -> list[cst.BaseStatement]:
        """The statements of `body`, under block statements whose lines are indented by `context`
        (none: the module's, whose last piece runs to the end of the text)."""
        statements = body.statements
        end = statements[-1].end if context else len(self.text)
        clean = {s.start: s for s in statements if s.clean_before}
        out: list[cst.BaseStatement] = []
        for start, stop in _groups(list(clean), end, self.group):
            alone = clean[start]
            if stop - start > self.limit and alone.end == stop:
                split = self._statement(alone, context)
                if split is not None:
                    out.append(split)
                    continue
            out.extend(self._parse(self.text[start:stop], context, start))
            if not context and stop == len(self.text):
                self.footer = self.latest.footer
        return out

    def _parse(self, piece: str, context: tuple[str, ...], start: int) -> Sequence[cst.BaseStatement]:
        """The statements of `piece`, the text at `start`, parsed under stand-in blocks for
        `context`. A piece that does not start the module starts with a block indented by the
        module's default, as the module does: libcst records a block's indentation only where
        it differs from the first one."""
        newline = self.newline
        first = start == 0
        preamble = "" if first else f"class _:{newline}{self.indent}pass{newline}"
        wrappers = "".join(f"{indent}class _:{newline}" for indent in context)
        source = preamble + wrappers + piece
        parsed = None
        if self.parsed is not None:
            # A text met twice in this module is parsed twice: no node may stand in two places.
            parsed = None if source in self.parsed.pieces else self.known.pieces.get(source)
        if parsed is None:
            check_depth(source, "<piece>")  # raises TooDeep: the text libcst is given, as a whole text is
            parsed = cst.parse_module(source)
        if self.parsed is not None:
            self.parsed.pieces.setdefault(source, parsed)
        self.latest = parsed
        if first:
            self.first = parsed
        body = parsed.body if first else parsed.body[1:]
        if not context:
            return body
        node = body[0]
        for _ in context[1:]:
            node = node.body.body[0]
        return node.body.body

    def _statement(self, statement: _Statement, context: tuple[str, ...]) -> cst.BaseStatement | None:
        """One statement too large for a piece, cut inside, or None when it cannot be."""
        if statement.body is not None:
            return self._compound(statement, statement.body, context)
        if statement.literal is not None:
            return self._literal(statement, statement.literal, context)
        return None

    def _compound(
        self, statement: _Statement, body: _Body, context: tuple[str, ...]
    ) -> cst.BaseStatement | None:
        """A `def` or `class`: its header over a stand-in block, then its block in pieces."""
        shell = self.text[statement.start : body.start] + body.statements[0].indent + "pass" + self.newline
        nodes = self._parse(shell, context, statement.start)
        if len(nodes) != 1 or not isinstance(nodes[0], (cst.FunctionDef, cst.ClassDef)):
            return None
        node = nodes[0]
        if not isinstance(node.body, cst.IndentedBlock):
            return None
        statements = self.block(body, (*context, statement.indent))
        if self.parsed is None:
            return node.with_changes(body=node.body.with_changes(body=statements))
        before = self.known.joined.get(id(node))
        if (
            before is not None
            and before[0] is node
            and len(before[1]) == len(statements)
            and all(old is new for old, new in zip(before[1], statements))
        ):
            joined = before[2]  # nothing in it changed: the same node, printed already
        else:
            joined = node.with_changes(body=node.body.with_changes(body=statements))
        self.parsed.joined[id(node)] = (node, statements, joined)
        return joined

    def _literal(
        self, statement: _Statement, literal: _Literal, context: tuple[str, ...]
    ) -> cst.BaseStatement | None:
        """The statement with a stand-in for the literal's elements, then the elements in pieces."""
        text = self.text
        spans = _groups([literal.first, *literal.cuts], literal.end, self.limit)
        if len(spans) < 2:
            return None
        closing = text[literal.end - 1]
        shell = (
            text[statement.start : literal.first]
            + _stand_in(literal)
            + closing
            + text[literal.end : statement.end]
        )
        nodes = self._parse(shell, context, statement.start)
        value = _literal_of(nodes[0], last=True) if len(nodes) == 1 else None
        rest = self._elements(literal, spans, statement.indent, context) if value is not None else None
        if value is None or rest is None:
            return None
        line = nodes[0]
        changed = _joined(value, rest)
        return line.with_changes(body=(line.body[0].with_changes(value=changed), *line.body[1:]))

    def _elements(
        self, literal: _Literal, spans: list[tuple[int, int]], indent: str, context: tuple[str, ...]
    ) -> tuple[list[cst.CSTNode], cst.List | cst.Set | cst.Dict] | None:
        """The elements of `literal`, its `spans` parsed each between a leading stand-in and, but
        the last, a trailing one; and the piece whose closing bracket ends the literal. An
        element longer than a piece whose value is a literal is cut the same way inside."""
        text = self.text
        opening, closing = text[literal.open], text[literal.end - 1]
        stand_in = _stand_in(literal)
        elements: list[cst.CSTNode] = []
        ending = None
        for start, stop in spans:
            final = stop == literal.end
            tail = self.newline if final else f"{stand_in}{closing}{self.newline}"
            inner = literal.inner.get(start)
            inner_spans = _groups([inner.first, *inner.cuts], inner.end, self.limit) if inner else []
            if inner is not None and len(inner_spans) > 1 and _alone(text[inner.end : stop], closing):
                # This element with a stand-in for the inner literal's elements.
                head = text[start : inner.first] + _stand_in(inner) + text[inner.end - 1 : stop]
            else:
                inner, head = None, text[start:stop]
            found = self._parse(f"{indent}_ = {opening}{stand_in}, {head}{tail}", context, -1)
            part = _literal_of(found[0], last=False) if len(found) == 1 else None
            if part is None or (not final and _literal_of(found[0], last=True) is None):
                return None
            own = list(part.elements[1:] if final else part.elements[1:-1])
            if inner is not None:
                partial = _literal_of(own[0], last=True) if len(own) == 1 else None
                rest = self._elements(inner, inner_spans, indent, context) if partial is not None else None
                if partial is None or rest is None:
                    return None
                own = [own[0].with_changes(value=_joined(partial, rest))]
            elements.extend(own)
            ending = part
        return (elements, ending) if ending is not None else None


def _stand_in(literal: _Literal) -> str:
    return f"{MARKER}: 0" if literal.dict else MARKER


def _alone(after: str, closing: str) -> bool:
    """Whether the text after an element's value is only what separates it from the next (or
    ends the literal): the element is its span's only one."""
    return _COMMENT.sub("", after).strip(_SPACE + ",") in ("", closing)


def _joined(
    partial: cst.List | cst.Set | cst.Dict, rest: tuple[list[cst.CSTNode], cst.List | cst.Set | cst.Dict]
) -> cst.List | cst.Set | cst.Dict:
    """`partial` without its trailing stand-in, followed by the elements cut off, and closed as
    the last piece is."""
    elements, ending = rest
    closer = "rbracket" if isinstance(partial, cst.List) else "rbrace"
    return partial.with_changes(
        elements=[*partial.elements[:-1], *elements], **{closer: getattr(ending, closer)}
    )


def _literal_of(node: cst.CSTNode, last: bool) -> cst.List | cst.Set | cst.Dict | None:
    """The literal value of a simple statement (or of an element) whose last (else first)
    element is the stand-in."""
    if isinstance(node, cst.SimpleStatementLine):
        node = node.body[0]
    value = getattr(node, "value", None)
    if not isinstance(value, (cst.List, cst.Set, cst.Dict)) or not value.elements:
        return None
    element = value.elements[-1 if last else 0]
    name = element.key if isinstance(element, cst.DictElement) else getattr(element, "value", None)
    return value if isinstance(name, cst.Name) and name.value == MARKER else None
