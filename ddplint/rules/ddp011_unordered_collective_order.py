"""DDP011 unordered-collective-order: collectives issued item by item over a collection each rank
iterates in its own order (a set of strings, a directory listing). Page: rules/DDP011.md"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

from ddplint.analysis.divergence.labels import ops_label
from ddplint.analysis.divergence.seq import Choice, Loop, Op, Seq, walk
from ddplint.analysis.divergence.triggers import collective_triggers
from ddplint.diagnostics import Applicability, Fix
from ddplint.model.expressions import names_in
from ddplint.model.facts import ModuleFacts, Scope, child_nodes, own_nodes
from ddplint.model.iteration_order import DIRECTORY, IterationOrder, Unordered
from ddplint.model.names import dotted_name
from ddplint.rules.base import Context, Rule
from ddplint.syntax.lazycst import cst

# The gradient all-reduce of `backward()` sends the same parameters' gradients whatever the item:
# its order across items cannot pair the wrong tensors.
SAME_PAYLOAD = frozenset({"backward", "accelerator.backward", "deepspeed.backward"})


@dataclass
class _Loop:
    """A `for` loop or a comprehension of the module that issues collectives."""

    node: cst.CSTNode  # the `for` statement or the comprehension
    scope: Scope
    bodies: list[Seq]  # what its body does, as each rank class runs it


class UnorderedCollectiveOrder(Rule):
    code = "DDP011"
    name = "unordered-collective-order"
    summary = (
        "collectives issued item by item over a set of strings or a directory listing: each rank "
        "iterates it in its own order, so ranks pair different tensors"
    )
    fix_applicability = Applicability.UNSAFE
    triggers = collective_triggers()

    def check(self, ctx: Context) -> None:
        order = ctx.project.derived("iteration-order", lambda: IterationOrder(ctx.project))
        for loop in _collective_loops(ctx):
            for target, iterable, names in _clauses(loop.node):
                found = order.locate(ctx.facts, loop.scope, iterable)
                if found is None:
                    continue
                wrapped, reason = found
                ops = _item_ops(ctx.facts, loop.bodies, _item_names(loop.node, target, names))
                if ops:
                    ctx.report(
                        iterable,
                        describe(ctx.facts, loop.node, iterable, reason, ops),
                        fix=_sort(ctx, loop, wrapped, reason),
                        help=_help(reason),
                    )
                    break  # one finding per comprehension: sorting its outermost clause is enough


def describe(facts: ModuleFacts, loop: cst.CSTNode, iterable, reason: Unordered, ops: list[Op]) -> str:
    text = _spelled(facts, iterable)
    source = reason.source
    subject, origin = f"`{text}`", ""
    if reason.facts is facts and _inside(facts, source, iterable):
        subject = f"`{_spelled(facts, source)}`"  # `os.listdir(folder)` in `enumerate(os.listdir(folder))`
    else:
        origin = f" (`{_spelled(reason.facts, source, 50)}`, {reason.facts.place_of(source)})"
    if reason.kind == DIRECTORY and origin:
        listing = f"`{_spelled(reason.facts, source, 50)}` ({reason.facts.place_of(source)})"
        why = f"{subject} comes in the order of {listing}: file-system order, which can differ between nodes"
    elif reason.kind == DIRECTORY:
        why = f"{subject} lists a folder in file-system order, which can differ between nodes"
    else:
        why = (
            f"{subject} is a set of strings{origin}: it iterates in hash order, and each Python process "
            f"draws its own string-hash seed unless PYTHONHASHSEED is fixed"
        )
    many = len({id(op.origin[1]) for op in ops}) > 1
    return (
        f"{ops_label(ops)} in the loop over `{text}` ({facts.place_of(loop)}): {why}, so the ranks issue "
        f"{'them' if many else 'it'} for different items and pair tensors that do not belong together "
        f"(wrong values when their shapes agree, an error or a hang when they do not)"
    )


def _spelled(facts: ModuleFacts, node: cst.CSTNode, limit: int = 60) -> str:
    """The code of `node` on one line, shortened, without its comments: for `...` in messages."""
    code = facts.code(node)
    if "#" in code:
        lines = code.splitlines(keepends=True)
        try:  # in brackets, as it stands in the loop: its lines continue one another
            tokens = tokenize.generate_tokens(io.StringIO(f"({code}\n)").readline)
            comments = [token.start for token in tokens if token.type == tokenize.COMMENT]
        except (tokenize.TokenError, SyntaxError):
            comments = []
        for row, column in comments:
            lines[row - 1] = lines[row - 1][: column - (row == 1)]
        code = " ".join(lines)
    text = " ".join(code.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _help(reason: Unordered) -> str:
    if reason.entries:
        return "iterate `sorted(..., key=lambda entry: entry.name)` so that every rank takes the same order"
    return "iterate `sorted(...)` so that every rank takes the items in the same order"


# The loops -----------------------------------------------------------------------------------


def _collective_loops(ctx: Context) -> Iterator[_Loop]:
    """The module's own loops that issue collectives, as the rank-divergence analysis simulates
    each function for each rank class."""
    facts, analysis = ctx.facts, ctx.divergence
    found: dict[int, _Loop] = {}
    for scope in facts.scopes:
        if not analysis.flags(facts, scope)[0]:
            continue
        statements = {id(loop.node) for loop in scope.loops}
        no_args = tuple(None for _ in scope.params)
        for rank_zero in (True, False):
            summary = analysis.summary(facts, scope, rank_zero, no_args)
            for item in walk(summary.seq):
                if isinstance(item, Loop) and item.facts is facts and _own(item, statements):
                    found.setdefault(id(item.node), _Loop(item.node, scope, [])).bodies.append(item.body)
    yield from found.values()


def _own(loop: Loop, statements: set[int]) -> bool:
    """The loop is written in the function simulated, not in a callee inlined there (whose own
    function reports it): a `for` statement of the function, or a comprehension that holds the
    calls its collectives are issued through (an inlined one's are the caller's call)."""
    if isinstance(loop.node, cst.For):
        return id(loop.node) in statements
    sites = {id(op.site) for op in walk(loop.body) if isinstance(op, Op)}
    stack: list[cst.CSTNode] = [loop.node]
    while stack:
        node = stack.pop()
        if id(node) in sites:
            return True
        stack.extend(child_nodes(node))
    return False


def _clauses(node) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression, list]]:
    """(target, iterable, the clauses after it) of each `for` of a loop or comprehension."""
    if isinstance(node, cst.For):
        yield node.target, node.iter, []
        return
    # spelled here, not at import: a run that parses nothing never imports libcst
    if not isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        return  # a `while` loop
    clauses = []
    clause = node.for_in
    while clause is not None:
        clauses.append(clause)
        clause = clause.inner_for_in
    for index, clause in enumerate(clauses):
        yield clause.target, clause.iter, clauses[index + 1 :]


# What depends on the item ---------------------------------------------------------------------


def _item_names(loop, target, later_clauses: list) -> set[str]:
    """The names that hold the loop's item, or something computed from it, in the loop's body."""
    tainted = names_in(target)
    if isinstance(loop, cst.For):
        roots: list[cst.CSTNode] = [loop.body]
    else:  # the comprehension's later `for` clauses and what it computes for each item
        elements = [loop.key, loop.value] if isinstance(loop, cst.DictComp) else [loop.elt]
        roots = [*later_clauses, *elements]
    for _ in range(5):  # to a fixed point: `t = p[name]`, then `buf = t.flatten()`, ...
        before = len(tainted)
        for root in roots:
            for node in own_nodes(root):
                tainted |= _names_given(node, tainted)
        if len(tainted) == before:
            break
    return tainted


def _names_given(node, tainted: set[str]) -> set[str]:
    """Names `node` binds (or fills) from a value that mentions a tainted name."""
    if isinstance(node, cst.Assign) and _mentions(node.value, tainted):
        return set().union(*(_bound(t.target) for t in node.targets))
    if (
        isinstance(node, (cst.AugAssign, cst.AnnAssign))
        and node.value is not None
        and _mentions(node.value, tainted)
    ):
        return _bound(node.target)
    if isinstance(node, (cst.For, cst.CompFor)) and _mentions(node.iter, tainted):
        return names_in(node.target)
    if isinstance(node, cst.WithItem) and node.asname is not None and _mentions(node.item, tainted):
        return names_in(node.asname.name)
    if isinstance(node, cst.NamedExpr) and _mentions(node.value, tainted):
        return names_in(node.target)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and _mentions(node.args, tainted):
        receiver = dotted_name(node.func.value)  # `buf.copy_(p[name])`, `chunks.append(t)`
        return {receiver} if receiver is not None else set()
    return set()


def _bound(target) -> set[str]:
    if isinstance(target, cst.Subscript):
        name = dotted_name(target.value)  # `bufs[i] = ...` fills `bufs`
        return {name} if name is not None else set()
    return (
        names_in(target)
        if isinstance(target, (cst.Tuple, cst.List))
        else set(filter(None, [dotted_name(target)]))
    )


def _mentions(node, names: set[str]) -> bool:
    if node is None:
        return False
    if isinstance(node, (list, tuple)):
        return any(_mentions(n, names) for n in node)
    return bool(names_in(node) & names)


def _item_ops(facts: ModuleFacts, bodies: list[Seq], tainted: set[str]) -> list[Op]:
    """The collectives of the loop's body, on every rank, whose tensors depend on the item, and
    those that run or not depending on it when the body issues more than one kind (a barrier
    issued for some items only is still one barrier per such item, in whatever order). A
    `dist.barrier()`, or a call of one DDP model, issues the same thing whatever the item."""
    carrying: list[Op] = []
    conditional: list[Op] = []
    kinds: set[str] = set()
    for body in bodies:
        for op, on_item in _issued(facts, body, tainted, False):
            kinds.add(op.name)
            if _carries_item(facts, op, tainted):
                _add(carrying, op)
            elif on_item:
                _add(conditional, op)
    return carrying + conditional if len(kinds) > 1 else carrying


def _add(ops: list[Op], op: Op) -> None:
    if all(op.site is not other.site or op.name != other.name for other in ops):
        ops.append(op)


def _issued(facts: ModuleFacts, seq: Seq, tainted: set[str], on_item: bool) -> Iterator[tuple[Op, bool]]:
    """The collectives every rank issues in `seq`, each with whether a test or an inner loop on
    the item decides if (or how often) it runs."""
    for item in seq:
        if isinstance(item, Op):
            if item.param is None and item.guard is None and item.name not in SAME_PAYLOAD:
                yield item, on_item
        elif isinstance(item, Choice):
            test = item.test if item.facts is facts else None
            for arm in item.arms:
                yield from _issued(facts, arm, tainted, on_item or _mentions(test, tainted))
        elif isinstance(item, Loop):
            iterables = [it for _, it, _ in _clauses(item.node)] if item.facts is facts else []
            yield from _issued(facts, item.body, tainted, on_item or _mentions(iterables, tainted))


def _carries_item(facts: ModuleFacts, op: Op, tainted: set[str]) -> bool:
    if op.facts is not facts:
        return False
    if op.name == "ddp.forward":  # `models[name](x)`: another model for each item
        return op.ddp_expr is not None and _mentions(op.ddp_expr, tainted)
    return _mentions(op.site, tainted)


def _inside(facts: ModuleFacts, node, outer) -> bool:
    start, end = facts.span(outer)
    node_start, node_end = facts.span(node)
    return start <= node_start and node_end <= end


# The fix ---------------------------------------------------------------------------------------


def _sort(ctx: Context, loop: _Loop, wrapped, reason: Unordered) -> Fix | None:
    node = loop.node
    if isinstance(node, cst.For) and node.asynchronous is not None:
        return None
    if _rebinds_sorted(ctx.facts, loop.scope):
        return None
    if (
        isinstance(wrapped, cst.Call)
        and isinstance(wrapped.func, cst.Attribute)
        and wrapped.func.attr.value == "values"
    ):
        return None  # sorting a dict's values compares them (tensors do not compare)
    code = ctx.facts.code(wrapped)
    if isinstance(wrapped, cst.Tuple) and not wrapped.lpar:
        code = f"({code})"
    key = ", key=lambda entry: entry.name" if reason.entries else ""
    text = f"sorted({code}{key})"
    return ctx.fix(
        f"Iterate `{text if len(text) <= 48 else f'sorted({_spelled(ctx.facts, wrapped, 40)})'}`",
        ctx.replace(wrapped, text),
    )


def _rebinds_sorted(facts: ModuleFacts, scope: Scope) -> bool:
    """`sorted` means something else here: the fix would call that."""
    if "sorted" in facts.imports.aliases or "sorted" in facts.functions or "sorted" in facts.classes:
        return True
    current: Scope | None = scope
    while current is not None:
        if "sorted" in current.assignments or "sorted" in current.params:
            return True
        current = current.parent
    return False
