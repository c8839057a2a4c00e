"""DDP005 collective-in-rank-branch: a collective that one rank class performs and the other does not."""

from __future__ import annotations

from ddplint.analysis.divergence.domain import CHANGED_UNDER_RANK_TEST
from ddplint.analysis.divergence.labels import ops_label
from ddplint.analysis.divergence.results import Cause, Finding
from ddplint.analysis.divergence.seq import Op
from ddplint.analysis.divergence.triggers import collective_triggers
from ddplint.diagnostics import Applicability, Edit
from ddplint.model.names import dotted_name
from ddplint.rules.base import Context
from ddplint.rules.divergence_base import DivergenceRule, holds, quoted
from ddplint.syntax.lazycst import cst

DDP_NOTE = (
    " (a call of the DDP-wrapped model broadcasts its buffers, e.g. BatchNorm statistics, from "
    "rank 0 — even under `no_grad()` and `eval()`)"
)


# How messages name the launch configurations (catalogue.CONDITIONS).
LAUNCH_WORDS = {
    "DDP": "plain DDP",
    "FSDP": "FSDP",
    "DEEPSPEED": "DeepSpeed",
    "MEGATRON_LM": "Megatron-LM",
    "XLA": "XLA",
    "automatic_checkpoint_naming": "automatic checkpoint naming",
}


class CollectiveInRankBranch(DivergenceRule):
    code = "DDP005"
    cause = Cause.RANK
    name = "collective-in-rank-branch"
    summary = "a collective, directly or through a called function, reached by one rank class only"
    fix_applicability = Applicability.UNSAFE
    triggers = collective_triggers()

    def check(self, ctx: Context) -> None:
        for finding in self.findings(ctx):
            message, help = describe(finding)
            ctx.report(
                finding.node,
                message,
                fix=self._fix(ctx, finding),
                help=help,
                notes=[*finding.notes, *launch_note(finding)],
                when=finding.when,
            )

    def _fix(self, ctx: Context, finding: Finding):
        if finding.kind != "rank-only" or not finding.ops:
            return None
        ops = finding.ops
        if all(op.name == "ddp.forward" and op.ddp_expr is not None for op in ops):
            expr = ops[0].ddp_expr
            if all(op.ddp_expr is expr for op in ops) and dotted_name(expr) is not None:
                text = ctx.facts.code(expr)
                # wrapped on some launch paths only: `.module` would fail on the others
                unwrapped = f'getattr({text}, "module", {text})' if ops[0].partial else f"{text}.module"
                return ctx.fix(f"Call the wrapped module: `{unwrapped}`", ctx.replace(expr, unwrapped))
        guard = ops[0].guard
        # A test with other conditions besides the rank (`args.distributed and rank == 0`) may
        # guard the collective for a reason of its own: it stays where it is.
        if (
            len(ops) == 1
            and not ops[0].via
            and guard is not None
            and guard.decided
            and not isinstance(guard.node, cst.BooleanOperation)
        ):
            return _hoist(ctx, ops[0])
        return None


def describe(finding: Finding) -> tuple[str, str]:
    """Message and help for a DDP005 finding."""
    op = finding.ops[0]
    what = ops_label(finding.ops)
    ddp = DDP_NOTE if op.name == "ddp.forward" else ""
    if finding.kind == "split-barrier":
        line = finding.facts.line_of(finding.block)
        return (
            f"{what} runs inside `with ...main_process_first():` (line {line}): the main process "
            f"runs the block first while the others wait in the block's barrier, so this "
            f"collective meets a barrier on the other side and both wait forever",
            "move the collective out of the `main_process_first()` block",
        )
    if finding.kind in ("exit", "branch", "loop"):
        cond = finding.choice.test if finding.choice is not None else finding.node
        text, place = quoted(finding.facts, cond), finding.facts.place_of(cond)
        if (
            finding.kind == "loop"
            and finding.cond is not None
            and finding.cond.tag == CHANGED_UNDER_RANK_TEST
        ):
            return (
                f"the loop condition `{text}` ({place}) reads a value the loop changes under a rank "
                f"test, so the ranks run different numbers of iterations, and each iteration calls "
                f"{what}: ranks that loop fewer times leave the others waiting forever{ddp}",
                "change the value on every rank alike (broadcast rank 0's decision), then test it",
            )
        if finding.kind == "exit" and finding.exit is not None:
            kind = finding.exit.kind
            effect = {
                "continue": f"skips {what} on the ranks where it holds",
                "break": (
                    f"ends the loop on the ranks where it holds, skipping {what} in every later iteration"
                ),
            }.get(kind, f"returns on the ranks where it holds, skipping {what}")
            origin = finding.cond.origin if finding.cond is not None else None
            why = f" (it depends on {origin})" if origin is not None and text not in str(origin) else ""
            return (
                f"`{kind}` under `{text}` ({place}) {effect}: a rank-dependent condition{why}, so "
                f"the other ranks wait in {'them' if _many(finding) else 'it'} forever{ddp}",
                "decide on every rank alike (broadcast the decision from rank 0), then leave together",
            )
        return (
            f"{what} {'run' if _many(finding) else 'runs'} only when `{text}` ({place}) "
            f"{holds(finding)}, a rank-dependent condition that differs between ranks: ranks that skip "
            f"{'them' if _many(finding) else 'it'} leave the others waiting forever{ddp}",
            "perform the collective on every rank, outside the rank-dependent branch",
        )
    who, others = ("rank 0", "the other ranks") if finding.only_rank_zero else ("the other ranks", "rank 0")
    if op.guard is not None:
        cond = f"`{op.guard.text}` ({op.guard.facts.place_of(op.guard.node)})"
        verb, it = ("run", "them") if _many(finding) else ("runs", "it")
        waits = "waits" if who == "rank 0" else "wait"
        call = "calls" if others == "rank 0" else "call"
        if finding.when:
            # True under the launch configurations that make it a collective, and only there.
            message = (
                f"{what} runs only when {cond}; {_why(op)} under {launch_condition(finding)}: with "
                f"{'that' if len(finding.when) == 1 else 'those'}, {others} never {call} {it} and {who} "
                f"{waits} forever; {_otherwise(finding)}"
            )
        else:
            message = f"{what} {verb} only when {cond}{ddp}; {others} never {call} {it} and {who} {waits}"
            message += " forever"
    else:
        exit_item = finding.exits[0] if finding.exits else None
        they = "it leaves" if others == "rank 0" else "they leave"
        left = (
            f"{they} early at {exit_item.facts.place_of(exit_item.node)} (`{exit_item.guard.text}`)"
            if exit_item is not None and exit_item.guard is not None
            else f"{they} early"
        )
        message = (
            f"{what} is never reached by {others}{ddp}: {left}; {who} "
            f"{'waits' if who == 'rank 0' else 'wait'} in it forever"
        )
    if op.name == "ddp.forward":
        help = "run the evaluation through the wrapped module (`model.module(...)`), or on every rank"
    else:
        help = "call the collective on every rank, then use its result on rank 0 only"
    return message, help


