"""DDP004 divergent-exit-before-collective: a data-dependent exit or branch before a collective."""

from __future__ import annotations

from ddplint.analysis.divergence.labels import ops_label
from ddplint.analysis.divergence.results import Cause, Finding
from ddplint.analysis.divergence.triggers import collective_triggers
from ddplint.diagnostics import Applicability
from ddplint.model.catalogue import DDP_WRAPPERS
from ddplint.model.names import dotted_name
from ddplint.rules.base import Context
from ddplint.rules.divergence_base import DivergenceRule, holds, quoted
from ddplint.syntax.lazycst import cst


class DivergentExitBeforeCollective(DivergenceRule):
    code = "DDP004"
    cause = Cause.DATA
    name = "divergent-exit-before-collective"
    summary = "a data-dependent `continue`/`break`/`return` or branch before a collective"
    fix_applicability = Applicability.UNSAFE
    triggers = collective_triggers()

    def check(self, ctx: Context) -> None:
        for finding in self.findings(ctx):
            ctx.report(
                finding.node,
                describe(finding),
                fix=_agree_first(ctx, finding),
                help="agree first: all-reduce the flag with `ReduceOp.MAX` on every rank, then branch on it",
            )


def describe(finding: Finding) -> str:
    skipped = ops_label(finding.ops)
    cond_node = finding.choice.test if finding.choice is not None else finding.node
    text = quoted(finding.facts, cond_node)
    cond = f"`{text}` ({finding.facts.place_of(cond_node)})"
    origin = str(finding.cond.origin) if finding.cond is not None and finding.cond.origin else None
    why = f"it depends on {origin}" if origin and text not in origin else "it depends on per-rank data"
    it = "them" if len(finding.ops) > 1 else "it"
    if finding.kind == "exit" and finding.exit is not None:
        kind = finding.exit.kind
        if kind == "continue":
            effect = f"skips {skipped} on this rank only"
        elif kind == "break":
            effect = f"ends the loop on this rank only, skipping {skipped} in every later iteration"
        else:
            effect = f"returns on this rank only, skipping {skipped}"
        return (
            f"`{kind}` under {cond} {effect}: {why}, which can differ between ranks, and the other "
            f"ranks wait in {it} forever"
        )
    if finding.kind == "loop":
        return (
            f"the loop condition {cond} can differ between ranks ({why}), and each iteration calls "
            f"{skipped}: ranks that loop fewer times leave the others waiting forever"
        )
    verb = "run" if len(finding.ops) > 1 else "runs"
    return (
        f"{skipped} {verb} only when {cond} {holds(finding)}: {why}, which can differ between ranks, and a "
        f"rank that skips {it} leaves the others waiting forever"
    )


def _agree_first(ctx: Context, finding: Finding):
    """`if cond: continue` → all-reduce a flag with MAX, then `if flag.item(): continue`."""
    if finding.kind != "exit" or finding.choice is None or finding.exit is None:
        return None
    node = finding.choice.node
    if (
        not isinstance(node, cst.If)
        or node.orelse is not None
        or finding.exit.kind not in ("continue", "break")
    ):
        return None
    body = node.body
    if not isinstance(body, cst.IndentedBlock) or not body.body:
        return None
    last = body.body[-1]
    if not (
        isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], (cst.Continue, cst.Break))
    ):
        return None
    if last.body[-1] is not finding.exit.node:
        return None
    facts = ctx.facts
    dist = _alias(facts, "torch.distributed")
    torch = _alias(facts, "torch")
    if torch is None:
        return None
    if dist is None:
        dist = f"{torch}.distributed"
    device = _device(facts, node.test)
    if device is None:
        return None
    flag = _fresh_name(facts, "skip_flag")
    cond = facts.code(node.test)
    source = facts.source
    start, _ = facts.span(node)
    indent = source.line_text(source.location(start)[0])[: source.location(start)[1] - 1]
    nl = source.newline
    prologue = (
        f"{flag} = {torch}.tensor([int(bool({cond}))], device={device}){nl}"
        f"{indent}{dist}.all_reduce({flag}, op={dist}.ReduceOp.MAX){nl}{indent}"
    )
    from ddplint.diagnostics import Edit

    return ctx.fix(
        "Agree across ranks before skipping: all-reduce the flag with MAX, then branch on it",
        Edit(start, start, prologue),
        ctx.replace(node.test, f"{flag}.item()"),
    )


def _alias(facts, module: str) -> str | None:
    for local, target in sorted(facts.imports.aliases.items()):
        if target == module:
            return local
    return None


def _device(facts, test: cst.BaseExpression) -> str | None:
    """Where to build the flag: a tensor named in the condition, or a `device` in scope."""
    from ddplint.model.facts import child_nodes

    stack = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            name = facts.imports.resolve_dotted(dotted_name(node.func) or "")
            if name.startswith("torch.") and node.args:
                arg = dotted_name(node.args[0].value)
                if arg is not None:
                    return f"{arg}.device"
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "item":
                base = dotted_name(node.func.value)
                if base is not None:
                    return f"{base}.device"
        stack.extend(child_nodes(node))
    for scope in facts.scopes:
        if "device" in scope.assignments or "device" in scope.params:
            return "device"
    # Else the device of the DDP-wrapped model the loop trains.
    for call in facts.all_calls():
        if call.name in DDP_WRAPPERS and call.target is not None:
            return f"next({call.target}.parameters()).device"
    return None


def _fresh_name(facts, base: str) -> str:
    taken = set()
    for scope in facts.scopes:
        taken |= set(scope.assignments) | set(scope.params)
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    return name
