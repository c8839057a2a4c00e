"""Taking a function's summary from an earlier analysis when replaying its questions proves it.

A simulation reads the world only through the questions it asks the analysis (see
ddplint.analysis.divergence.results.Summaries): what a call runs, a callee's summary, a class
attribute's value, a function's flags. Everything else it reads is the function's own tree and
the objects those answers name, which never change (a changed file is parsed into new objects).
So a summary is a function of its key, the values its parameters were bound to, and the answers
to its questions in order. An editor checks one file again and again: the server and the flake8
daemon record each simulation's questions, and the next check of the same project asks them
again, in order, in the same place of its own run; when every answer is the same object, or a
value made of the same objects, the earlier summary is what the simulation would produce, and
is taken. The first answer that differs ends the replay and the function is simulated (the
questions asked so far leave what the simulation would have left: it asks them first).
"""

from __future__ import annotations

from dataclasses import fields
from enum import Enum
from typing import Any

from ddplint.analysis.divergence.domain import OriginLabel, Val
from ddplint.analysis.divergence.results import Summary

# Questions whose answer follows from their arguments alone (the settings are the same for the
# whole analysis): not recorded.
_PURE = frozenset({"string_value", "library_call"})
_PLAIN = (str, int, float, bytes, Enum, type(None))
_VALUES = (Val, Summary)

Question = tuple[str, tuple, dict, Any]  # method, positional and keyword arguments, answer


class Recorder:
    """The analysis as one simulation sees it, each question and its answer written down in
    the order asked."""

    def __init__(self, analysis: Any, log: list[Question]) -> None:
        self._analysis = analysis
        self._log = log

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._analysis, name)
        if name in _PURE:
            return method
        log = self._log

        def asked(*args: Any, **kwargs: Any) -> Any:
            answer = method(*args, **kwargs)
            log.append((name, args, kwargs, answer))
            return answer

        setattr(self, name, asked)  # looked up once per simulation
        return asked


def answers_hold(analysis: Any, log: list[Question]) -> bool:
    """Ask `analysis` the recorded questions in order; whether every answer is the same."""
    # Stops at the first answer that differs: the simulation asks no further question alike.
    return all(same(getattr(analysis, name)(*args, **kwargs), answer) for name, args, kwargs, answer in log)


def same(a: Any, b: Any) -> bool:
    """Whether `a` and `b` are the same to a simulation: the same object, or plain values,
    tuples, abstract values and summaries made of the same objects. Nodes, modules, functions,
    the operations of a sequence and the labels of values' origins count only as themselves: a
    label names a line, and the edited file keeps the nodes of the statements an edit left
    alone, at other lines when the edit added or removed some above them."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, _PLAIN):
        return a == b
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (frozenset, set)):
        return a == b  # of parameter positions and names
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, OriginLabel):
        return False
    if isinstance(a, _VALUES):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in fields(a))
    return False
