"""DDP007 swallowed-exception-in-step: `except: continue` around a distributed training step.

An error (typically CUDA out of memory) strikes one rank. When the `except` swallows it and the
loop goes on, that rank skips what the step had left to do — the gradient all-reduce of
`backward()`, a collective — while the others run it: from then on the ranks' collectives no
longer pair up, and the others wait for one the skipping rank never calls. A swallowed error in
`optimizer.step()` leaves that rank's parameters behind the other replicas for good.
"""

from __future__ import annotations

from ddplint.analysis.divergence.triggers import collective_triggers
from ddplint.model import catalogue as cat
from ddplint.model.expressions import constructed_by
from ddplint.model.facts import CallSite, ModuleFacts, Scope, child_nodes
from ddplint.model.names import dotted_name
from ddplint.rules.base import Context, Rule
from ddplint.rules.divergence_base import quoted
from ddplint.syntax.lazycst import cst

# Exceptions that do not come from a failing step: the end of an iterator, Ctrl-C (which every
# rank receives), an exit in progress.
NOT_STEP_ERRORS = frozenset(
    {"StopIteration", "StopAsyncIteration", "KeyboardInterrupt", "SystemExit", "GeneratorExit"}
)
INIT_PROCESS_GROUP = "torch.distributed.init_process_group"


class SwallowedExceptionInStep(Rule):
    code = "DDP007"
    # Only in a distributed program: one that wraps a model or calls a collective.
    triggers = collective_triggers()
    name = "swallowed-exception-in-step"
    summary = "an `except` that swallows an error of a distributed training step and goes on"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if not facts.has_try:
            return  # nothing to swallow an error
        analysis = ctx.divergence
        distributed = analysis.distributed(facts) or any(
            c.name == INIT_PROCESS_GROUP for c in facts.all_calls()
        )
        if not distributed:
            return
        for scope in facts.scopes:
            for node in _tries_in_loops(scope):
                swallowing = [(h, a) for h in node.handlers if (a := _swallows(facts, h)) is not None]
                if not swallowing:
                    continue  # cheaper than finding the step: most handlers re-raise or stop
                step = self._step_call(ctx, facts, scope, node)
                if step is None:
                    continue
                for handler, action in swallowing:
                    self._report(ctx, handler, step, action)

    def _step_call(self, ctx: Context, facts: ModuleFacts, scope: Scope, node: cst.Try) -> CallSite | None:
        """The call of the `try` body that synchronises ranks: a backward pass first, then a
        collective or a wrapped forward, then an optimizer step (which does not synchronise)."""
        inside = _calls_within(node.body)
        analysis = ctx.divergence
        found: list[CallSite] = []
        for call in scope.calls:  # in the order the code spells them
            if call.node not in inside:
                continue
            target = ctx.project.resolve_call(facts, call)
            if _is_step(facts, scope, call, analysis) or (
                target is not None and analysis.flags(target[0], target[1])[0]
            ):
                found.append(call)
        # Stable: of two alike, the one the code spells first.
        found.sort(key=lambda c: (c.method != "backward", _is_optimizer_step(c)))
        return found[0] if found else None

    def _report(self, ctx: Context, handler: cst.ExceptHandler, step: CallSite, action: str) -> None:
        facts = ctx.facts
        caught = "A bare `except`"
        if handler.type is not None:
            spelled = facts.code(handler.type)
            if isinstance(handler.type, cst.Tuple) and not spelled.startswith("("):
                spelled = f"({spelled})"
            caught = f"`except {spelled}`"
        caught = caught[0].upper() + caught[1:]
        where = f"`{quoted(facts, step.node, 50)}`, {facts.source.line_words(facts.line_of(step.node))}"
        if _is_optimizer_step(step):
            effect = (
                "the rank that fails skips its optimizer step and its parameters drift from the "
                "other replicas (DDP averages gradients, it never re-syncs parameters)"
            )
        else:
            if step.method == "backward":
                which = " (the gradient all-reduce of `backward()`)"
            elif ctx.divergence.is_collective(step.name or ""):
                which = f" (`{step.name}`)"
            else:
                which = ""
            effect = (
                f"the rank that fails skips the rest of the step while the other ranks run its "
                f"collectives{which}, so they wait for it, or pair collectives of different steps"
            )
        message = f"{caught} swallows an error of the training step ({where}) and {action}: {effect}"
        ctx.report(
            handler.type if handler.type is not None else handler,
            message,
            help=(
                "re-raise, or agree first: set a flag in the `except`, `dist.all_reduce(flag, "
                "op=ReduceOp.MAX)` on every rank, then skip the step on all ranks when it is set"
            ),
        )


def _is_optimizer_step(call: CallSite) -> bool:
    return call.method == "step" and "optim" in (call.receiver or "").lower()


