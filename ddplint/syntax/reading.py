"""Reading a file into a Source, or an E902 diagnostic that says why it cannot be read."""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

from ddplint.diagnostics import IO_ERROR, Diagnostic, input_error
from ddplint.syntax.source import Source, SourceError, detect_newline

# Jupyter notebooks: their code cells are read as one module (see ddplint.syntax.notebook).
NOTEBOOK_SUFFIX = ".ipynb"


class LoadError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def read_source(filename: str, data: bytes | None = None, max_bytes: int = 0) -> Source:
    """Read and decode a file; raises LoadError with an E902 diagnostic when that fails.

    Only regular files are opened (a FIFO named `x.py` would block the run forever), and files
    over `max_bytes` (when it is not 0) are not read at all.
    """
    # A notebook's outputs (images, tables) are not code: its limit is on its code cells.
    notebook = filename.endswith(NOTEBOOK_SUFFIX)
    try:
        if data is None:
            info = os.stat(filename)
            if stat.S_ISDIR(info.st_mode):
                raise LoadError(input_error(IO_ERROR, filename, "is a directory, not a Python file"))
            if not stat.S_ISREG(info.st_mode):
                raise LoadError(
                    input_error(IO_ERROR, filename, "not a regular file (device, FIFO or socket)")
                )
            if max_bytes and info.st_size > max_bytes and not notebook:
                raise LoadError(input_error(IO_ERROR, filename, too_large(info.st_size, max_bytes)))
            data = Path(filename).read_bytes()
        if notebook:
            source = _notebook_source(filename, data)
            size = len(source.text.encode("utf-8"))
            if max_bytes and size > max_bytes:
                reason = too_large(size, max_bytes).replace("the file is", "its code cells are")
                raise LoadError(input_error(IO_ERROR, filename, reason))
            return source
        return Source.from_bytes(filename, data)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise LoadError(input_error(IO_ERROR, filename, f"cannot read file: {reason}")) from None
    except SourceError as exc:
        raise LoadError(input_error(IO_ERROR, filename, f"cannot read file: {exc}")) from None


def _notebook_source(filename: str, data: bytes) -> Source:
    from ddplint.syntax.notebook import NotebookError, read_notebook  # only when a run has one

    bom = data.startswith(codecs.BOM_UTF8)
    try:
        json_text = data[len(codecs.BOM_UTF8) if bom else 0 :].decode("utf-8")
        text, notebook = read_notebook(json_text)
    except UnicodeDecodeError as exc:
        reason = f"not a valid notebook: not UTF-8 (byte 0x{data[exc.start]:02x})"
        raise LoadError(input_error(IO_ERROR, filename, reason)) from None
    except NotebookError as exc:
        raise LoadError(input_error(IO_ERROR, filename, str(exc))) from None
    return Source(filename, text, "utf-8", bom, detect_newline(text), notebook=notebook)


def too_large(size: int, limit: int) -> str:
    mib = 1024 * 1024
    return (
        f"not checked: the file is {size / mib:.1f} MiB, over the {limit / mib:.1f} MiB limit "
        "(raise `max-file-size` in [tool.ddplint], or exclude the file)"
    )
