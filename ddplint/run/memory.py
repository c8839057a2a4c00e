"""Handing memory that Python has freed back to the system.

A worker that parses a module and sends it away frees the tree, but the C heap keeps the pages
(libcst's parser allocates there too) until the worker exits: a worker that has parsed the
largest modules of a run holds twice what it needs, beside the process that keeps every tree.
glibc's `malloc_trim` gives the free pages back; elsewhere this does nothing.
"""

from __future__ import annotations

import gc

_trim = None  # glibc's malloc_trim once looked up; False where there is none

# While a process builds the trees it keeps, the same happens on a larger scale: libcst's parser
# frees many times the size of each tree once it is built, and the trees built after it fill
# only part of those pages. On all of torch that was 650 MB of 1.6 GB. Given back after every
# this many characters of source parsed: often enough to bound it, rarely enough that the pages
# given back are not needed again at once (each costs a fault when reused).
GIVE_BACK_EVERY = 1024 * 1024
_parsed_since = 0


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


def parsed(size: int) -> None:
    """Note `size` more characters of source whose trees this process built to keep (parsed, or
    unpickled from a worker's); give the freed memory back after every GIVE_BACK_EVERY."""
    global _parsed_since
    _parsed_since += size
    if _parsed_since >= GIVE_BACK_EVERY:
        _parsed_since = 0
        give_back_free_memory()


# A process that checks again and again (the language server, the daemon): the cycle collector's
# full collections walk every object alive, the trees of the modules around the files first:
# every few checks one took 70 ms of a change's 0.2 s on timm's `train.py`. What is alive after
# a check is moved out of its sight (`gc.freeze`), after the first check and then every this
# many: what became garbage meanwhile is collected then.
REFREEZE_AFTER = 50


def settle_heap(checks_done: int) -> None:
    """After a check (`checks_done` before it): freeze what is alive, the first time and every
    REFREEZE_AFTER checks (unfrozen and collected first)."""
    if checks_done % REFREEZE_AFTER == 0:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
