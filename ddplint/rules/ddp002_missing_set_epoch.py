"""DDP002 missing-set-epoch: a shuffling `DistributedSampler` iterated across epochs, epoch never set.

The sampler seeds its permutation with `seed + epoch`; `epoch` stays 0 until `set_epoch` is
called, so every epoch repeats the first epoch's order. Ranks still agree with each other.

The sampler is followed from where it is built: into the loaders built from it (`sampler=`, or
inside `batch_sampler=BatchSampler(sampler, ...)`), into functions that receive either (through
their parameters, or `self`), and back out of functions that return either
(`loader = build_loader(ds)`, `loader, sampler = build(ds)`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ddplint.diagnostics import Applicability
from ddplint.model.expressions import assignment_target, bound_values, is_none, literal_bool, returned_values
from ddplint.model.facts import CallSite, Loop, ModuleFacts, Scope
from ddplint.model.names import dotted_name
from ddplint.model.signatures import SIGNATURES, bind
from ddplint.rules.base import Context, Rule
from ddplint.syntax.lazycst import cst

SAMPLER = "torch.utils.data.DistributedSampler"
DATALOADER = "torch.utils.data.DataLoader"
BATCH_SAMPLER = "torch.utils.data.BatchSampler"
MAX_DEPTH = 4


# What a name or expression is, and the path from it to the sampler for the inserted call:
# the sampler itself, a loader built with `sampler=`, a loader built with `batch_sampler=`.
SAMPLER_ROLE, LOADER_ROLE, BATCHED_ROLE = "sampler", "loader", "batched"
_PATH_TO_SAMPLER = {SAMPLER_ROLE: "", LOADER_ROLE: ".sampler", BATCHED_ROLE: ".batch_sampler.sampler"}
_LOADER_ROLES = (LOADER_ROLE, BATCHED_ROLE)


@dataclass(frozen=True)
class _Names:
    """How one function refers to the sampler and its loaders: names (locals, parameters,
    `self.x`) and expressions (`DataLoader(...)` passed on without a name), each with its role."""

    names: frozenset[tuple[str, str]] = frozenset()  # (role, dotted name)
    nodes: frozenset[tuple[str, cst.CSTNode]] = frozenset()  # (role, expression)

    @classmethod
    def of(cls, names: dict[str, set[str]], nodes: dict[str, set[cst.CSTNode]] | None = None) -> _Names:
        return cls(
            frozenset((role, n) for role, group in names.items() for n in group),
            frozenset((role, n) for role, group in (nodes or {}).items() for n in group),
        )

    def __bool__(self) -> bool:
        return bool(self.names or self.nodes)

    def spelled(self, *roles: str) -> set[str]:
        return {name for role, name in self.names if role in roles}

    def role(self, expr: cst.BaseExpression) -> str | None:
        """SAMPLER_ROLE, LOADER_ROLE or BATCHED_ROLE when `expr` is one of them, else None."""
        for role, node in self.nodes:
            if node is expr:
                return role
        name = _spell(expr)
        for role, spelled in self.names:
            if spelled == name:
                return role
        return None

    def on_self(self) -> _Names:
        """Only the `self.` names: what the class's other methods can see."""
        return _Names(frozenset((r, n) for r, n in self.names if n.startswith("self.")))

    def add(self, other: _Names) -> _Names:
        return _Names(self.names | other.names, self.nodes | other.nodes)


@dataclass
class _EpochLoop:
    facts: ModuleFacts
    scope: Scope
    loop: Loop
    names: _Names
    # `iter(loader)` made again inside this loop whenever it runs out: each one is a new pass.
    remade_at: cst.Call | None = None


