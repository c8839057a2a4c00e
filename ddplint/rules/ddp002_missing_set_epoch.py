"""DDP002 missing-set-epoch: a shuffling `DistributedSampler` iterated across epochs, epoch never set.

The sampler seeds its permutation with `seed + epoch`; `epoch` stays 0 until `set_epoch` is
called, so every epoch repeats the first epoch's order. Ranks still agree with each other.

The sampler is followed from where it is built: into the loader built from it, into functions
that receive either (through their parameters, or `self`), and back out of functions that return
either (`loader = build_loader(ds)`, `loader, sampler = build(ds)`).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.diagnostics import Applicability
from ddplint.facts import CallSite, Loop, ModuleFacts, Scope
from ddplint.names import dotted_name
from ddplint.rules.base import Context, Rule
from ddplint.signatures import bind
from ddplint.values import assignment_target, bound_values, is_none, literal_bool, returned_values

SAMPLER = "torch.utils.data.DistributedSampler"
DATALOADER = "torch.utils.data.DataLoader"
MAX_DEPTH = 4


@dataclass(frozen=True)
class _Names:
    """How one function refers to the sampler and its loader: names (locals, parameters,
    `self.x`) and expressions (`DataLoader(...)` passed on without a name)."""

    samplers: frozenset[str] = frozenset()
    loaders: frozenset[str] = frozenset()
    loader_nodes: frozenset[cst.CSTNode] = frozenset()
    sampler_nodes: frozenset[cst.CSTNode] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.samplers or self.loaders or self.loader_nodes or self.sampler_nodes)

    def role(self, expr: cst.BaseExpression) -> str | None:
        """Whether `expr` is the sampler or the loader ("sampler", "loader"), or neither (None)."""
        name = dotted_name(expr)
        if expr in self.sampler_nodes or (name is not None and name in self.samplers):
            return "sampler"
        if expr in self.loader_nodes or (name is not None and name in self.loaders):
            return "loader"
        return None


@dataclass
class _EpochLoop:
    facts: ModuleFacts
    scope: Scope
    loop: Loop
    names: _Names


class MissingSetEpoch(Rule):
    code = "DDP002"
    name = "missing-set-epoch"
    summary = "shuffling `DistributedSampler` iterated across epochs without `set_epoch`"
    fix_applicability = Applicability.SAFE

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.all_calls():
            if call.name != SAMPLER or not _shuffles(call):
                continue
            samplers = frozenset({call.target} if call.target else ())
            names = _with_loaders(facts, call.scope, _Names(samplers, sampler_nodes=frozenset({call.node})))
            found: list[_EpochLoop] = []
            self._follow(ctx, facts, call.scope, names, found, depth=0)
            unset = [epoch for epoch in found if not _reseeded_each_epoch(call, epoch)]
            if unset:
                self._report(ctx, call, unset[0])

    def _follow(
        self, ctx: Context, facts: ModuleFacts, scope: Scope, names: _Names, found: list, depth: int
    ) -> None:
        """Epoch loops reached from `scope`, then from the callers of `scope` that take its result."""
        self._epoch_loops_without_set_epoch(ctx, facts, scope, names, found)
        if depth >= 2:
            return
        for caller_facts, caller_scope, caller_names in _callers_receiving(ctx, facts, scope, names):
            self._follow(ctx, caller_facts, caller_scope, caller_names, found, depth + 1)

    def _epoch_loops_without_set_epoch(
        self, ctx: Context, facts: ModuleFacts, scope: Scope, names: _Names, found: list
    ) -> None:
        seen: set[tuple[int, _Names, int]] = set()
        self._explore(ctx, facts, scope, names, None, 0, seen, found)
        # Other methods of the class see only the `self.` names, not the locals of this one.
        shared = _Names(
            frozenset(n for n in names.samplers if n.startswith("self.")),
            frozenset(n for n in names.loaders if n.startswith("self.")),
        )
        if shared and scope.class_name is not None:
            for method in facts.scopes:
                if method.class_name == scope.class_name and method is not scope:
                    self._explore(ctx, facts, method, shared, None, 0, seen, found)

    def _explore(
        self,
        ctx: Context,
        facts: ModuleFacts,
        scope: Scope,
        names: _Names,
        outer: _EpochLoop | None,
        depth: int,
        seen: set,
        found: list[_EpochLoop],
    ) -> None:
        key = (id(scope), names, id(outer.loop) if outer else 0)
        if key in seen or depth > MAX_DEPTH:
            return
        seen.add(key)
        for loop in scope.loops:
            if loop.iter is None or not _iterates(loop.iter, names, facts, scope):
                continue
            epoch = _EpochLoop(facts, scope, loop.parent, names) if loop.parent else outer
            if epoch is not None and not _sets_epoch(ctx, epoch):
                found.append(epoch)
        for call in scope.calls:
            target = ctx.project.resolve_call(facts, call)
            if target is None:
                continue
            callee_facts, callee = target
            mapped = _map_names(call, callee, names, same_class=callee.class_name == scope.class_name)
            if not mapped:
                continue
            context = _EpochLoop(facts, scope, call.loop, names) if call.loop else outer
            self._explore(ctx, callee_facts, callee, mapped, context, depth + 1, seen, found)
        # A constructor (or any method) that keeps the loader on `self`: the class's other
        # methods iterate it (`Trainer(model, loader).fit(epochs)`).
        stored = _stored_on_self(scope, names)
        if stored:
            for method in facts.scopes:
                if method.class_name == scope.class_name and method is not scope:
                    self._explore(ctx, facts, method, stored, None, depth + 1, seen, found)

    def _report(self, ctx: Context, sampler: CallSite, epoch: _EpochLoop) -> None:
        facts = ctx.facts
        spelled = f"`{sampler.target}` " if sampler.target else ""
        where = f"{epoch.facts.path.name}:{epoch.facts.line_of(epoch.loop.node)}"
        message = (
            f"`DistributedSampler` {spelled}shuffles, but nothing calls `set_epoch` in the "
            f"epoch loop ({where}): every epoch repeats the same permutation (ranks still agree "
            f"with each other; the model sees one fixed order)"
        )
        fix = None
        statement = _epoch_fix_target(epoch)
        if statement is not None and epoch.facts is facts:
            call = _set_epoch_call(epoch, guard=_guard(facts, sampler))
            if call is not None:
                fix = ctx.fix(f"Insert `{call.splitlines()[-1].strip()}`", ctx.insert_before(statement, call))
        ctx.report(
            sampler.node,
            message,
            fix=fix,
            help="call `sampler.set_epoch(epoch)` at the start of every epoch",
        )


def _shuffles(call: CallSite) -> bool:
    bound = call.bound()
    if bound.may_hide("shuffle"):
        return False
    shuffle = bound.get("shuffle")
    return shuffle is None or literal_bool(shuffle) is True


def _with_loaders(facts: ModuleFacts, scope: Scope, names: _Names) -> _Names:
    """Add the loaders built in `scope` (or its class, for `self.` names) from the sampler."""
    loaders, loader_nodes = set(names.loaders), set(names.loader_nodes)
    for call in facts.all_calls():
        if call.name != DATALOADER:
            continue
        value = call.bound().get("sampler")
        if value is None or names.role(value) != "sampler":
            continue
        spelled = dotted_name(value) or ""
        # `self.sampler` is shared by the class's methods; a plain name only within one function.
        shared = spelled.startswith("self.") and call.scope.class_name == scope.class_name
        if call.scope is not scope and not shared:
            continue
        if call.target is None:
            loader_nodes.add(call.node)
        elif _only_loaders(facts, call.scope, call.target):
            loaders.add(call.target)
    return _Names(names.samplers, frozenset(loaders), frozenset(loader_nodes), names.sampler_nodes)


# Wrappers that yield the items of the iterable they are given, when bound to a name first
# (`epoch_iterator = tqdm(loader)`, then `for step, batch in enumerate(epoch_iterator)`).
_ITEM_WRAPPERS = frozenset({"tqdm", "enumerate", "iter", "zip", "islice", "log_every"})


def _only_loaders(facts: ModuleFacts, scope: Scope, name: str) -> bool:
    """`name` is never rebound to something else, such as `accelerator.prepare(loader)`, which
    hands out a loader of its own that keeps its sampler's epoch."""
    values = bound_values(facts, scope, name) or []
    return all(isinstance(v, cst.Call) and facts.qualname(v.func) == DATALOADER for v in values)


