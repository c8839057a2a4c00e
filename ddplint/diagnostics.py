"""What a run reports: diagnostics, their fixes and the text edits those fixes make."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from ddplint._meta import rule_url

if TYPE_CHECKING:
    from ddplint.syntax.source import Source


class Applicability(str, Enum):
    """How far a fix can be trusted, in ruff's terms."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True, order=True)
class Location:
    row: int  # 1-based
    column: int  # 1-based, in code points


@dataclass(frozen=True)
class Range:
    start: Location
    end: Location  # exclusive: the position just after the last character


@dataclass(frozen=True)
class Edit:
    """Replace source[start:end] (character offsets) with `content`."""

    start: int
    end: int
    content: str


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...] = ()


@dataclass
class Diagnostic:
    code: str
    name: str
    message: str
    filename: str
    location: Location
    end_location: Location
    noqa_row: int
    fix: Fix | None = None
    help: str | None = None
    # Extra lines shown under the snippet, e.g. each rank class's collective timeline.
    notes: list[str] = field(default_factory=list)
    severity: str = "error"
    # The launch configurations it holds under, when not all (see ddplint.settings.DISTRIBUTED_TYPES).
    when: tuple[str, ...] = ()
    # A traceback for internal errors, shown with --verbose.
    detail: str | None = None
    # The text the finding was made in: for snippets and for locating fix edits.
    source: Source | None = field(default=None, repr=False, compare=False)

    @property
    def range(self) -> Range:
        return Range(self.location, self.end_location)

    def edit_location(self, offset: int) -> Location:
        if self.source is None:
            return Location(0, 0)
        return Location(*self.source.location(offset))

    @property
    def _notebook(self):
        notebook = self.source.notebook if self.source is not None else None
        return notebook if notebook is not None and notebook.cells else None

    @property
    def cell(self) -> int | None:
        """The notebook code cell the finding is in (1-based, code cells counted), else None."""
        notebook = self._notebook
        return notebook.locate(self.location.row)[0] if notebook is not None else None

    def shown(self, location: Location) -> Location:
        """A location as it is shown: in a notebook, its row counts from the top of its cell."""
        notebook = self._notebook
        if notebook is None:
            return location
        return Location(notebook.locate(location.row)[1], location.column)

    @property
    def place(self) -> str:
        """`row:column`, or `cell N:row:column` in a notebook, as ruff writes it."""
        start = self.shown(self.location)
        cell = self.cell
        return f"{start.row}:{start.column}" if cell is None else f"cell {cell}:{start.row}:{start.column}"

    @property
    def file_row(self) -> int:
        """The row of the file itself: in a notebook, the row of its JSON holding the line, for
        tools that show findings against the file (code scanning, annotations)."""
        notebook = self._notebook
        return self.location.row if notebook is None else notebook.file_row(self.location.row)

    @property
    def url(self) -> str:
        return rule_url(self.code)

    def sort_key(self) -> tuple:
        return (self.filename, self.location.row, self.location.column, self.code, self.message)


# Codes outside the rule table, for problems with the input rather than the code in it.
IO_ERROR = "E902"
SYNTAX_ERROR = "E999"
INTERNAL_ERROR = "E900"


def input_error(code: str, filename: str, message: str, row: int = 1, column: int = 1) -> Diagnostic:
    """A problem with a file itself (unreadable, not Python); always reported, never fixed."""
    names = {IO_ERROR: "io-error", SYNTAX_ERROR: "syntax-error", INTERNAL_ERROR: "internal-error"}
    loc = Location(row, column)
    return Diagnostic(code, names[code], message, filename, loc, loc, row)
