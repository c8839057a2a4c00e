"""Parsing untrusted text without crashing the process.

libcst's parser is native code that recurses once per nesting level: on the main thread's
stack, a few thousand nested brackets or a long `and` chain overflow it and kill the process
with a segmentation fault, which no `except` can catch; well before that it slows down
quadratically. Two guards keep that from happening:

- CPython's own parser (run only to build its symbol table, never to compile or execute; see
  ddplint.syntax.depth) rejects input nested deeper than Python itself accepts, each text before
  libcst is given it (a whole module, or each piece of one parsed in pieces). Such a file cannot
  run either, so it is reported as a syntax error. Its other complaints are ignored: libcst
  knows newer grammar than the running interpreter may.
- libcst then parses on a thread with a large stack, which holds the deepest nesting CPython
  accepts (and far more).
"""

from __future__ import annotations

import re
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, TypeVar

from ddplint.diagnostics import SYNTAX_ERROR, input_error
from ddplint.syntax.depth import TooDeep, check_depth
from ddplint.syntax.lazycst import cst
from ddplint.syntax.reading import LoadError
from ddplint.syntax.source import Source

if TYPE_CHECKING:
    from ddplint.syntax.reparse import DocumentParser

# Virtual memory only: the pages are touched only as deep as the recursion really goes.
PARSER_STACK_BYTES = 512 * 1024 * 1024
# Python frames allowed on that stack, for recursive walks of deep trees (code generation).
DEEP_RECURSION_LIMIT = 60_000
_THREAD_NAME = "ddplint-deep"

_stack_lock = threading.Lock()
T = TypeVar("T")


def python_syntax_error(text: str, filename: str) -> SyntaxError | None:
    """CPython's own complaint about `text`, if it has one: clearer than libcst's token lists
    ("Missing parentheses in call to 'print'"), with the position Python users know."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, filename, "exec", 0x400, dont_inherit=True)
    except SyntaxError as exc:
        return exc
    except (ValueError, OverflowError, RecursionError, MemoryError):
        return None
    return None


def run_with_large_stack(function: Callable[[], T], stack_bytes: int = PARSER_STACK_BYTES) -> T:
    """Run `function` on a thread with a big stack and a high recursion limit; return its result
    or raise its error in the caller's thread. One such call runs at a time."""
    if threading.current_thread().name == _THREAD_NAME:
        return function()  # already on a deep stack
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = function()
        except BaseException as exc:  # handed back to the caller's thread
            outcome["error"] = exc

    with _stack_lock:
        previous_stack = threading.stack_size()
        previous_limit = sys.getrecursionlimit()
        # The limit is per interpreter; the calling thread only waits while it is raised.
        sys.setrecursionlimit(max(previous_limit, DEEP_RECURSION_LIMIT))
        try:
            try:
                threading.stack_size(stack_bytes)
                worker = threading.Thread(target=target, name=_THREAD_NAME, daemon=True)
                worker.start()
            except (ValueError, RuntimeError, MemoryError):
                worker = None  # no thread with that stack on this platform
            finally:
                threading.stack_size(previous_stack)
            if worker is not None:
                worker.join()
        finally:
            sys.setrecursionlimit(previous_limit)
    if worker is None:
        return function()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def parse_module(text: str, filename: str, parser: DocumentParser | None = None) -> cst.Module:
    """libcst's parse, guarded: raises TooDeep, cst.ParserSyntaxError, or returns the module.

    `parser`: the document's earlier parses, whose pieces the edited text may reuse."""
    text = _apart(text)
    return run_with_large_stack(lambda: _parse_unvalidated(text, filename, parser))


def _apart(text: str) -> str:
    """`text`, or an equal copy of it that dies with the parse when it is not ASCII: both parsers
    read it as UTF-8, and CPython keeps that encoding inside the string for as long as it lives
    (beside the text that the run keeps, for a third of torch's source)."""
    if text.isascii():
        return text  # its UTF-8 is the text itself
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


_validate_node = None  # libcst's own, set aside the first time the checks are turned off


def _skip_validation(node: cst.CSTNode) -> None:
    pass


@contextmanager
def unchecked_nodes() -> Iterator[None]:
    """Build nodes without the checks each runs when it is built (`__post_init__`).

    Those checks guard trees built by hand; a node the parser builds from text it accepted, or
    unpickling rebuilds from such a node, cannot fail them (libcst's own source notes they are
    wasted on parsing), and they take a fifth of the parse. The checks are off only while the
    calling thread parses or unpickles, and no other thread builds nodes meanwhile: nodes built
    any other time (fixes) are still checked.
    """
    global _validate_node
    if _validate_node is None:
        _validate_node = cst.CSTNode.__post_init__
    cst.CSTNode.__post_init__ = _skip_validation
    try:
        yield
    finally:
        cst.CSTNode.__post_init__ = _validate_node


def _parse_unvalidated(text: str, filename: str, parser: DocumentParser | None = None) -> cst.Module:
    from ddplint.syntax.pieces import parse_in_pieces
    from ddplint.syntax.sharing import shared_whitespace

    with unchecked_nodes(), shared_whitespace():
        # In pieces, each text libcst is given has its depth checked first (see
        # ddplint.syntax.pieces), as a text parsed whole has: an edited document's reused pieces
        # are not checked again, and CPython reads the whole text once, to find where to cut.
        module = parser.parse(text) if parser is not None else parse_in_pieces(text)
        if module is not None:
            return module
        check_depth(text, filename)
        return cst.parse_module(text)


# A parser message can list every token it expected; keep reports readable.
MAX_MESSAGE_CHARS = 300


_LINE_IN_MESSAGE = re.compile(r"\bline (\d+)")


def parse_source(source: Source, parser: DocumentParser | None = None) -> cst.Module:
    """Parse with libcst; raises LoadError with an E999 diagnostic on a syntax error.

    `parser`: the document's earlier parses, whose pieces the edited text may reuse."""
    try:
        return parse_module(source.text, source.filename, parser)
    except TooDeep as exc:
        raise LoadError(input_error(SYNTAX_ERROR, source.filename, f"cannot parse: {exc}")) from None
    except cst.ParserSyntaxError as exc:
        reason = exc.message.strip() or "syntax error"
        row, column = max(1, exc.raw_line), max(1, exc.raw_column + 1)
        # Not a notebook's own name: Python would read the line of its error from that file,
        # which is JSON, and place the column by it.
        name = source.filename if source.notebook is None else f"<{source.filename}>"
        python = python_syntax_error(source.text, name)
        if python is not None and python.msg:
            # Python agrees the file is broken; its words and position are the familiar ones.
            reason = python.msg
            row, column = max(1, python.lineno or 1), max(1, python.offset or 1)
        if source.notebook is not None:  # Python's `line N` counts the rows of all the cells
            reason = _LINE_IN_MESSAGE.sub(lambda m: source.line_words(int(m.group(1))), reason)
        if len(reason) > MAX_MESSAGE_CHARS:
            reason = reason[: MAX_MESSAGE_CHARS - 1] + "…"
        message = f"cannot parse: {reason}"
        error = input_error(SYNTAX_ERROR, source.filename, message, row, column)
        if source.notebook is not None:
            error.source = source  # to name the cell the row is in
        raise LoadError(error) from None
    except (RecursionError, MemoryError) as exc:
        message = f"cannot parse: nested too deeply ({type(exc).__name__})"
        raise LoadError(input_error(SYNTAX_ERROR, source.filename, message)) from None