def _iterates(
    expr: cst.BaseExpression, names: _Names, facts: ModuleFacts, scope: Scope, depth: int = 0
) -> bool:
    """`expr` iterates the loader, directly or wrapped (`enumerate(x)`, `tqdm(x)`, ...)."""
    if names.role(expr) == "loader":
        return True
    if depth > 3:
        return False
    name = dotted_name(expr)
    if name is not None:
        return any(
            isinstance(value, cst.Call)
            and (dotted_name(value.func) or "").rsplit(".", 1)[-1] in _ITEM_WRAPPERS
            and _iterates(value, names, facts, scope, depth + 1)
            for value in bound_values(facts, scope, name) or []
        )
    if isinstance(expr, cst.Call):
        return any(_iterates(arg.value, names, facts, scope, depth + 1) for arg in expr.args)
    if isinstance(expr, cst.IfExp):
        return _iterates(expr.body, names, facts, scope, depth + 1) or _iterates(
            expr.orelse, names, facts, scope, depth + 1
        )
    return False


def _stored_on_self(scope: Scope, names: _Names) -> _Names:
    """`self.x` names this method binds to the sampler or the loader (`self.loader = loader`)."""
    if scope.class_name is None:
        return _Names()
    found: dict[str, set[str]] = {"sampler": set(), "loader": set()}
    for target, values in scope.assignments.items():
        if target.startswith("self.") and target not in names.samplers | names.loaders:
            for value in values:
                role = names.role(value)
                if role is not None:
                    found[role].add(target)
    return _Names(frozenset(found["sampler"]), frozenset(found["loader"]))