def _is_step(facts: ModuleFacts, scope: Scope, call: CallSite, analysis) -> bool:
    name = call.name or ""
    method = call.method or ""
    receiver = (call.receiver or "").lower()
    if analysis.is_collective(name):
        return True
    if method == "backward":
        return True
    if method == "step" and ("optim" in receiver or "engine" in receiver or "scaler" in receiver):
        return True
    if method in cat.ACCELERATE_COLLECTIVES and "accelerator" in receiver:
        return True
    if not name or "." in name.replace("self.", "", 1):
        return False
    # A call of a DDP/FSDP-wrapped module.
    return any(
        constructed_by(facts, scope, value, wrapper)
        for value in facts.values_of(scope, name)
        for wrapper in cat.DDP_WRAPPERS
    )


def _calls_within(block: cst.CSTNode) -> set[cst.Call]:
    """The calls within `block`, found by walking it: no position is computed, nor the module's
    text read."""
    found: set[cst.Call] = set()
    stack = [block]
    while stack:
        node = stack.pop()
        if type(node) is cst.Call:
            found.add(node)
        stack.extend(child_nodes(node))
    return found


def _tries_in_loops(scope: Scope):
    """`try` statements of the scope's own code that lie inside a loop of it."""
    if not scope.loops:
        return  # most functions: no loop of their own, nothing to walk
    root = scope.node
    body = root.body.body if isinstance(root, cst.FunctionDef) else root.body
    stack: list[tuple[cst.CSTNode, bool]] = [(stmt, False) for stmt in body]
    while stack:
        node, in_loop = stack.pop()
        if type(node) is cst.SimpleStatementLine:
            continue  # most statements: small ones only, no `try` within
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.BaseExpression):
            continue
        if isinstance(node, cst.Try) and in_loop:
            yield node
        inner = in_loop or isinstance(node, (cst.For, cst.While))
        stack.extend((child, inner) for child in child_nodes(node))


def _caught_names(handler: cst.ExceptHandler) -> set[str] | None:
    if handler.type is None:
        return None
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else None
    nodes = [e.value for e in types] if types is not None else [handler.type]
    names = set()
    for node in nodes:
        name = dotted_name(node)
        if name is None:
            return None
        names.add(name.rsplit(".", 1)[-1])
    return names


def _swallows(facts: ModuleFacts, handler: cst.ExceptHandler) -> str | None:
    """How the handler lets the loop go on ("continues", "passes"...), or None when it does not."""
    caught = _caught_names(handler)
    if caught is not None and all(name in NOT_STEP_ERRORS or "Exhausted" in name for name in caught):
        return None  # `except DataloaderExhaustedError: break` ends a loop as StopIteration does
    statements = list(handler.body.body) if isinstance(handler.body, cst.IndentedBlock) else [handler.body]
    if _always_aborts(facts, statements):
        return None
    exits = _exits(statements)
    if exits:
        return {"continue": "continues", "break": "breaks out of the loop", "return": "returns"}[exits[0]]
    # Falling through: only when the handler does nothing but log or clean up. One that assigns
    # may be setting a failure flag for an agree-first check after the `try`.
    if any(isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)) for n in _small_statements(statements)):
        return None
    return "passes"


def _small_statements(statements):
    stack = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            yield from node.body
        elif isinstance(node, cst.BaseSmallStatement):
            yield node
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        else:
            stack.extend(c for c in child_nodes(node) if not isinstance(c, cst.BaseExpression))


def _exits(statements) -> list[str]:
    """`continue`/`break`/`return` anywhere in the handler (not inside a nested loop)."""
    found = []
    stack = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Continue):
            found.append("continue")
        elif isinstance(node, cst.Break):
            found.append("break")
        elif isinstance(node, cst.Return):
            found.append("return")
        elif isinstance(node, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef)):
            continue
        elif not isinstance(node, cst.BaseExpression):
            stack.extend(child_nodes(node))
    return sorted(found)


def _always_aborts(facts: ModuleFacts, statements) -> bool:
    """Does this block end in `raise` or an exit call on every path?"""
    for stmt in statements:
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
        for small in smalls:
            if isinstance(small, cst.Raise):
                return True
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                name = facts.imports.resolve_dotted(dotted_name(small.value.func) or "")
                if name in cat.EXIT_CALLS:
                    return True
            if isinstance(small, (cst.Continue, cst.Break, cst.Return)):
                return False
        if isinstance(stmt, cst.If) and stmt.orelse is not None:
            arms = [stmt.body, stmt.orelse if isinstance(stmt.orelse, cst.If) else stmt.orelse.body]
            if all(_arm_aborts(facts, arm) for arm in arms):
                return True
    return False


def _arm_aborts(facts: ModuleFacts, arm) -> bool:
    if isinstance(arm, cst.If):
        return _always_aborts(facts, [arm])
    return _always_aborts(facts, list(arm.body) if isinstance(arm, cst.IndentedBlock) else [arm])