class MissingSetEpoch(Rule):
    code = "DDP002"
    name = "missing-set-epoch"
    summary = "shuffling `DistributedSampler` iterated across epochs without `set_epoch`"
    fix_applicability = Applicability.SAFE
    triggers = frozenset({SAMPLER})

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.all_calls():
            if not _builds_sampler(facts, call) or not _shuffles(call):
                continue
            target = call.target or _spell(assignment_target(call.scope, call.node))
            spelled = {target} if target else _dict_entries(call.scope, call.node)
            own = _Names.of({SAMPLER_ROLE: spelled}, {SAMPLER_ROLE: {call.node}})
            names = _with_loaders(facts, call.scope, own)
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
        shared = names.on_self()
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
        drawn: bool | None = None,
    ) -> None:
        """`drawn`: for a generator the caller loops over (`for batch in log_every(loader)`),
        whether that loop trains: the generator's own loop feeds it, and trains as it does."""
        key = (id(scope), names, id(outer.loop) if outer else 0, drawn)
        if key in seen or depth > MAX_DEPTH:
            return
        seen.add(key)
        names = _with_built_loaders(ctx, facts, scope, names)

        def trains(loop: Loop) -> bool:
            if drawn is not None and scope.is_generator:
                return drawn
            return _trains(ctx, facts, scope, loop)

        for loop in scope.loops:
            if loop.iter is None or not _iterates(loop.iter, names, facts, scope):
                continue
            if not trains(loop):
                continue  # an evaluation loop: the order of its samples changes no result
            epoch = _EpochLoop(facts, scope, loop.parent, names) if loop.parent else outer
            if epoch is not None and not _sets_epoch(ctx, epoch):
                found.append(epoch)
        # `it = iter(loader)` made again in a step loop when exhausted: each is a pass over the data.
        for call in scope.calls:
            remade = call.name == "iter" and call.loop is not None and call.node.args
            if remade and _iterates(call.node.args[0].value, names, facts, scope):
                epoch = _EpochLoop(facts, scope, call.loop, names, remade_at=call.node)
                if trains(call.loop) and not _sets_epoch(ctx, epoch):
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
            feeds = next((trains(loop) for loop in scope.loops if loop.iter is call.node), None)
            if not callee.is_generator:
                feeds = None
            self._explore(ctx, callee_facts, callee, mapped, context, depth + 1, seen, found, feeds)
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
        where = epoch.facts.place_of(epoch.loop.node)
        loop = f"epoch loop ({where})"
        if epoch.remade_at is not None:
            remade = epoch.facts.place_of(epoch.remade_at)
            loop = f"loop that makes the loader's iterator again when it runs out ({remade})"
        given = sampler.bound().get("shuffle")
        shuffles = "shuffles"
        if given is not None and literal_bool(given) is None:
            shuffles = f"shuffles whenever `{facts.code(given)}` is true (it may well be)"
        message = (
            f"`DistributedSampler` {spelled}{shuffles}, but nothing calls `set_epoch` in the "
            f"{loop}: every epoch repeats the same permutation (ranks still agree "
            f"with each other; the model sees one fixed order)"
        )
        fix = None
        # Where the iterator is made again, the epoch to pass is the project's to count.
        statement = _epoch_fix_target(epoch) if epoch.remade_at is None else None
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


def _builds_sampler(facts: ModuleFacts, call: CallSite) -> bool:
    """`DistributedSampler(...)`, or a call of a name bound to the class (`sampler_cls =
    RandomSampler if args.local_rank == -1 else DistributedSampler`, then `sampler_cls(ds)`)."""
    if call.name == SAMPLER:
        return True
    func = call.node.func
    if not isinstance(func, cst.Name):
        return False
    for value in bound_values(facts, call.scope, func.value) or []:
        arms = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        if any(facts.qualname(arm) == SAMPLER for arm in arms):
            return True
    return False


def _shuffles(call: CallSite) -> bool:
    bound = call.bound()
    if bound.may_hide("shuffle"):
        return False
    shuffle = bound.get("shuffle")
    # A shuffle passed in (`shuffle=shuffle`, `shuffle=cfg.shuffle`) may well be true; only the
    # literal False (or 0) turns it off for sure.
    return literal_bool(shuffle) is not False


