"""Handing memory that Python has freed back to the system.

A worker that parses a module and sends it away frees the tree, but the C heap keeps the pages
(libcst's parser allocates there too) until the worker exits: a worker that has parsed the
largest modules of a run holds twice what it needs, beside the process that keeps every tree.
glibc's `malloc_trim` gives the free pages back; elsewhere this does nothing.
"""

from __future__ import annotations

_trim = None  # glibc's malloc_trim once looked up; False where there is none


def give_back_free_memory() -> None:
    global _trim
    if _trim is None:
        try:
            import ctypes

            _trim = ctypes.CDLL(None).malloc_trim
        except (ImportError, OSError, AttributeError, TypeError):  # not glibc, or no ctypes
            _trim = False
    if _trim:
        _trim(0)
