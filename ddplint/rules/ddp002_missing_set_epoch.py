"""DDP002 missing-set-epoch: a shuffling `DistributedSampler` iterated across epochs, epoch never set.

The sampler seeds its permutation with `seed + epoch`; `epoch` stays 0 until `set_epoch` is
called, so every epoch repeats the first epoch's order. Ranks still agree with each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.diagnostics import Applicability
from ddplint.facts import CallSite, Loop, ModuleFacts, Scope
from ddplint.names import dotted_name
from ddplint.rules.base import Context, Rule
from ddplint.signatures import bind
from ddplint.values import literal_bool

SAMPLER = "torch.utils.data.DistributedSampler"
DATALOADER = "torch.utils.data.DataLoader"
MAX_DEPTH = 4


@dataclass(frozen=True)
class _Names:
    """How one function spells the sampler and its loader (locals, parameters, `self.x`)."""

    samplers: frozenset[str]
    loaders: frozenset[str]

    def __bool__(self) -> bool:
        return bool(self.samplers or self.loaders)


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
            names = self._names_for(facts, call)
            if not names:
                continue
            unset = self._epoch_loops_without_set_epoch(ctx, facts, call.scope, names)
            if unset:
                self._report(ctx, call, unset[0])

    def _names_for(self, facts: ModuleFacts, sampler: CallSite) -> _Names:
        samplers = {sampler.target} if sampler.target else set()
        loaders = set()
        for call in facts.all_calls():
            if call.name != DATALOADER or call.target is None:
                continue
            value = call.bound().get("sampler")
            if value is sampler.node or (value is not None and dotted_name(value) in samplers):
                loaders.add(call.target)
        return _Names(frozenset(samplers), frozenset(loaders))

    def _epoch_loops_without_set_epoch(
        self, ctx: Context, facts: ModuleFacts, scope: Scope, names: _Names
    ) -> list[_EpochLoop]:
        found: list[_EpochLoop] = []
        seen: set[tuple[int, _Names]] = set()
        scopes = [scope]
        if any(n.startswith("self.") for n in names.samplers | names.loaders):
            scopes = [s for s in facts.scopes if s.class_name == scope.class_name]
        for start in scopes:
            self._explore(ctx, facts, start, names, None, 0, seen, found)
        return found

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
            if loop.iter is None or not _mentions(loop.iter, names.loaders):
                continue
            epoch = _EpochLoop(facts, scope, loop.parent, names) if loop.parent else outer
            if epoch is not None and not self._sets_epoch(ctx, epoch):
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

    def _sets_epoch(self, ctx: Context, epoch: _EpochLoop) -> bool:
        calls = [c for c in epoch.scope.calls if epoch.loop.encloses(c.loop)]
        visited: set[int] = set()
        return any(_reaches_set_epoch(ctx, epoch.facts, c, visited, 0) for c in calls)

    def _report(self, ctx: Context, sampler: CallSite, epoch: _EpochLoop) -> None:
        facts = ctx.facts
        spelled = sampler.target or "the sampler"
        where = f"{epoch.facts.path.name}:{epoch.facts.line_of(epoch.loop.node)}"
        message = (
            f"`DistributedSampler` `{spelled}` shuffles, but nothing calls `set_epoch` in the "
            f"epoch loop ({where}): every epoch repeats the same permutation (ranks still agree "
            f"with each other; the model sees one fixed order)"
        )
        fix = None
        statement = _epoch_fix_target(epoch)
        if statement is not None and epoch.facts is facts:
            receiver = _receiver_in(epoch)
            if receiver is not None:
                line = f"{receiver}.set_epoch({epoch.loop.target})"
                fix = ctx.fix(f"Insert `{line}`", ctx.insert_before(statement, line))
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


def _mentions(expr: cst.BaseExpression, names: frozenset[str]) -> bool:
    """`expr` iterates one of `names`, directly or wrapped (`enumerate(x)`, `tqdm(x)`, ...)."""
    if not names:
        return False
    name = dotted_name(expr)
    if name is not None:
        return name in names
    if isinstance(expr, cst.Call):
        return any(_mentions(arg.value, names) for arg in expr.args)
    if isinstance(expr, cst.IfExp):
        return _mentions(expr.body, names) or _mentions(expr.orelse, names)
    return False


def _map_names(call: CallSite, callee: Scope, names: _Names, *, same_class: bool) -> _Names:
    """The sampler/loader names as the callee sees them, through its parameters."""
    params = callee.params
    if callee.class_name is not None and params and params[0] in ("self", "cls"):
        params = params[1:]
    bound = bind(call.node, tuple(params))
    samplers, loaders = set(), set()
    for param, arg in bound.args.items():
        value = dotted_name(arg.value)
        if value in names.samplers:
            samplers.add(param)
        elif value in names.loaders:
            loaders.add(param)
    if same_class:
        samplers |= {n for n in names.samplers if n.startswith("self.")}
        loaders |= {n for n in names.loaders if n.startswith("self.")}
    return _Names(frozenset(samplers), frozenset(loaders))


def _reaches_set_epoch(
    ctx: Context, facts: ModuleFacts, call: CallSite, visited: set[int], depth: int
) -> bool:
    if call.method == "set_epoch":
        return True
    target = ctx.project.resolve_call(facts, call)
    if target is None or depth > MAX_DEPTH or id(target[1]) in visited:
        return False
    visited.add(id(target[1]))
    callee_facts, callee = target
    return any(_reaches_set_epoch(ctx, callee_facts, c, visited, depth + 1) for c in callee.calls)


def _epoch_fix_target(epoch: _EpochLoop) -> cst.CSTNode | None:
    node = epoch.loop.node
    if not isinstance(node, cst.For) or epoch.loop.target is None:
        return None
    if not isinstance(node.body, cst.IndentedBlock) or not node.body.body:
        return None
    return node.body.body[0]


def _receiver_in(epoch: _EpochLoop) -> str | None:
    for name in sorted(epoch.names.samplers):
        return name
    for name in sorted(epoch.names.loaders):
        return f"{name}.sampler"
    return None
