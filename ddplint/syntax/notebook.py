"""Jupyter notebooks as modules: the code cells, in order, joined into one Python text.

Rows are kept: each cell's lines are the module's lines, so a row of the module maps back to a
(cell, row) pair. IPython syntax (`%magic`, `%%cell magic`, `!shell`, `x?`, `x = !cmd`) does not
parse as Python: each such line reads as `pass` at its indentation (a whole cell under a cell
magic that does not run Python reads as blank lines), and is written back as it was.

Only the notebook's JSON is parsed; its text is kept, and a fix rewrites the `source` value of
the cells it changed and nothing else (indentation, key order, outputs, metadata, escapes).
Imported only when a run holds a notebook.
"""

from __future__ import annotations

import ast
import json
import keyword
import re
import warnings
from dataclasses import dataclass, replace

from ddplint.diagnostics import Applicability, Diagnostic, Fix
from ddplint.syntax.source import SourceError

SUFFIX = ".ipynb"

# Cell magics whose body is Python that IPython runs (as ruff reads them); any other cell magic
# (`%%bash`, `%%writefile`, `%%html`) makes the cell something else.
_PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "prun", "pypy", "python", "python3", "time", "timeit"})
# `x = !ls`, `a, b = %sx ls`: an assignment from a magic or a shell command.
_ASSIGNED_MAGIC = re.compile(r"\s*[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")
# IPython's automagic: a magic or shell alias named without its `%` (`pip install x`, `cd data`).
# Only where Python could not read the line: the name is followed by a word, number, string,
# `~` or `$`, and that word is not a keyword (`time if x else y` is Python).
_AUTOMAGIC = re.compile(
    r"\s*(?:pip|conda|mamba|micromamba|cd|ls|ll|mkdir|rmdir|rm|cp|mv|cat|env|set_env|load_ext|"
    r"reload_ext|autoreload|matplotlib|time|timeit|run|pwd|who|whos|history)[ \t]+([\w'\"~$]+)"
)
# Lines end as Python ends them (not at form feeds or U+2028, as str.splitlines would).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    content: str


class NotebookError(SourceError):
    """A notebook that cannot be read as one; the message says why."""


@dataclass(frozen=True)
class Magic:
    """A line of IPython syntax: where its stand-in is in the module, and the line itself."""

    start: int
    end: int  # the stand-in's end, before its line break
    line: str


@dataclass(frozen=True)
class CodeCell:
    index: int  # position among all the notebook's cells
    number: int  # 1-based, counting code cells only (as ruff does)
    text: str  # the cell's source as stored
    as_list: bool  # stored as a list of lines (nbformat's way) or as one string
    span: tuple[int, int]  # where its `source` value is in the notebook's JSON text
    file_rows: tuple[int, ...]  # the row of the JSON text holding each of its lines