def _with_loaders(facts: ModuleFacts, scope: Scope, names: _Names) -> _Names:
    """Add the loaders built in `scope` (or its class, for `self.` names) from the sampler, given
    as `sampler=` or inside a `batch_sampler=BatchSampler(sampler, ...)`."""
    found: dict[str, set[str]] = {LOADER_ROLE: set(), BATCHED_ROLE: set()}
    nodes: dict[str, set[cst.CSTNode]] = {LOADER_ROLE: set(), BATCHED_ROLE: set()}
    for call in facts.all_calls():
        if call.name != DATALOADER:
            continue
        bound = call.bound()
        value, role = bound.get("sampler"), LOADER_ROLE
        if value is None or names.role(value) != SAMPLER_ROLE:
            value, role = _batched_sampler(facts, call.scope, bound.get("batch_sampler")), BATCHED_ROLE
        if value is None or names.role(value) != SAMPLER_ROLE:
            continue
        spelled = dotted_name(value) or ""
        # `self.sampler` is shared by the class's methods; a plain name only within one function.
        shared = spelled.startswith("self.") and call.scope.class_name == scope.class_name
        if call.scope is not scope and not shared:
            continue
        if call.target is None:
            nodes[role].add(call.node)
            found[role] |= _dict_entries(call.scope, call.node)  # `loaders = {"train": DataLoader(...)}`
        elif _only_loaders(facts, call.scope, call.target):
            found[role].add(call.target)
    return names.add(_Names.of(found, nodes))


def _batched_sampler(
    facts: ModuleFacts, scope: Scope, batch_sampler: cst.BaseExpression | None
) -> cst.BaseExpression | None:
    """The sampler inside `BatchSampler(sampler, ...)`, given inline or through one name."""
    if batch_sampler is None:
        return None
    candidates = [batch_sampler]
    name = dotted_name(batch_sampler)
    if name is not None:
        candidates = bound_values(facts, scope, name) or []
    for value in candidates:
        if isinstance(value, cst.Call) and facts.qualname(value.func) == BATCH_SAMPLER:
            return bind(value, SIGNATURES[BATCH_SAMPLER]).get("sampler")
    return None


# Wrappers that yield the items of the iterable they are given, when bound to a name first
# (`epoch_iterator = tqdm(loader)`, then `for step, batch in enumerate(epoch_iterator)`).
_ITEM_WRAPPERS = frozenset({"tqdm", "enumerate", "iter", "zip", "islice", "log_every"})


def _only_loaders(facts: ModuleFacts, scope: Scope, name: str) -> bool:
    """`name` is never rebound to something else, such as `accelerator.prepare(loader)`, which
    hands out a loader of its own that keeps its sampler's epoch."""
    values = bound_values(facts, scope, name) or []
    return all(
        isinstance(v, cst.Call) and (facts.qualname(v.func) == DATALOADER or _drains(facts, v, name))
        for v in values
    )


def _drains(facts: ModuleFacts, call: cst.Call, name: str) -> bool:
    """`loader = sample_data(loader)`: a generator of this module that yields the loader's
    batches forever; the name still stands for the loader's passes."""
    function = facts.functions.get(dotted_name(call.func) or "")
    return (
        function is not None
        and function.is_generator
        and any(dotted_name(arg.value) == name for arg in call.args)
    )