def _map_names(call: CallSite, callee: Scope, names: _Names, *, same_class: bool) -> _Names:
    """The sampler/loader names as the callee sees them, through its parameters."""
    params = callee.params
    if callee.class_name is not None and params and params[0] in ("self", "cls"):
        params = params[1:]
    bound = bind(call.node, tuple(params))
    samplers, loaders = set(), set()
    for param, arg in bound.args.items():
        role = names.role(arg.value)
        if role == "sampler":
            samplers.add(param)
        elif role == "loader":
            loaders.add(param)
    if same_class:
        samplers |= {n for n in names.samplers if n.startswith("self.")}
        loaders |= {n for n in names.loaders if n.startswith("self.")}
    return _Names(frozenset(samplers), frozenset(loaders))


def _callers_receiving(ctx: Context, facts: ModuleFacts, scope: Scope, names: _Names):
    """(facts, scope, names) for each call of `scope` that keeps what it returns."""
    roles = _returned_roles(scope, names)
    if not roles:
        return
    for caller_facts in list(ctx.project.modules.values()):
        for call in caller_facts.all_calls():
            target = ctx.project.resolve_call(caller_facts, call)
            if target is None or target[1] is not scope:
                continue
            received = _received_names(call, roles)
            if received:
                yield caller_facts, call.scope, _with_loaders(caller_facts, call.scope, received)


def _returned_roles(scope: Scope, names: _Names) -> dict[int | None, str]:
    """What the function returns: {None: role} for the whole value, {i: role} for tuple items."""
    roles: dict[int | None, str] = {}
    for value in returned_values(scope):
        role = names.role(value)
        if role is not None:
            roles[None] = role
        elif isinstance(value, cst.Tuple):
            for index, element in enumerate(value.elements):
                role = names.role(element.value)
                if role is not None:
                    roles[index] = role
    return roles


def _received_names(call: CallSite, roles: dict[int | None, str]) -> _Names:
    found: dict[str, set[str]] = {"sampler": set(), "loader": set()}
    nodes: dict[str, set[cst.CSTNode]] = {"sampler": set(), "loader": set()}
    if None in roles:
        nodes[roles[None]].add(call.node)  # `for batch in build_loader(ds):`
        if call.target is not None:
            found[roles[None]].add(call.target)
    target = assignment_target(call.scope, call.node)
    if isinstance(target, (cst.Tuple, cst.List)):
        for index, element in enumerate(target.elements):
            name = dotted_name(element.value)
            if index in roles and name is not None:
                found[roles[index]].add(name)
    return _Names(
        frozenset(found["sampler"]),
        frozenset(found["loader"]),
        frozenset(nodes["loader"]),
        frozenset(nodes["sampler"]),
    )


def _sets_epoch(ctx: Context, epoch: _EpochLoop) -> bool:
    calls = [c for c in epoch.scope.calls if epoch.loop.encloses(c.loop)]
    visited: set[int] = set()
    for call in calls:
        if call.method == "set_epoch":
            if not _another_object(epoch, call.receiver):
                return True
        elif _reaches_set_epoch(ctx, epoch.facts, call, visited, 0):
            return True
    return False


def _another_object(epoch: _EpochLoop, receiver: str | None) -> bool:
    """The receiver of a `set_epoch` call is a different sampler or loader built here."""
    if receiver is None:
        return False
    names = epoch.names
    if receiver in names.samplers or any(
        receiver == n or receiver.startswith(n + ".") for n in names.loaders
    ):
        return False
    base = receiver[: -len(".sampler")] if receiver.endswith(".sampler") else receiver
    values = bound_values(epoch.facts, epoch.scope, base)
    return bool(values) and all(
        isinstance(v, cst.Call) and epoch.facts.qualname(v.func) in (SAMPLER, DATALOADER) for v in values
    )


