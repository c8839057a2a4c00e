"""Equal whitespace nodes built once, while libcst parses or a tree is unpickled.

About half the nodes of a tree are whitespace (the space after a comma, a line end, an empty
line), and most of them are equal: a run holds the trees of a whole import group, so sharing
them saves a fifth of its memory. Each factory here gives the one node already built with the
same values (a node with a comment is built alone). Nothing keys a position, a finding or a fix
by a whitespace node (fixes edit the text around statements and expressions), and no tree is
changed in place.

libcst's parser builds each node by calling the class named on the `libcst` module:
`shared_whitespace()` names the factories there while it is on. Unpickling calls them directly
(see ddplint.treepickle).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst

_REAL = {
    "SimpleWhitespace": cst.SimpleWhitespace,
    "Newline": cst.Newline,
    "TrailingWhitespace": cst.TrailingWhitespace,
    "EmptyLine": cst.EmptyLine,
}
# Shared nodes by class and field values (nodes by identity); cleared when it grows past this.
LIMIT = 4096
_shared: dict[tuple, cst.CSTNode] = {}
_MISSING = object()  # a field left to its default: built as the class builds it, alone


def simple_whitespace(value=_MISSING) -> cst.SimpleWhitespace:
    if value is _MISSING:
        return _REAL["SimpleWhitespace"]()  # fails as the class does
    return _shared.get((0, value)) or _keep((0, value), _REAL["SimpleWhitespace"](value))


def newline(value=None) -> cst.Newline:
    return _shared.get((1, value)) or _keep((1, value), _REAL["Newline"](value))


def trailing_whitespace(whitespace=_MISSING, comment=None, newline=_MISSING) -> cst.TrailingWhitespace:
    if comment is not None or whitespace is _MISSING or newline is _MISSING:
        return _alone("TrailingWhitespace", whitespace=whitespace, comment=comment, newline=newline)
    key = (2, id(whitespace), id(newline))
    return _shared.get(key) or _keep(key, _REAL["TrailingWhitespace"](whitespace, None, newline))


def empty_line(indent=True, whitespace=_MISSING, comment=None, newline=_MISSING) -> cst.EmptyLine:
    if comment is not None or whitespace is _MISSING or newline is _MISSING:
        return _alone("EmptyLine", indent=indent, whitespace=whitespace, comment=comment, newline=newline)
    key = (3, indent, id(whitespace), id(newline))
    return _shared.get(key) or _keep(key, _REAL["EmptyLine"](indent, whitespace, None, newline))


# (`_shared.get(key) or ...`: a node is always true.)


def _alone(name: str, **fields) -> cst.CSTNode:
    return _REAL[name](**{k: v for k, v in fields.items() if v is not _MISSING})


def _keep(key: tuple, node: cst.CSTNode) -> cst.CSTNode:
    # Keys hold ids of nodes that the shared node keeps alive: no id is reused meanwhile.
    if len(_shared) >= LIMIT:
        _shared.clear()
    _shared[key] = node
    return node


# Each shared class and its factory, which takes the class's fields in order.
FACTORIES = {
    cst.SimpleWhitespace: simple_whitespace,
    cst.Newline: newline,
    cst.TrailingWhitespace: trailing_whitespace,
    cst.EmptyLine: empty_line,
}
_lock = threading.Lock()
_users = 0


@contextmanager
def shared_whitespace() -> Iterator[None]:
    """Let libcst's parser build whitespace through the factories meanwhile."""
    global _users
    with _lock:
        if _users == 0:
            for cls, factory in FACTORIES.items():
                setattr(cst, cls.__name__, factory)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                for name, cls in _REAL.items():
                    setattr(cst, name, cls)


@contextmanager
def sharing_apart() -> Iterator[None]:
    """Nodes the factories build meanwhile are shared among themselves only, not with any tree
    built before or after: a tree read from a file someone else may have written (see
    ddplint.treecache) can then change no node but its own."""
    global _shared
    saved, _shared = _shared, {}
    try:
        yield
    finally:
        _shared = saved