def _iterates(
    expr: cst.BaseExpression, names: _Names, facts: ModuleFacts, scope: Scope, depth: int = 0
) -> bool:
    """`expr` iterates the loader, directly or wrapped (`enumerate(x)`, `tqdm(x)`, ...)."""
    if names.role(expr) in _LOADER_ROLES:
        return True
    if depth > 3:
        return False
    name = dotted_name(expr)
    if name is not None:
        return any(
            (
                isinstance(value, cst.Call)
                and (dotted_name(value.func) or "").rsplit(".", 1)[-1] in _ITEM_WRAPPERS
                and _iterates(value, names, facts, scope, depth + 1)
            )
            # `dl = distr_dl if distributed else dl`: the loader on one arm
            or (isinstance(value, cst.IfExp) and _iterates(value, names, facts, scope, depth + 1))
            for value in bound_values(facts, scope, name) or []
        )
    if isinstance(expr, cst.Call):
        return any(_iterates(arg.value, names, facts, scope, depth + 1) for arg in expr.args)
    if isinstance(expr, cst.IfExp):
        return _iterates(expr.body, names, facts, scope, depth + 1) or _iterates(
            expr.orelse, names, facts, scope, depth + 1
        )
    return False


def _trains(ctx: Context, facts: ModuleFacts, scope: Scope, loop: Loop) -> bool:
    """The loop's body takes a training step (`loss.backward()`, `optimizer.step()`), directly
    or in a function it calls; a generator's loop feeds whoever draws from it."""
    if scope.is_generator:
        return True
    inside = [call for call in scope.calls if call.loop is not None and loop.encloses(call.loop)]
    return _steps(ctx, facts, inside, 0)


def _steps(ctx: Context, facts: ModuleFacts, calls: list[CallSite], depth: int) -> bool:
    """One of `calls` takes a training step, or a function it calls does (three calls down)."""
    for call in calls:
        if _training_step(call):
            return True
        target = ctx.project.resolve_call(facts, call) if depth < 3 else None
        if target is not None and _steps(ctx, target[0], target[1].calls, depth + 1):
            return True
    return False


def _training_step(call: CallSite) -> bool:
    """`loss.backward()`, `model(x).sum().backward()`, `optimizer.step()`, `train_step(batch)`."""
    func = call.node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else (dotted_name(func) or "")
    return name in ("backward", "step", "training_step") or ("train" in name and "step" in name)


def _spell(expr: cst.BaseExpression | None) -> str | None:
    """A name for `expr`: dotted (`self.loader`), or an entry of a container under a string key
    (`loaders['train']`, for `loaders["train"]`)."""
    if expr is None:
        return None
    if (
        isinstance(expr, cst.Subscript)
        and len(expr.slice) == 1
        and isinstance(expr.slice[0].slice, cst.Index)
    ):
        key = expr.slice[0].slice.value
        base = dotted_name(expr.value)
        if base is not None and isinstance(key, cst.SimpleString):
            return f"{base}[{key.evaluated_value!r}]"
        return None
    return dotted_name(expr)


def _entries_of(names: _Names, container: str | None) -> list[tuple[str, str]]:
    """(role, `['key']`) for the entries of `container` among the names."""
    if container is None:
        return []
    prefix = container + "["
    return [(role, name[len(container) :]) for role, name in names.names if name.startswith(prefix)]


def _dict_entries(scope: Scope, node: cst.CSTNode) -> set[str]:
    """`loaders['train']` when `node` is the value under "train" of a dict literal bound to `loaders`."""
    found = set()
    for name, values in scope.assignments.items():
        for value in values:
            if not isinstance(value, cst.Dict):
                continue
            for element in value.elements:
                key = getattr(element, "key", None)
                if getattr(element, "value", None) is node and isinstance(key, cst.SimpleString):
                    found.add(f"{name}[{key.evaluated_value!r}]")
    return found


def _stored_on_self(scope: Scope, names: _Names) -> _Names:
    """`self.x` names this method binds to the sampler or a loader (`self.loader = loader`)."""
    if scope.class_name is None:
        return _Names()
    known = names.spelled(SAMPLER_ROLE, *_LOADER_ROLES)
    found: dict[str, set[str]] = {}
    for target, values in scope.assignments.items():
        if target.startswith("self.") and target not in known:
            for value in values:
                role = names.role(value)
                if role is not None:
                    found.setdefault(role, set()).add(target)
                for role, entry in _entries_of(names, dotted_name(value)):
                    found.setdefault(role, set()).add(target + entry)
    return _Names.of(found)


