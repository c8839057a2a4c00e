"""Modules read around the checked files, their trees left unread until a node is asked for.

A check of one file reads the project around it (see ddplint.engine.context_modules): on timm,
`train.py` imports `timm.models`, which imports every model, about 170 modules. The analysis
reads most of them only by name: which functions, classes and imports they define, which calls
each function makes, to what, and whether it may reach a collective. Those facts hold no node,
so a module's facts are kept twice (see ddplint.run.cache.trees): whole, and as a skeleton with
every field that holds a node left out, a twentieth of the cost to read back.

A skeleton's objects are the module's facts from the start (the scopes, calls and loops the
analysis keys its tables by): reading a node field of any of them reads the whole module and
puts its nodes into those same objects, which then become plain facts. So a module is either
never read past its skeleton, or read whole once; what the analysis finds is the same.

A run that checks many modules read back this way puts each back (see `put_back`) once its own
check is done, when nothing kept its nodes (see ddplint.run.group): it then holds the trees of
the modules being checked and of those the analysis simulates, not of every module checked.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass

from ddplint.model.facts import CallSite, Loop, ModuleFacts, Scope

# The fields that hold nodes, left out of a skeleton.
MODULE_NODE_FIELDS = ("tree", "classes", "class_attrs", "unpacked_attrs", "_located")
SCOPE_NODE_FIELDS = ("node", "assignments")
CALL_NODE_FIELDS = ("node",)
LOOP_NODE_FIELDS = ("node", "iter")
# Neither kept nor read back: positions, computed when asked for.
_UNKEPT = ("spans", "_statement_spans")

# The id of the root scope of each skeleton not yet read whole → its module, for as long as
# anything holds the module (an editor session drops modules it no longer needs).
_waiting: weakref.WeakValueDictionary[int, LazyModuleFacts] = weakref.WeakValueDictionary()
# How many skeletons were read whole in this process: for benchmarks and tests.
read_whole = 0


def _awaited(base: type, name: str) -> property:
    """A node field of a skeleton's object: read whole first when not there yet."""
    slot = base.__dict__[name]  # the slot's own descriptor

    def get(self):
        try:
            return slot.__get__(self, base)
        except AttributeError:
            _module_of(self).read_whole()
            return slot.__get__(self, base)

    return property(get, slot.__set__)


class LazyScope(Scope):
    __slots__ = ()
    node = _awaited(Scope, "node")
    assignments = _awaited(Scope, "assignments")


class LazyCallSite(CallSite):
    __slots__ = ()
    node = _awaited(CallSite, "node")


class LazyLoop(Loop):
    __slots__ = ()
    node = _awaited(Loop, "node")
    iter = _awaited(Loop, "iter")


class LazyModuleFacts(ModuleFacts):
    """A module's facts without its tree; `read_whole` fills them in."""

    def __getattr__(self, name: str):
        # Called only for attributes not set: the node fields, until the module is read whole.
        if name not in MODULE_NODE_FIELDS or "_whole" not in self.__dict__:
            raise AttributeError(name)
        self.read_whole()
        return getattr(self, name)

    def __reduce_ex__(self, protocol):
        self.read_whole()  # never kept or sent as a skeleton
        return ModuleFacts.__reduce_ex__(self, protocol)

    def awaiting(self, whole: Callable[[], ModuleFacts]) -> LazyModuleFacts:
        """Make this skeleton wait for `whole`, which reads the same module's facts whole."""
        self.__dict__["_whole"] = whole
        _waiting[id(self.module_scope)] = self
        return self

    def read_whole(self) -> None:
        global read_whole
        whole = self.__dict__.pop("_whole")()
        _fill(self, whole)
        del _waiting[id(self.module_scope)]
        read_whole += 1


SKELETON_CLASSES = (LazyModuleFacts, LazyScope, LazyCallSite, LazyLoop)


def _module_of(obj: Scope | CallSite | Loop) -> LazyModuleFacts:
    scope = obj if isinstance(obj, Scope) else obj.scope
    while scope.parent is not None:
        scope = scope.parent
    return _waiting[id(scope)]


_SCOPE_SLOTS = tuple(Scope.__dict__[name] for name in SCOPE_NODE_FIELDS)
_CALL_SLOTS = tuple(CallSite.__dict__[name] for name in CALL_NODE_FIELDS)
_LOOP_SLOTS = tuple(Loop.__dict__[name] for name in LOOP_NODE_FIELDS)