def _reaches_set_epoch(
    ctx: Context, facts: ModuleFacts, call: CallSite, visited: set[int], depth: int
) -> bool:
    if call.method == "set_epoch" or _names_epoch_hook(call):
        return True
    target = ctx.project.resolve_call(facts, call)
    if target is None:
        return _epoch_callback(call)
    if depth > MAX_DEPTH or id(target[1]) in visited:
        return False
    visited.add(id(target[1]))
    callee_facts, callee = target
    return any(_reaches_set_epoch(ctx, callee_facts, c, visited, depth + 1) for c in callee.calls)


def _epoch_callback(call: CallSite) -> bool:
    """A call we cannot follow that tells callbacks about the epoch, where trainers set the
    sampler's epoch: `callback.on_train_epoch_start(trainer, epoch)`."""
    if call.name is None or call.name.startswith(("torch.", "logging.")):
        return False
    return "epoch" in (call.method or "").lower()


def _names_epoch_hook(call: CallSite) -> bool:
    """A hook dispatched by name: `self.call_hook("before_train_epoch")`."""
    first = call.node.args[0].value if call.node.args else None
    if not isinstance(first, cst.SimpleString):
        return False
    text = first.evaluated_value
    # An identifier with a word before or after `epoch`: not a message such as "epoch".
    return isinstance(text, str) and text.isidentifier() and "_" in text and "epoch" in text.lower()


def _reseeded_each_epoch(sampler: CallSite, epoch: _EpochLoop) -> bool:
    """`DistributedSampler(ds, seed=base + epoch)` built inside the epoch loop changes order itself."""
    if not epoch.loop.encloses(sampler.loop):
        return False
    seed = sampler.bound().get("seed")
    return seed is not None and not isinstance(seed, (cst.Integer, cst.Name))


def _guard(facts: ModuleFacts, sampler: CallSite) -> str:
    """What the name bound to the sampler may hold instead: "" (nothing else), "none", "other"."""
    if sampler.target is None:
        return ""
    kinds = {
        _kind(facts, sampler.scope, value, 0)
        for value in bound_values(facts, sampler.scope, sampler.target) or []
    }
    kinds.discard("sampler")
    if not kinds:
        return ""
    return "none" if kinds == {"none"} else "other"


def _kind(facts: ModuleFacts, scope: Scope, value: cst.BaseExpression, depth: int) -> str:
    if isinstance(value, cst.IfExp) and depth < 5:
        arms = {_kind(facts, scope, value.body, depth + 1), _kind(facts, scope, value.orelse, depth + 1)}
        arms.discard("sampler")
        return arms.pop() if len(arms) == 1 else ("other" if arms else "sampler")
    if is_none(value):
        return "none"
    if isinstance(value, cst.Call) and facts.qualname(value.func) == SAMPLER:
        return "sampler"
    return "other"


def _epoch_fix_target(epoch: _EpochLoop) -> cst.CSTNode | None:
    node = epoch.loop.node
    if not isinstance(node, cst.For) or epoch.loop.target is None or not _counts(epoch.loop):
        return None
    if not isinstance(node.body, cst.IndentedBlock) or not node.body.body:
        return None
    return node.body.body[0]


def _counts(loop: Loop) -> bool:
    """The loop variable is an epoch number: `range(...)`, `trange(...)`, `tqdm(range(...))`, or a
    variable named for epochs. Not a batch of an outer loader, which `set_epoch` cannot take."""
    if "epoch" in (loop.target or "").lower():
        return True
    return _is_range(loop.iter) or (
        isinstance(loop.iter, cst.Call) and any(_is_range(arg.value) for arg in loop.iter.args)
    )


def _is_range(expr: cst.BaseExpression | None) -> bool:
    if not isinstance(expr, cst.Call):
        return False
    return (dotted_name(expr.func) or "").rsplit(".", 1)[-1] in ("range", "trange")


def _set_epoch_call(epoch: _EpochLoop, *, guard: str) -> str | None:
    """The statement to insert: `sampler.set_epoch(epoch)`, guarded when the name (or the loader's
    sampler) may hold something without `set_epoch`: None, or a `RandomSampler` off the distributed path.
    """
    names = epoch.names
    receiver = next(iter(sorted(names.samplers)), None)
    if receiver is None and names.loaders:
        receiver = f"{min(names.loaders)}.sampler"
        guard = "other" if guard else ""  # a loader built with `sampler=None` has a plain sampler
    if receiver is None:
        return None
    call = f"{receiver}.set_epoch({epoch.loop.target})"
    if not guard:
        return call
    test = f"{receiver} is not None" if guard == "none" else f'hasattr({receiver}, "set_epoch")'
    facts = epoch.facts
    statement = epoch.loop.node.body.body[0]
    row, column = facts.source.location(facts.span(statement)[0])
    indent = facts.source.line_text(row)[: column - 1]
    return f"if {test}:{facts.source.newline}{indent}{facts.tree.default_indent}{call}"