def _map_names(call: CallSite, callee: Scope, names: _Names, *, same_class: bool) -> _Names:
    """The sampler/loader names as the callee sees them, through its parameters."""
    params = callee.params
    if callee.class_name is not None and params and params[0] in ("self", "cls"):
        params = params[1:]
    bound = bind(call.node, tuple(params))
    found: dict[str, set[str]] = {}
    for param, arg in bound.args.items():
        role = names.role(arg.value)
        if role is not None:
            found.setdefault(role, set()).add(param)
        for role, entry in _entries_of(names, dotted_name(arg.value)):
            found.setdefault(role, set()).add(param + entry)
    mapped = _Names.of(found)
    return mapped.add(names.on_self()) if same_class else mapped


def _with_built_loaders(ctx: Context, facts: ModuleFacts, scope: Scope, names: _Names) -> _Names:
    """Add what functions return that build a loader from the sampler handed to them
    (`loader = self.make_loader(dataset, sampler)`)."""
    for call in scope.calls:
        target = ctx.project.resolve_call(facts, call)
        if target is None:
            continue
        callee_facts, callee = target
        mapped = _map_names(call, callee, names, same_class=callee.class_name == scope.class_name)
        if not mapped:
            continue
        roles = _returned_roles(callee, _with_loaders(callee_facts, callee, mapped))
        if roles:
            names = _with_loaders(facts, scope, names.add(_received_names(call, roles)))
    return names


def _callers_receiving(ctx: Context, facts: ModuleFacts, scope: Scope, names: _Names):
    """(facts, scope, names) for each call of `scope` that keeps what it returns."""
    roles = _returned_roles(scope, names)
    if not roles:
        return
    for caller_facts, call in ctx.project.calls_to(scope):
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
    found: dict[str, set[str]] = {}
    nodes: dict[str, set[cst.CSTNode]] = {}
    if None in roles:
        nodes.setdefault(roles[None], set()).add(call.node)  # `for batch in build_loader(ds):`
        if call.target is not None:
            found.setdefault(roles[None], set()).add(call.target)
    target = assignment_target(call.scope, call.node)
    if isinstance(target, (cst.Tuple, cst.List)):
        for index, element in enumerate(target.elements):
            name = dotted_name(element.value)
            if index in roles and name is not None:
                found.setdefault(roles[index], set()).add(name)
    return _Names.of(found, nodes)


def _sets_epoch(ctx: Context, epoch: _EpochLoop) -> bool:
    calls = [c for c in epoch.scope.calls if epoch.loop.encloses(c.loop)]
    visited: set[int] = set()
    for call in calls:
        if _calls_set_epoch(call):
            if not _another_object(epoch, call.receiver):
                return True
        elif _reaches_set_epoch(ctx, epoch.facts, call, visited, 0):
            return True
    return False


def _calls_set_epoch(call: CallSite) -> bool:
    """`x.set_epoch(...)`, whatever `x` is spelled with (`loaders["train"].sampler`)."""
    func = call.node.func
    return isinstance(func, cst.Attribute) and func.attr.value == "set_epoch"


def _another_object(epoch: _EpochLoop, receiver: str | None) -> bool:
    """The receiver of a `set_epoch` call is a different sampler or loader built here."""
    if receiver is None:
        return False
    names = epoch.names
    if receiver in names.spelled(SAMPLER_ROLE) or any(
        receiver == n or receiver.startswith(n + ".") for n in names.spelled(*_LOADER_ROLES)
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
    if _calls_set_epoch(call) or _names_epoch_hook(call):
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
    receiver = min(names.spelled(SAMPLER_ROLE), default=None)
    if receiver is None:
        loaders = sorted((name, role) for role, name in names.names if role in _LOADER_ROLES)
        if loaders:
            name, role = loaders[0]
            receiver = f"{name}{_PATH_TO_SAMPLER[role]}"
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
