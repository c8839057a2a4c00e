"""Where a value comes from: the global rank, the local rank, or per-process randomness.

A small, fact-based question (no simulation): `rank = int(os.environ["RANK"])`, a parameter
whose every caller passes `dist.get_rank()`, `rank % torch.cuda.device_count()`. Used by the
rules that care *which* rank a value is (device selection) or whether it differs per process
at all (sampler seeds).
"""

from __future__ import annotations

from dataclasses import dataclass

from ddplint.model.catalogue import IN_PLACE_OUTPUT
from ddplint.model.expressions import assignment_target, bound_values, returned_values
from ddplint.model.facts import CallSite, ModuleFacts, Scope
from ddplint.model.names import dotted_name
from ddplint.model.project import index_calls
from ddplint.syntax.lazycst import cst

GLOBAL, LOCAL, RANDOM = "global rank", "local rank", "per-process randomness"

# Environment variables set by launchers (torchrun, SLURM, Open MPI, MPICH/PMI).
GLOBAL_RANK_ENV = frozenset({"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
LOCAL_RANK_ENV = frozenset({"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"})
GLOBAL_RANK_CALLS = frozenset({"torch.distributed.get_rank", "torch_xla.core.xla_model.get_ordinal"})
LOCAL_RANK_CALLS = frozenset(
    {"torch.distributed.get_node_local_rank", "torch_xla.core.xla_model.get_local_ordinal"}
)
# Helpers named like these, when their source is not part of the run (`comm.get_rank()`).
GLOBAL_RANK_HELPERS = frozenset({"get_rank", "get_global_rank", "get_world_rank"})
LOCAL_RANK_HELPERS = frozenset({"get_local_rank", "get_node_local_rank", "get_local_ordinal"})
# Attributes of a configuration object (`args.rank`) when nothing in view assigns them.
GLOBAL_RANK_ATTRS = frozenset({"rank", "global_rank", "world_rank"})
LOCAL_RANK_ATTRS = frozenset({"local_rank", "gpu", "local_process_index", "device_id", "gpu_id"})
RANDOM_CALLS = frozenset(
    {
        "time.time",
        "time.time_ns",
        "time.perf_counter",
        "time.monotonic",
        "os.getpid",
        "os.urandom",
        "random.random",
        "random.randint",
        "random.randrange",
        "random.getrandbits",
        "secrets.randbits",
        "secrets.randbelow",
        "uuid.uuid4",
        "numpy.random.randint",
        "numpy.random.rand",
        "numpy.random.random",
        "torch.randint",
        "torch.rand",
        "torch.seed",
        "torch.initial_seed",
        "datetime.datetime.now",
    }
)
SPAWN_CALLS = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes"})


def source_names() -> frozenset[str]:
    """What code must spell to make a value a rank (see ddplint.run.prefilter: a definition spelling
    none of these, and naming none that does, passes its callees no rank)."""
    return frozenset(
        {
            *GLOBAL_RANK_ENV,
            *LOCAL_RANK_ENV,
            *GLOBAL_RANK_CALLS,
            *LOCAL_RANK_CALLS,
            *GLOBAL_RANK_HELPERS,
            *LOCAL_RANK_HELPERS,
            *GLOBAL_RANK_ATTRS,
            *LOCAL_RANK_ATTRS,
            *SPAWN_CALLS,
        }
    )


MAX_DEPTH = 6


@dataclass(frozen=True)
class Origin:
    kind: str  # GLOBAL, LOCAL or RANDOM
    source: str  # the expression it comes from, as written: "dist.get_rank()"
    where: str  # "train.py:8"


class Origins:
    """Answers for one project; callers of each function are indexed once."""

    # Calls and modules, no node (see Project.extent); `_frames` holds nodes while it follows
    # a value, and is empty again after.
    NODE_FREE = frozenset({"_callers", "_own_callers", "_modules", "_spawned"})

    def __init__(self, project) -> None:
        self.project = project
        self._callers: dict[int, list[tuple[ModuleFacts, CallSite]]] | None = None
        self._own_callers: dict[str, dict[int, list[tuple[ModuleFacts, CallSite]]]] = {}
        self._modules: dict[int, ModuleFacts] | None = None  # by the id of its module scope
        self._spawned: set[int] | None = None
        # The calls being followed into their callees, innermost last: (callee, call, the
        # caller's facts, the caller's scope). A callee's parameter is what its call passes.
        self._frames: list[tuple[Scope, cst.Call, ModuleFacts, Scope]] = []

    # Exact origin: the value *is* a rank (through names, int(), a parameter, a helper) ---------

    def of(
        self,
        facts: ModuleFacts,
        scope: Scope,
        node: cst.BaseExpression,
        *,
        derived: bool = False,
        depth: int = 0,
    ) -> Origin | None:
        """The origin of `node`'s value; with `derived`, also of values computed from one
        (`seed + rank`, `rank % 2`), which is what matters when any per-rank difference counts."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(node, cst.Call):
            return self._call(facts, scope, node, derived, depth)
        if isinstance(node, cst.Subscript):
            key = _env_key(node)
            if key is not None:
                return self._env(facts, node, key)
            if not derived:
                return None
            # `seeds[local_rank]`: the item a rank picks differs per rank, whatever the list holds
            found = self.of(facts, scope, node.value, derived=True, depth=depth + 1)
            for element in node.slice:
                index = getattr(element.slice, "value", None)
                if found is None and index is not None:
                    found = self.of(facts, scope, index, derived=True, depth=depth + 1)
            return found
        if isinstance(node, cst.IfExp):
            return _agree(
                [
                    self.of(facts, scope, arm, derived=derived, depth=depth + 1)
                    for arm in (node.body, node.orelse)
                    if not _constant(arm)
                ]
            )
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Modulo) and not derived:
                # `rank % torch.cuda.device_count()`: an index on this node, the usual local rank.
                left = self.of(facts, scope, node.left, depth=depth + 1)
                return Origin(LOCAL, left.source, left.where) if left is not None else None
            if not derived:
                return None
            for side in (node.left, node.right):
                found = self.of(facts, scope, side, derived=True, depth=depth + 1)
                if found is not None:
                    return found
            return None
        if isinstance(node, cst.UnaryOperation) and derived:
            return self.of(facts, scope, node.expression, derived=True, depth=depth + 1)
        name = dotted_name(node)
        if name is not None:
            return self._name(facts, scope, node, name, derived, depth)
        return None

    def _call(self, facts, scope, node: cst.Call, derived: bool, depth: int) -> Origin | None:
        func = dotted_name(node.func)
        qualified = facts.imports.resolve_dotted(func) if func else None
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if qualified in ("int", "str", "round", "abs") and len(positional) == 1:
            return self.of(facts, scope, positional[0].value, derived=derived, depth=depth + 1)
        if qualified in GLOBAL_RANK_CALLS and not node.args:
            return Origin(GLOBAL, facts.code(node), facts.place_of(node))
        if qualified in LOCAL_RANK_CALLS:
            return Origin(LOCAL, facts.code(node), facts.place_of(node))
        if qualified in RANDOM_CALLS or (qualified or "").startswith(("random.", "numpy.random.")):
            # Randomness makes a value differ per process, but never makes it a rank.
            return Origin(RANDOM, facts.code(node), facts.place_of(node)) if derived else None
        if qualified in ("os.environ.get", "os.getenv") and positional:
            key = _string(positional[0].value)
            if key is not None:
                return self._env(facts, node, key)
            return None
        if isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            if method == "item" and derived:  # `torch.randint(...).item()`
                return self.of(facts, scope, node.func.value, derived=True, depth=depth + 1)
        if qualified is None:
            return None
        target = self.project.resolve_name(facts, scope, qualified)
        if target is not None:
            callee_facts, callee = target
            returned = [v for v in returned_values(callee) if not _constant(v)]
            self._frames.append((callee, node, facts, scope))
            try:
                return _agree(
                    [self.of(callee_facts, callee, v, derived=derived, depth=depth + 1) for v in returned]
                )
            finally:
                self._frames.pop()
        last = qualified.rsplit(".", 1)[-1]
        if last in GLOBAL_RANK_HELPERS and not node.args:
            return Origin(GLOBAL, facts.code(node), facts.place_of(node))
        if last in LOCAL_RANK_HELPERS:
            return Origin(LOCAL, facts.code(node), facts.place_of(node))
        return None

    def _env(self, facts, node, key: str) -> Origin | None:
        if key in GLOBAL_RANK_ENV:
            return Origin(GLOBAL, facts.code(node), facts.place_of(node))
        if key in LOCAL_RANK_ENV:
            return Origin(LOCAL, facts.code(node), facts.place_of(node))
        return None

    def _name(self, facts, scope, node, name: str, derived: bool, depth: int) -> Origin | None:
        values = bound_values(facts, scope, name)
        if values is None:  # a parameter
            head = name.split(".", 1)[0]
            if head != name:
                return self._attribute(facts, scope, node, name, derived, depth)
            for level in range(len(self._frames) - 1, -1, -1):
                if self._frames[level][0] is scope:
                    return self._passed(level, name, derived, depth + 1)
            return self.parameter(facts, scope, name, derived=derived, depth=depth + 1)
        if not values:
            return self._attribute(facts, scope, node, name, derived, depth) if "." in name else None
        owner = _assigning_scope(facts, scope, name)
        found = []
        for value in values:
            where = owner.get(id(value), scope)
            if derived and _agreed_in_place(facts, where, name, value, values):
                continue  # `dist.broadcast(seed, src=0)`: every rank holds rank 0's draw
            value = _unpacked(where, value, name)
            if value is not None and not _constant(value) and value is not node:
                found.append(self.of(facts, where, value, derived=derived, depth=depth + 1))
        if derived and found and all(o is not None and o.kind != RANDOM for o in found):
            return found[0]  # a rank on every path, global or local: it differs per rank either way
        return _agree(found)

    def _attribute(self, facts, scope, node, name: str, derived: bool, depth: int) -> Origin | None:
        """`args.rank` on a parameter: what the module's functions store in it, else its name;
        `self.rank` that no method stores: what the class body declares."""
        stored = [
            (scope, value)
            for scope in facts.scopes
            for value in scope.assignments.get(name, ())
            if not _constant(value)
        ]
        if stored and not derived:  # a seed stored per rank may be stored after its use: not guessed
            return _agree([self.of(facts, s, v, derived=derived, depth=depth + 1) for s, v in stored])
        head, _, attr = name.partition(".")
        if not stored and head == "self" and "." not in attr and scope.class_name is not None:
            declared = self.project.class_field(facts, scope.class_name, attr)
            if declared is not None:
                return self._declared(*declared, derived=derived, depth=depth + 1)
        if not stored and head in scope.params and depth < MAX_DEPTH:
            given = self._stored_before_call(scope, head, attr, derived, depth + 1)
            if given is not None:
                return given
        return _attribute(facts, node, name)

    def _stored_before_call(self, scope, param: str, attr: str, derived: bool, depth: int) -> Origin | None:
        """`flags.seed` where every caller passes a namespace whose `seed` it set before the call
        (`flags.seed = worker_seeds[local_rank]` in main.py, then `get_data_loaders(flags)`)."""
        found = []
        for caller_facts, call in self.callers(scope):
            arg = _argument(call.node, param, _position(scope, param))
            passed = dotted_name(arg) if arg is not None else None
            if passed is None or "." in passed:
                continue
            # Lines within the caller's function alone: its module may have nothing to report,
            # and the positions of a whole module cost far more than one function's.
            line = caller_facts.line_in(call.node, call.scope)
            for value in call.scope.assignments.get(f"{passed}.{attr}", ()):
                if caller_facts.line_in(value, call.scope) < line and not _constant(value):
                    found.append(self.of(caller_facts, call.scope, value, derived=derived, depth=depth))
        return _agree(found) if found else None

    def _declared(self, facts, value: cst.BaseExpression, derived: bool, depth: int) -> Origin | None:
        """A class field's value: `Field(default_factory=get_rank)` (pydantic) and
        `field(default_factory=...)` (dataclasses) call their factory; anything else is the value."""
        module = facts.module_scope
        if isinstance(value, cst.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] in (
            "Field",
            "field",
        ):
            factory = _argument(value, "default_factory", -1)
            if isinstance(factory, cst.Lambda):
                return self.of(facts, module, factory.body, derived=derived, depth=depth)
            if factory is not None:
                return self._factory(facts, factory, derived, depth)
            value = _argument(value, "default", 0)
        if value is None or _constant(value):
            return None
        return self.of(facts, module, value, derived=derived, depth=depth)

    def _factory(self, facts, factory: cst.BaseExpression, derived: bool, depth: int) -> Origin | None:
        """What calling `factory` with no argument returns."""
        spelled = dotted_name(factory)
        qualified = facts.imports.resolve_dotted(spelled) if spelled else None
        if qualified is None:
            return None
        if qualified in GLOBAL_RANK_CALLS:
            return Origin(GLOBAL, f"{facts.code(factory)}()", facts.place_of(factory))
        if qualified in LOCAL_RANK_CALLS:
            return Origin(LOCAL, f"{facts.code(factory)}()", facts.place_of(factory))
        target = self.project.resolve_name(facts, facts.module_scope, qualified)
        if target is None:
            return None
        callee_facts, callee = target
        returned = [v for v in returned_values(callee) if not _constant(v)]
        return _agree([self.of(callee_facts, callee, v, derived=derived, depth=depth + 1) for v in returned])

    # Parameters: what the followed call passes, else what every caller passes ------------------

    def _passed(self, level: int, name: str, derived: bool, depth: int) -> Origin | None:
        """The origin of what the call at `self._frames[level]` passes for parameter `name`."""
        callee, call, caller_facts, caller_scope = self._frames[level]
        arg = _argument(call, name, _position(callee, name))
        if arg is None:
            return None  # left to its default
        saved = self._frames
        self._frames = saved[:level]  # evaluated where the call is, in the caller's own context
        try:
            return self.of(caller_facts, caller_scope, arg, derived=derived, depth=depth)
        finally:
            self._frames = saved

    def parameter(
        self, facts: ModuleFacts, scope: Scope, name: str, *, derived: bool = False, depth: int = 0
    ) -> Origin | None:
        if name not in scope.params or depth > MAX_DEPTH:
            return None
        index = _position(scope, name)
        if index == 0 and id(scope) in self.spawned():
            return Origin(LOCAL, "the process index given by `mp.spawn`", facts.place_of(scope.node))
        found = []
        for caller_facts, call in self.callers(scope):
            arg = _argument(call.node, name, index)
            if arg is not None:  # a caller leaving it to the default passes nothing we know
                found.append(self.of(caller_facts, call.scope, arg, derived=derived, depth=depth + 1))
        # Callers passing values of no known origin (a constant, a flag) say nothing about the
        # others: the rank one caller passes is a rank, whatever a test script passes.
        return _agree([origin for origin in found if origin is not None])

    def callers(self, scope: Scope) -> list[tuple[ModuleFacts, CallSite]]:
        module = self._module_of(scope)
        if module is not None and self.project.runs_alone(module):
            # Only its own module's calls can run it: those are indexed, not the project's.
            index = self._own_callers.get(module.filename)
            if index is None:
                index = self._own_callers[module.filename] = index_calls(
                    self.project, [module], skip=_untraced
                )
            return index.get(id(scope), [])
        if self._callers is None:
            self._callers = index_calls(self.project, self.project.files.values(), skip=_untraced)
        return self._callers.get(id(scope), [])

    def _module_of(self, scope: Scope) -> ModuleFacts | None:
        while scope.parent is not None:
            scope = scope.parent
        if self._modules is None:
            self._modules = {id(module.module_scope): module for module in self.project.files.values()}
        return self._modules.get(id(scope))

    def spawned(self) -> set[int]:
        """Functions launched by `mp.spawn(fn, ...)`: their first argument is the process index."""
        if self._spawned is None:
            self._spawned = set()
            for facts in self.project.files.values():
                for call in facts.all_calls():
                    if call.name not in SPAWN_CALLS:
                        continue
                    fn = _argument(call.node, "fn", 0)
                    fn_name = dotted_name(fn) if fn is not None else None
                    if fn_name is None:
                        continue
                    target = self.project.resolve_name(
                        facts, call.scope, facts.imports.resolve_dotted(fn_name)
                    )
                    if target is not None:
                        self._spawned.add(id(target[1]))
        return self._spawned


def _untraced(call: CallSite) -> bool:
    """Calls not followed back to their callers: unnamed, or into torch, os or `self.`."""
    return call.name is None or call.name.split(".", 1)[0] in ("torch", "os", "self")


def _position(scope: Scope, name: str) -> int:
    """The index of parameter `name` among the arguments a call passes (`self` is not passed)."""
    index = scope.params.index(name)
    if scope.class_name is not None and scope.params[:1] == ["self"]:
        index -= 1
    return index


def _agreed_in_place(facts: ModuleFacts, scope: Scope, name: str, value, values) -> bool:
    """Whether `scope` hands `name`, after `value` is assigned to it and before any other value
    is, to a collective that overwrites it with one value on every rank
    (`dist.broadcast(seed, 0)`, `dist.all_reduce(seed)`): what it held differs, what the code
    reads after does not."""
    start = facts.span(value)[0]
    later = [facts.span(v)[0] for v in values if v is not value and facts.span(v)[0] > start]
    end = min(later) if later else None
    for call in scope.calls:
        qualified = call.name or ""
        if (
            not qualified.startswith("torch.distributed.")
            or qualified.rsplit(".", 1)[-1] not in IN_PLACE_OUTPUT
        ):
            continue
        first = call.node.args[0] if call.node.args else None
        if first is None or first.keyword is not None or dotted_name(first.value) != name:
            continue
        at = facts.span(call.node)[0]
        if at > start and (end is None or at < end):
            return True
    return False


def _agree(found: list[Origin | None]) -> Origin | None:
    """One origin when every possibility has the same kind; None when any is unknown."""
    if not found or any(o is None for o in found):
        return None
    kinds = {o.kind for o in found}
    return found[0] if len(kinds) == 1 else None


def _attribute(facts, node, name: str) -> Origin | None:
    """`args.rank` / `args.local_rank` with no assignment in view: the attribute's name says."""
    head, _, attr = name.rpartition(".")
    if head == "self" or not head:
        return None
    if attr in GLOBAL_RANK_ATTRS:
        return Origin(GLOBAL, name, facts.place_of(node))
    if attr in LOCAL_RANK_ATTRS:
        return Origin(LOCAL, name, facts.place_of(node))
    return None


def _assigning_scope(facts: ModuleFacts, scope: Scope, name: str) -> dict[int, Scope]:
    """For each value assigned to `name` (`self.x` across the class's methods), the scope it is in."""
    owners: dict[int, Scope] = {}
    candidates = facts.scopes if name.startswith("self.") else []
    current: Scope | None = scope
    while current is not None:
        candidates = [*candidates, current]
        current = current.parent
    for candidate in candidates:
        if name.startswith("self.") and candidate.class_name != scope.class_name:
            continue
        for value in candidate.assignments.get(name, []):
            owners.setdefault(id(value), candidate)
    return owners


def _unpacked(scope: Scope, value: cst.BaseExpression, name: str) -> cst.BaseExpression | None:
    """The part of `a, b = x, y` that `name` receives (`value` itself for a plain assignment)."""
    if not isinstance(value, cst.Tuple):
        return value
    target = assignment_target(scope, value)
    if not isinstance(target, (cst.Tuple, cst.List)):
        return value
    names = [dotted_name(e.value) for e in target.elements]
    if name in names and len(names) == len(value.elements):
        return value.elements[names.index(name)].value
    return None


def _argument(call: cst.Call, name: str, index: int) -> cst.BaseExpression | None:
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg.value
            continue
        if position == index:
            return arg.value
        position += 1
    return None


def _constant(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.UnaryOperation):
        return _constant(node.expression)
    return isinstance(node, cst.Name) and node.value in ("None", "True", "False")


def _string(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _env_key(node: cst.Subscript) -> str | None:
    """ "RANK" in `os.environ["RANK"]` (or any `*env*[...]`, e.g. a dict copied from it)."""
    base = dotted_name(node.value)
    if base is None or "env" not in base.lower() or len(node.slice) != 1:
        return None
    element = node.slice[0].slice
    if isinstance(element, cst.Index):
        return _string(element.value)
    return None
