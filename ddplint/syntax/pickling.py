"""Pickling parsed modules fast, for the worker processes that help load a group (see
ddplint.run.shared_load).

libcst's nodes pickle through a `__getstate__` that asks `dataclasses.fields` of every node,
and unpickle through a `__setstate__` that sets each field in Python: pickling a module cost
two thirds of parsing it. Here a node pickles as its class and its field values, read in one
`attrgetter` call, and unpickles by a call of its class (of a factory sharing equal whitespace,
see ddplint.syntax.sharing), with the node checks off as for parsing (see
ddplint.syntax.parse.unchecked_nodes).
"""

from __future__ import annotations

import copyreg
import dataclasses
import io
import operator
import pickle
from typing import Any, Callable

import libcst as cst

from ddplint.syntax.parse import unchecked_nodes
from ddplint.syntax.sharing import FACTORIES

_table: dict[type, Callable] | None = None


def dumps(obj: Any) -> bytes:
    """`pickle.dumps`, with libcst's nodes pickled as described above."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _dispatch_table()
    pickler.dump(obj)
    return out.getvalue()


def loads(blob: bytes) -> Any:
    with unchecked_nodes():
        return pickle.loads(blob)


def _dispatch_table() -> dict[type, Callable]:
    global _table
    if _table is None:
        table = dict(copyreg.dispatch_table)
        for kind in _node_classes():
            reducer = _reducer(kind)
            if reducer is not None:
                table[kind] = reducer
        _table = table
    return _table


def _node_classes() -> set[type]:
    found: set[type] = set()
    stack: list[type] = [cst.CSTNode]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                stack.append(sub)
    return found


def _reducer(kind: type) -> Callable | None:
    """How nodes of `kind` pickle: its class called with its field values; None (pickled as
    libcst does) for an abstract class or one whose fields its constructor does not take in order."""
    if not dataclasses.is_dataclass(kind) or "__slots__" not in kind.__dict__:
        return None
    fields = dataclasses.fields(kind)
    if any(not f.init or f.kw_only for f in fields):
        return None
    names = tuple(f.name for f in fields)
    if not names:
        return lambda node: (kind, ())
    if len(names) == 1:
        get_one = operator.attrgetter(names[0])
        values: Callable = lambda node: (get_one(node),)  # noqa: E731
    else:
        values = operator.attrgetter(*names)
    build = FACTORIES.get(kind, kind)  # whitespace: shared (see ddplint.syntax.sharing)
    return lambda node: (build, values(node))