@dataclass(frozen=True)
class Notebook:
    """A notebook's JSON text, its code cells, and where each cell is in the module text."""

    json_text: str
    cells: tuple[CodeCell, ...]
    starts: tuple[int, ...]  # offset of each cell in the module text
    first_rows: tuple[int, ...]  # module row of each cell's first line
    magics: tuple[Magic, ...]

    def locate(self, row: int) -> tuple[int, int]:
        """The (cell number, row in the cell) of a module row."""
        position = 0
        for i, first in enumerate(self.first_rows):
            if first <= row:
                position = i
        if not self.cells:
            return 1, row
        return self.cells[position].number, row - self.first_rows[position] + 1

    def file_row(self, row: int) -> int:
        """The row of the notebook's JSON text that holds a module row (for viewers of the file)."""
        if not self.cells:
            return 1
        number, cell_row = self.locate(row)
        rows = self.cells[number - 1].file_rows
        return rows[min(cell_row, len(rows)) - 1] if rows else 1

    def advise_blocked_fixes(self, diagnostics: list[Diagnostic]) -> None:
        """Turn into advice the fixes `--fix` never applies in a notebook (see `blocks`): they are
        shown, not offered as fixes nor counted as fixable."""
        for d in diagnostics:
            if d.fix is not None and any(self.blocks(e.start, e.end) for e in d.fix.edits):
                d.fix = Fix(Applicability.DISPLAY_ONLY, d.fix.message)

    def blocks(self, start: int, end: int) -> bool:
        """Whether an edit of module[start:end] would change the cell structure (it spans two
        cells, or inserts where one ends and another starts) or touch a line of IPython syntax."""
        for boundary in self.starts[1:]:
            if start < boundary < end or start == end == boundary:
                return True
        for magic in self.magics:
            if start < magic.end and magic.start < end:
                return True
            if start == end and magic.start < start <= magic.end:
                return True
        return False

    def edited(self, edits, text: str) -> Notebook:
        """This notebook after `edits` (none blocked) turned the module into `text`."""

        def moved(offset: int) -> int:
            return offset + sum(len(e.content) - (e.end - e.start) for e in edits if e.end <= offset)

        starts = tuple(moved(s) for s in self.starts)
        magics = tuple(replace(m, start=moved(m.start), end=moved(m.end)) for m in self.magics)
        return replace(self, starts=starts, first_rows=_first_rows(text, starts), magics=magics)

    def relined(self, old: str, new: str) -> Notebook | None:
        """This notebook after `old` became `new` with every row kept and only the ends of rows
        changed (comments added); None when a change touches a line of IPython syntax."""
        old_lines, new_lines = python_lines(old), python_lines(new)
        if len(old_lines) != len(new_lines):
            return None
        edits, offset = [], 0
        for before, after in zip(old_lines, new_lines):
            if before != after:
                edit = _Edit(offset, offset + len(before), after)
                if self.blocks(edit.start, edit.end):
                    return None
                edits.append(edit)
            offset += len(before)
        return self.edited(edits, new)

    def cell_texts(self, module: str) -> list[str]:
        """Each code cell's source as it is to be stored, cut out of the module text."""
        ends = [*self.starts[1:], len(module)]
        out = []
        for cell, start, end in zip(self.cells, self.starts, ends):
            piece = module[start:end]
            for magic in sorted(self.magics, key=lambda m: -m.start):
                if start <= magic.start < end:
                    piece = piece[: magic.start - start] + magic.line + piece[magic.end - start :]
            if cell.text and not cell.text.endswith(("\n", "\r")) and piece.endswith("\n"):
                piece = piece[:-1]  # the line break the module added after the cell
            out.append(piece)
        return out

    def rewritten(self, module: str) -> str:
        """The notebook's JSON text with the cells the module text changed, every other byte kept.

        Raises NotebookError when the result would not be a notebook whose cells all parse."""
        texts = self.cell_texts(module)
        pieces, last = [], 0
        ascii_only = _escapes_non_ascii(self.json_text)
        for cell, text in zip(self.cells, texts):
            if text == cell.text:
                continue
            start, end = cell.span
            pieces += [self.json_text[last:start], _source_value(self.json_text, cell, text, ascii_only)]
            last = end
        result = "".join(pieces) + self.json_text[last:]
        _verify(result, self, texts)
        return result


