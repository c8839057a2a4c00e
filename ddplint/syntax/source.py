"""Reading source files: encoding, BOM and newline style, kept so fixes can write them back."""

from __future__ import annotations

import bisect
import codecs
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ddplint.syntax.notebook import Notebook

# A line ends with `\r\n`, `\r` or `\n`, as Python reads it.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SourceError(Exception):
    """A file that cannot be turned into text; the message says why."""


@dataclass
class Source:
    """The text of one file, and what is needed to write it back byte-for-byte alike."""

    filename: str
    text: str
    encoding: str = "utf-8"
    bom: bool = False
    newline: str = "\n"
    _line_starts: list[int] | None = field(default=None, repr=False)
    # For a Jupyter notebook: its JSON and where its code cells are in `text` (see
    # ddplint.syntax.notebook); `text` is then the cells' Python.
    notebook: Notebook | None = field(default=None, repr=False)

    @classmethod
    def from_bytes(cls, filename: str, data: bytes) -> Source:
        if b"\x00" in data:
            raise SourceError("file contains NUL bytes (binary file?)")
        bom = data.startswith(codecs.BOM_UTF8)
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:
            raise SourceError(_encoding_problem(data, exc)) from None
        if encoding == "utf-8-sig":
            encoding = "utf-8"
        body = data[len(codecs.BOM_UTF8) :] if bom else data
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError as exc:
            row = body.count(b"\n", 0, exc.start) + 1
            byte = body[exc.start]
            raise SourceError(f"not valid {encoding} (byte 0x{byte:02x} on line {row})") from None
        except LookupError as exc:
            raise SourceError(f"cannot decode as {encoding}: {exc}") from None
        return cls(filename, text, encoding, bom, detect_newline(text))

    def forget_text(self, tree) -> None:
        """Free the text until it is asked for again: then it is read back from the file, or,
        if the file changed or went away meanwhile, printed from `tree` (its parse, or anything
        whose `code` prints it when asked).

        A run holds every module of an import group, and most are never shown or fixed: their
        texts were a tenth of the memory of all of torch loaded."""
        if self.notebook is not None:
            return  # read back, the file would be JSON
        text = self.__dict__.pop("text", None)
        if text is not None:
            self.__dict__["_forgotten"] = (len(text), hash(text), tree)

    def __getattr__(self, name: str):
        # Called only for attributes not set: `text` after `forget_text`.
        forgotten = self.__dict__.get("_forgotten")
        if name != "text" or forgotten is None:
            raise AttributeError(name)
        size, digest, tree = forgotten
        try:
            with open(self.filename, "rb") as handle:
                text = Source.from_bytes(self.filename, handle.read()).text
        except (OSError, SourceError):
            text = None
        if text is None or len(text) != size or hash(text) != digest:
            text = tree.code
        self.__dict__["text"] = text
        del self.__dict__["_forgotten"]
        return text

    def __getstate__(self) -> dict:
        # Pickled with its text, never with the tree kept to print it.
        if "_forgotten" not in self.__dict__:
            return self.__dict__
        return {k: v for k, v in self.__dict__.items() if k != "_forgotten"} | {"text": self.text}

    def to_bytes(self, text: str) -> bytes:
        """Encode fixed text the way the original was stored (a notebook: its JSON with the
        cells rewritten; raises SourceError when that cannot be done)."""
        if self.notebook is not None:
            text = self.notebook.rewritten(text)
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            self._line_starts = line_starts(self.text)
        return self._line_starts

    def location(self, offset: int) -> tuple[int, int]:
        """1-based (row, column) of a character offset; columns count code points."""
        starts = self.line_starts
        row = bisect.bisect_right(starts, offset)
        return row, offset - starts[row - 1] + 1

    def offset(self, row: int, column: int) -> int:
        """Inverse of `location`."""
        return self.line_starts[row - 1] + column - 1

    def place(self, row: int) -> str:
        """How a message points at a row: `train.py:12`, or `nb.ipynb:cell 3:2` in a notebook."""
        name = self.filename.replace("\\", "/").rsplit("/", 1)[-1]
        if self.notebook is None or not self.notebook.cells:
            return f"{name}:{row}"
        cell, cell_row = self.notebook.locate(row)
        return f"{name}:cell {cell}:{cell_row}"

    def line_words(self, row: int) -> str:
        """`line 12`, or `cell 3, line 2` in a notebook."""
        if self.notebook is None or not self.notebook.cells:
            return f"line {row}"
        cell, cell_row = self.notebook.locate(row)
        return f"cell {cell}, line {cell_row}"

    def line_text(self, row: int) -> str:
        starts = self.line_starts
        start = starts[row - 1]
        end = starts[row] if row < len(starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")


def _encoding_problem(data: bytes, exc: SyntaxError) -> str:
    """Why tokenize could not settle on an encoding, in words that name the bad byte."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        row = data.count(b"\n", 0, bad.start) + 1
        return (
            f"not valid UTF-8 (byte 0x{data[bad.start]:02x} on line {row}) "
            "and no coding declaration says otherwise"
        )
    return f"bad encoding declaration: {exc}"


def line_starts(text: str) -> list[int]:
    """The offset where each line of `text` starts, as Python splits lines."""
    return [0, *(m.end() for m in _LINE_BREAK.finditer(text))]


def detect_newline(text: str) -> str:
    """The newline of the first line ending, as Python's own tools pick it."""
    i = text.find("\n")
    j = text.find("\r")
    if j != -1 and (i == -1 or j < i):
        return "\r\n" if text[j : j + 2] == "\r\n" else "\r"
    return "\n"