def launch_condition(finding: Finding) -> str:
    """ "under DeepSpeed and FSDP": the launch configurations a conditional finding holds under."""
    names = [LAUNCH_WORDS[w] for w in finding.when]
    return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1]


def launch_note(finding: Finding) -> list[str]:
    return [f"only under {launch_condition(finding)}"] if finding.when else []


def _why(op: Op) -> str:
    return f"it {op.why}" if op.why else "it is a collective"


def _otherwise(finding: Finding) -> str:
    if "DDP" in finding.when or "automatic_checkpoint_naming" in finding.when:
        return "without automatic checkpoint naming it is not a collective under plain DDP"
    return "under plain DDP it is not a collective"


def _many(finding: Finding) -> bool:
    return len({id(op.origin[1]) for op in finding.ops}) > 1


def _hoist(ctx: Context, op: Op):
    """Move a stand-alone collective statement out of the rank branch it sits in."""
    facts = ctx.facts
    branch = _enclosing_if(facts, op.guard.node)
    statement = _statement_of(branch, op.site) if branch is not None else None
    if branch is None or statement is None or branch.orelse is not None:
        return None
    body = branch.body
    if not isinstance(body, cst.IndentedBlock):
        return None
    first, last = body.body[0], body.body[-1]
    if not _arguments_defined_before(op.site, body, statement) or _leaves_early(body, statement):
        return None
    source = facts.source
    start, end = _line_span(source.text, *facts.span(statement))
    # The statement moves with its trailing comment: a fix never drops text.
    code = source.text[facts.span(statement)[0] : end].rstrip("\r\n")
    call = facts.code(op.site)
    branch_start, _ = facts.span(branch)
    row, column = source.location(branch_start)
    indent = source.line_text(row)[: column - 1]
    if len(body.body) == 1:
        # The whole `if`, up to the end of its one statement's line (comment included), goes.
        return ctx.fix(f"Call `{call}` on every rank", Edit(branch_start, end, f"{code}{source.newline}"))
    if statement is last:
        return ctx.fix(
            f"Call `{call}` on every rank, after the branch",
            Edit(start, end, ""),
            Edit(end, end, f"{indent}{code}{source.newline}"),
        )
    if statement is first:
        return ctx.fix(
            f"Call `{call}` on every rank, before the branch",
            Edit(start, end, ""),
            Edit(branch_start, branch_start, f"{code}{source.newline}{indent}"),
        )
    return None


def _leaves_early(body: cst.IndentedBlock, statement: cst.CSTNode) -> bool:
    """Another statement of the branch may `return`, `continue` or `break`: moved out of the
    branch, the collective would still be skipped on that path."""
    stack = [s for s in body.body if s is not statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Return, cst.Continue, cst.Break)):
            return True
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(node.children)
    return False


def _line_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a statement's span to its whole line(s), newline included."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return line_start, (len(text) if line_end == -1 else line_end + 1)


def _enclosing_if(facts, test: cst.CSTNode) -> cst.If | None:
    for scope in facts.scopes:
        for node in _ifs(scope.node):
            if node.test is test:
                return node
    return None


def _ifs(root):
    from ddplint.model.facts import child_nodes

    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.If):
            yield node
        if isinstance(node, (cst.BaseExpression,)):
            continue
        stack.extend(child_nodes(node))


def _statement_of(branch: cst.If, call: cst.CSTNode) -> cst.CSTNode | None:
    """The direct body statement of `branch` that is exactly `call` as an expression statement."""
    if not isinstance(branch.body, cst.IndentedBlock):
        return None
    for stmt in branch.body.body:
        if (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and stmt.body[0].value is call
        ):
            return stmt
    return None


def _arguments_defined_before(call: cst.Call, body: cst.IndentedBlock, statement) -> bool:
    """Every name the call reads is bound before the branch (not inside it)."""
    from ddplint.model.facts import child_nodes

    assigned: set[str] = set()
    for stmt in body.body:
        if stmt is statement:
            break
        stack = [stmt]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
                target = node.target
                name = dotted_name(target)
                if name:
                    assigned.add(name.split(".")[0])
            stack.extend(child_nodes(node))
    used: set[str] = set()
    stack = [arg.value for arg in call.args]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            used.add(node.value)
        stack.extend(child_nodes(node))
    return not (used & assigned)