def read_notebook(json_text: str) -> tuple[str, Notebook]:
    """The module text of a notebook, and its notebook; raises NotebookError."""
    try:
        data = json.loads(json_text)
    except ValueError as exc:
        raise NotebookError(f"not a valid notebook: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise NotebookError("not a valid notebook: the JSON is not an object")
    if data.get("nbformat") != 4:
        raise NotebookError(f"not a valid notebook: nbformat {data.get('nbformat')!r}, not 4")
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise NotebookError("not a valid notebook: no list of cells")
    if not _is_python(data.get("metadata")):
        return "", Notebook(json_text, (), (), (), ())  # another kernel's code: nothing to check
    spans = _source_spans(json_text)
    code: list[CodeCell] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            text = "".join(source)
        elif isinstance(source, str):
            text = source
        else:
            raise NotebookError(f"not a valid notebook: the source of cell {index + 1} is not text")
        span = spans.get(index)
        if span is None:
            raise NotebookError(f"not a valid notebook: cell {index + 1} has no source")
        rows = _file_rows(json_text, span, isinstance(source, list), len(text.splitlines()))
        code.append(CodeCell(index, len(code) + 1, text, isinstance(source, list), span, rows))
    return _joined(json_text, tuple(code))


def _joined(json_text: str, cells: tuple[CodeCell, ...]) -> tuple[str, Notebook]:
    parts: list[str] = []
    starts: list[int] = []
    magics: list[Magic] = []
    offset = 0
    for cell in cells:
        starts.append(offset)
        masked, found = mask_magics(cell.text)
        if cell.text and not cell.text.endswith(("\n", "\r")):
            # Its last line ends here, not in the next cell (a magic's stand-in may be empty).
            masked += "\n"
        magics += [replace(m, start=m.start + offset, end=m.end + offset) for m in found]
        parts.append(masked)
        offset += len(masked)
    module = "".join(parts)
    return module, Notebook(json_text, cells, tuple(starts), _first_rows(module, starts), tuple(magics))


def _first_rows(module: str, starts) -> tuple[int, ...]:
    rows, row, last = [], 1, 0
    for start in starts:
        row += len(_LINE_BREAK.findall(module, last, start))
        last = start
        rows.append(row)
    return tuple(rows)


def mask_magics(cell: str) -> tuple[str, list[Magic]]:
    """The cell with each line of IPython syntax replaced by `pass` at its indentation (a cell
    under a non-Python cell magic: by blank lines), and those lines; offsets within the cell."""
    lines = python_lines(cell)
    head = cell.lstrip()
    if head.startswith("%%"):
        name = head[2:].split(None, 1)[0] if head[2:].strip() else ""
        if name not in _PYTHON_CELL_MAGICS:
            return _blank(lines)
    out: list[str] = []
    magics: list[Magic] = []
    offset = 0
    state = _Scanner()
    continued = False  # the previous line was a magic ending in `\`
    for line in lines:
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        if continued or (state.at_statement_start() and _is_magic(body)):
            indent = body[: len(body) - len(body.lstrip())] if not continued else ""
            stand_in = indent + "pass" if not continued else ""
            magics.append(Magic(offset, offset + len(stand_in), body))
            continued = body.endswith("\\")
            body = stand_in
        else:
            state.feed(body)
        out.append(body + ending)
        offset += len(body) + len(ending)
    return "".join(out), magics


def python_lines(text: str) -> list[str]:
    """`text`'s lines with their line breaks, as Python splits them."""
    return _LINE.findall(text)


def _blank(lines: list[str]) -> tuple[str, list[Magic]]:
    out, magics, offset = [], [], 0
    for line in lines:
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        magics.append(Magic(offset, offset, body))
        out.append(ending)
        offset += len(ending)
    return "".join(out), magics


def _is_magic(line: str) -> bool:
    stripped = line.lstrip()
    if not stripped:
        return False
    if stripped[0] in "%!?":
        return True
    if _ASSIGNED_MAGIC.match(line):
        return True
    automagic = _AUTOMAGIC.match(line)
    if automagic is not None and not keyword.iskeyword(automagic.group(1)):
        return True
    return _Scanner.has_help_mark(line)


class _Scanner:
    """Just enough of Python's tokenizer to know whether a line starts a statement: open
    brackets, unfinished (triple-quoted) strings and backslash continuations carry on."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None  # the triple quote a string left open
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    @staticmethod
    def has_help_mark(line: str) -> bool:
        """A `?` outside strings and comments: IPython's help (`obj?`, `?obj`, `obj??`)."""
        probe = _Scanner()
        return probe.feed(line)

    def feed(self, line: str) -> bool:
        """Read one line; returns whether it had a `?` in code."""
        i, size, question = 0, len(line), False
        while i < size:
            if self.quote is not None:
                end = line.find(self.quote, i)
                while end > 0 and _escaped(line, end):
                    end = line.find(self.quote, end + 1)
                if end == -1:
                    return question
                i, self.quote = end + 3, None
                continue
            char = line[i]
            if char == "#":
                break
            if char in "'\"":
                if line.startswith(char * 3, i):
                    self.quote, i = char * 3, i + 3
                    continue
                end = i + 1
                while end < size and (line[end] != char or _escaped(line, end)):
                    end += 1
                i = end + 1
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            elif char == "?":
                question = True
            i += 1
        self.continued = line.endswith("\\") and not line.rstrip().endswith("#")
        return question


def _escaped(line: str, position: int) -> bool:
    backslashes = 0
    while position - backslashes - 1 >= 0 and line[position - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _is_python(metadata) -> bool:
    if not isinstance(metadata, dict):
        return True
    kernel = metadata.get("kernelspec")
    language = kernel.get("language") if isinstance(kernel, dict) else None
    if language is None:
        info = metadata.get("language_info")
        language = info.get("name") if isinstance(info, dict) else None
    return language is None or str(language).lower() == "python"


def _source_spans(text: str) -> dict[int, tuple[int, int]]:
    """Where the `source` value of each cell is in the JSON text (the text is valid JSON)."""
    spans: dict[int, tuple[int, int]] = {}
    for key, start, _ in _members(text, _skip(text, 0)):
        if key != "cells" or text[start] != "[":
            continue
        for index, (item_start, _) in enumerate(_items(text, start)):
            if text[item_start] != "{":
                continue
            for cell_key, value_start, value_end in _members(text, item_start):
                if cell_key == "source":
                    spans[index] = (value_start, value_end)
    return spans


def _skip(text: str, position: int) -> int:
    return _WHITESPACE.match(text, position).end()


def _members(text: str, position: int):
    """(key, value start, value end) of each member of the object at `position`."""
    position = _skip(text, position + 1)
    while text[position] != "}":
        key, position = json.decoder.scanstring(text, position + 1)
        position = _skip(text, _skip(text, position) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, position)
        yield key, position, end
        position = _skip(text, end)
        if text[position] == ",":
            position = _skip(text, position + 1)


def _items(text: str, position: int):
    position = _skip(text, position + 1)
    while text[position] != "]":
        _, end = _DECODER.raw_decode(text, position)
        yield position, end
        position = _skip(text, end)
        if text[position] == ",":
            position = _skip(text, position + 1)


def _file_rows(text: str, span: tuple[int, int], as_list: bool, count: int) -> tuple[int, ...]:
    start, _ = span
    row = text.count("\n", 0, start) + 1
    if not as_list:
        return (row,) * max(count, 1)
    rows = [row + text.count("\n", start, item) for item, _ in _items(text, start)]
    return tuple(rows) or (row,)


def _escapes_non_ascii(text: str) -> bool:
    """Whether the file writes non-ASCII characters as `\\u` escapes (json's default) rather
    than as they are (nbformat's)."""
    return text.isascii() and "\\u" in text


def _source_value(json_text: str, cell: CodeCell, text: str, ascii_only: bool) -> str:
    """A cell's new `source` value, laid out as the old one was."""
    if not cell.as_list:
        return json.dumps(text, ensure_ascii=ascii_only)
    lines = [json.dumps(line, ensure_ascii=ascii_only) for line in python_lines(text)]
    start, end = cell.span
    old = json_text[start:end]
    if not lines:
        return "[]"
    inner = old[1:-1]
    if inner.strip():  # laid out as its items were
        gap = inner[: len(inner) - len(inner.lstrip())]
        closing = inner[len(inner.rstrip()) :]
        first_end = _DECODER.raw_decode(old, len(gap) + 1)[1]
        after = old[first_end:]
        separator = after[: len(after) - len(after.lstrip(", \t\r\n"))]
        if "," not in separator:
            separator = "," + gap
    else:  # empty before: as nbformat lays a list out, one item a line
        row_start = json_text.rfind("\n", 0, start) + 1
        line = json_text[row_start:start]
        indent = line[: len(line) - len(line.lstrip())]
        gap, closing = "\n" + indent + " ", "\n" + indent
        separator = "," + gap
    return "[" + gap + separator.join(lines) + closing + "]"


def _verify(result: str, before: Notebook, texts: list[str]) -> None:
    """The written notebook must read back as JSON with these cells, each of which parses
    (as Jupyter runs each cell on its own) if it parsed before."""
    try:
        data = json.loads(result)
    except ValueError as exc:
        raise NotebookError(f"the fixed notebook would not be valid JSON ({exc})") from None
    for cell, text in zip(before.cells, texts):
        source = data["cells"][cell.index]["source"]
        stored = "".join(source) if isinstance(source, list) else source
        if stored != text:
            raise NotebookError(f"cell {cell.number} would not be written as fixed")
        if text != cell.text and _parses(cell.text) and not _parses(text):
            raise NotebookError(f"a fix would leave cell {cell.number} unable to parse on its own")


def _parses(cell: str) -> bool:
    masked, _ = mask_magics(cell)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(masked)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True
