"""Equal nodes built once, while libcst parses or a tree is unpickled.

A run holds the trees of a whole import group, and most of their nodes repeat: whitespace (the
space after a comma, a line end, an empty line), punctuation and operators made of that
whitespace (a comma, a dot, a `+`), and the text of names (`self`, `torch`, `x`, each its own
string object as the parser builds it). Each factory here gives the one node already built from
the same values (a node holding a comment is built alone), and names' text is interned. On the
trees of torch's distributed package, sharing whitespace saved a fifth of their memory, and the
rest took them from 74 to 55 MB (a quarter) at no cost in parsing time. Nothing keys a finding
or a fix by such a node: fixes edit the text around statements and expressions, and positions
are read only for those (a shared operator's position is that of its last place, and nothing
asks for it). No tree is changed in place.

libcst's parser builds each node by calling the class named on the `libcst` module:
`shared_whitespace()` names the factories there while it is on. Unpickling calls the whitespace
factories directly (see ddplint.syntax.pickling); the rest comes back shared within its tree, as a
pickle holds each object once.
"""

from __future__ import annotations

import dataclasses
import operator
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst

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


def interned_name(value, lpar=(), rpar=()) -> cst.Name:
    """A Name node of its own (its position matters), holding the one copy of its text."""
    return _REAL["Name"](sys.intern(value) if type(value) is str else value, lpar, rpar)


def parenthesized_whitespace(
    first_line=_MISSING, empty_lines=_MISSING, indent=_MISSING, last_line=_MISSING
) -> cst.ParenthesizedWhitespace:
    """A line break inside brackets; shared when no blank or comment line follows it."""
    if first_line is _MISSING or indent is _MISSING or last_line is _MISSING or empty_lines:
        return _alone(
            "ParenthesizedWhitespace",
            first_line=first_line,
            empty_lines=empty_lines,
            indent=indent,
            last_line=last_line,
        )
    key = (4, id(first_line), indent, id(last_line))
    return _shared.get(key) or _keep(key, _REAL["ParenthesizedWhitespace"](first_line, (), indent, last_line))


def _punctuation_factory(kind: type, fields: tuple[str, ...]):
    """A factory for `kind`, a token whose every field is the whitespace around it (`,`, `.`,
    `+`, `not in`): one node per class and whitespace nodes. libcst's parser names every field."""
    count = len(fields)
    values = operator.itemgetter(*fields)

    def build(*args, **named):
        if args or len(named) != count:
            return kind(*args, **named)  # fails, or builds, as the class does
        try:
            found = values(named)
        except KeyError:
            return kind(**named)
        key = (kind, id(found)) if count == 1 else (kind, *map(id, found))
        return _shared.get(key) or _keep(key, kind(**named))

    return build


def _punctuation_classes() -> dict[type, tuple[str, ...]]:
    """libcst's node classes made of nothing but the whitespace around a token."""
    found = {}
    for kind in vars(cst).values():
        # Read from the class's bases, not `issubclass`: the ABC's check costs milliseconds here.
        if isinstance(kind, type) and cst.CSTNode in kind.__mro__ and dataclasses.is_dataclass(kind):
            fields = tuple(f.name for f in dataclasses.fields(kind))
            if fields and all(f.startswith("whitespace_") for f in fields):
                found[kind] = fields
    return found


# Each shared class and its factory, which takes the class's fields in order: used by the parser
# and by unpickling. (A pickle keeps the other sharing below within its tree by itself.)
FACTORIES = {
    cst.SimpleWhitespace: simple_whitespace,
    cst.Newline: newline,
    cst.TrailingWhitespace: trailing_whitespace,
    cst.EmptyLine: empty_line,
}
# What the parser builds through factories: the above, and the nodes only a parse needs to share.
WHILE_PARSING = {
    **FACTORIES,
    cst.ParenthesizedWhitespace: parenthesized_whitespace,
    cst.Name: interned_name,
    **{kind: _punctuation_factory(kind, fields) for kind, fields in _punctuation_classes().items()},
}
_REAL = {kind.__name__: kind for kind in WHILE_PARSING}
_lock = threading.Lock()
_users = 0


@contextmanager
def shared_whitespace() -> Iterator[None]:
    """Let libcst's parser build whitespace through the factories meanwhile."""
    global _users
    with _lock:
        if _users == 0:
            for cls, factory in WHILE_PARSING.items():
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
    ddplint.run.cache.trees) can then change no node but its own."""
    global _shared
    saved, _shared = _shared, {}
    try:
        yield
    finally:
        _shared = saved
