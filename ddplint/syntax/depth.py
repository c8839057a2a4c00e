"""The first guard of a parse (see ddplint.syntax.parse): does CPython's own parser accept the
nesting of a text? Run only to build its symbol table, never to compile or execute.
"""

from __future__ import annotations

import symtable
import sys
import warnings

# The recursion limit of a Python process that runs a file: input nested deeper than it allows
# cannot run either.
PYTHON_RECURSION_LIMIT = 1000

# What CPython says when input is nested beyond what it can parse.
_TOO_DEEP_MESSAGES = ("too many nested parentheses", "too complex", "too many nested")


class TooDeep(Exception):
    """The text is nested deeper than Python itself can parse."""


# Texts CPython's parser already accepted in this process (see ddplint.run.outline): no need to ask again.
_accepted: set[tuple[int, int]] = set()


def accepted_key(text: str) -> tuple[int, int]:
    # `hash` is salted per interpreter: keys noted by a forked worker hold; others just miss.
    return (len(text), hash(text))


def note_accepted(key: tuple[int, int]) -> None:
    _accepted.add(key)


def check_depth(text: str, filename: str) -> None:
    """Raise TooDeep when CPython's parser gives up on the nesting of `text`, under the recursion
    limit Python runs a file with (also when asked from the deep parsing thread, whose raised
    limit would let far deeper input through: see ddplint.syntax.parse.run_with_large_stack)."""
    if accepted_key(text) in _accepted:
        return
    limit = sys.getrecursionlimit()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes etc.: not ours to report
            sys.setrecursionlimit(min(limit, PYTHON_RECURSION_LIMIT))
            # Parsing and naming only: as strict on nesting as building the AST (the same limits
            # to within two levels), a third cheaper, as it builds no Python object per node.
            symtable.symtable(text, filename, "exec")
    except RecursionError:
        raise TooDeep("nested too deeply for Python's parser (RecursionError)") from None
    except MemoryError:
        raise TooDeep("nested too deeply for Python's parser (parser stack overflow)") from None
    except SyntaxError as exc:
        message = str(exc.msg or "")
        if any(m in message for m in _TOO_DEEP_MESSAGES):
            raise TooDeep(f"nested too deeply for Python's parser ({message})") from None
    except (ValueError, OverflowError):
        pass  # e.g. NUL bytes: rejected earlier; libcst gives the real verdict
    finally:
        sys.setrecursionlimit(limit)