def _fill(skeleton: LazyModuleFacts, whole: ModuleFacts) -> None:
    """Put the node fields of `whole` into the matching objects of `skeleton` (facts of the same
    text, walked in the same order), and make them plain facts."""
    shape = [(s.name, len(s.calls), len(s.loops)) for s in skeleton.scopes]
    if shape != [(s.name, len(s.calls), len(s.loops)) for s in whole.scopes]:
        raise ValueError(f"{skeleton.filename}: its skeleton and its facts differ")  # nothing changed
    for mine, theirs in zip(skeleton.scopes, whole.scopes):
        for slot in _SCOPE_SLOTS:
            slot.__set__(mine, slot.__get__(theirs, Scope))
        for call, their_call in zip(mine.calls, theirs.calls):
            for slot in _CALL_SLOTS:
                slot.__set__(call, slot.__get__(their_call, CallSite))
            call.__class__ = CallSite
        for loop, their_loop in zip(mine.loops, theirs.loops):
            for slot in _LOOP_SLOTS:
                slot.__set__(loop, slot.__get__(their_loop, Loop))
            loop.__class__ = Loop
        mine.__class__ = Scope
    for name in MODULE_NODE_FIELDS:
        skeleton.__dict__[name] = whole.__dict__[name]
    skeleton.__class__ = ModuleFacts
    _emptied(whole)


def _emptied(facts: ModuleFacts) -> None:
    """Clear the objects of facts whose nodes went into a skeleton. They refer to one another
    (a function to its calls, each call back to its function): left as they are, they would
    wait, with every node, for the cycle collector, which a run keeps paused (see
    ddplint.run.group.collector_paused); cleared, they are freed at once."""
    for scope in facts.scopes:
        for obj in (*scope.calls, *scope.loops, scope):
            for slot in type(obj).__slots__:
                if hasattr(obj, slot):  # some are left unset
                    delattr(obj, slot)
    facts.__dict__.clear()


@dataclass(frozen=True, slots=True)
class WayBack:
    """What makes a module read whole the skeleton it was again (see `put_back`)."""

    keys: frozenset[str]  # the attributes the skeleton had
    whole: Callable[[], ModuleFacts]  # reads it whole


def way_back(facts: ModuleFacts) -> WayBack | None:
    """For a skeleton not read whole yet: what puts it back once it is; None for a module that
    is not a skeleton (loaded whole, or read whole already)."""
    if type(facts) is not LazyModuleFacts:
        return None
    state = facts.__dict__
    return WayBack(frozenset(state) - {"_whole"}, state["_whole"])


def put_back(facts: ModuleFacts, back: WayBack) -> None:
    """Make a module read whole a skeleton again, in the same objects (the inverse of `_fill`):
    its nodes go, with whatever it computed from them, and the next node asked for reads it
    whole again, as other nodes. So only for a module whose nodes nothing else holds."""
    if type(facts) is not ModuleFacts:
        raise TypeError(f"{facts.filename}: only a module read whole goes back to its skeleton")
    for scope in facts.scopes:
        for call in scope.calls:
            del call.node
            call.__class__ = LazyCallSite
        for loop in scope.loops:
            del loop.node, loop.iter
            loop.__class__ = LazyLoop
        del scope.node, scope.assignments
        scope.__class__ = LazyScope
    for name in [name for name in vars(facts) if name not in back.keys]:
        delattr(facts, name)
    facts.__class__ = LazyModuleFacts
    facts.awaiting(back.whole)


# Pickling a module's facts as a skeleton ---------------------------------------------------


def skeleton_object(cls: type):
    """An empty object of one of the skeleton classes, for the unpickler to fill."""
    if cls not in SKELETON_CLASSES:
        raise TypeError(f"{cls!r} is not a skeleton class")
    return cls.__new__(cls)


def _without(obj: Scope | CallSite | Loop, lazy: type, left_out: tuple[str, ...]):
    slots = {f: getattr(obj, f) for f in type(obj).__dataclass_fields__ if f not in left_out}
    return (skeleton_object, (lazy,), (None, slots))


def skeleton_reducers() -> dict[type, Callable]:
    """A pickler's dispatch table entries that pickle a module's facts as its skeleton."""

    def module(facts: ModuleFacts):
        state = {
            k: v
            for k, v in vars(facts).items()
            if k not in MODULE_NODE_FIELDS and k not in _UNKEPT and k != "source"
        }
        return (skeleton_object, (LazyModuleFacts,), state)

    return {
        ModuleFacts: module,
        Scope: lambda scope: _without(scope, LazyScope, SCOPE_NODE_FIELDS),
        CallSite: lambda call: _without(call, LazyCallSite, CALL_NODE_FIELDS),
        Loop: lambda loop: _without(loop, LazyLoop, LOOP_NODE_FIELDS),
    }
