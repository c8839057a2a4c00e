"""Small questions about what a local expression may hold, answered from assignments."""

from __future__ import annotations

from enum import Enum

from ddplint.model.catalogue import ACCELERATOR_GETTER
from ddplint.model.facts import ModuleFacts, Scope, child_nodes
from ddplint.model.names import dotted_name
from ddplint.syntax.lazycst import cst


class Nullness(Enum):
    NONE = "none"  # always None
    MAYBE = "maybe"  # None on some path, or unknown (a parameter)
    NEVER = "never"  # a constructed object on every path


def is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def literal_bool(node: cst.BaseExpression | None) -> bool | None:
    """True/False for the literals `True`/`False` (and 1/0), None for anything else."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    if isinstance(node, cst.Integer) and node.value in ("0", "1"):
        return node.value == "1"
    return None


def bound_values(facts: ModuleFacts, scope: Scope, dotted: str) -> list[cst.BaseExpression] | None:
    """Values assigned to `dotted` where it is bound; None when it is a parameter (anything)."""
    if dotted.startswith("self.") and scope.class_name is not None:
        return facts.values_of(scope, dotted)
    head = dotted.split(".", 1)[0]
    current: Scope | None = scope
    while current is not None:
        if dotted in current.assignments:
            return current.assignments[dotted]
        if head in current.params:
            return None  # a parameter shadows any outer binding
        current = current.parent
    return []


def nullness(facts: ModuleFacts, scope: Scope, node: cst.BaseExpression, depth: int = 0) -> Nullness:
    if is_none(node):
        return Nullness.NONE
    if isinstance(node, cst.IfExp):
        arms = {
            nullness(facts, scope, node.body, depth + 1),
            nullness(facts, scope, node.orelse, depth + 1),
        }
        return arms.pop() if len(arms) == 1 else Nullness.MAYBE
    name = dotted_name(node)
    if name is not None:
        values = bound_values(facts, scope, name)
        if not values or depth > 5:
            return Nullness.MAYBE
        kinds = {nullness(facts, scope, value, depth + 1) for value in values}
        return kinds.pop() if len(kinds) == 1 else Nullness.MAYBE
    if isinstance(node, cst.BooleanOperation):
        return Nullness.MAYBE
    if isinstance(node, cst.Call):
        # A class builds an object; a function (`get_sampler(ds)`) may return None.
        called = dotted_name(node.func)
        return Nullness.NEVER if called and called.rsplit(".", 1)[-1][:1].isupper() else Nullness.MAYBE
    return Nullness.NEVER


def constructed_by(
    facts: ModuleFacts, scope: Scope, node: cst.BaseExpression, qualname: str, depth: int = 0
) -> list[cst.Call]:
    """The `qualname(...)` calls whose result `node` may hold (through names and `x if c else y`)."""
    if isinstance(node, cst.Call):
        return [node] if facts.qualname(node.func) == qualname else []
    if isinstance(node, cst.IfExp):
        return constructed_by(facts, scope, node.body, qualname, depth + 1) + constructed_by(
            facts, scope, node.orelse, qualname, depth + 1
        )
    name = dotted_name(node)
    if name is None or depth > 5:
        return []
    found: list[cst.Call] = []
    for value in bound_values(facts, scope, name) or []:
        if value is not node:
            found.extend(constructed_by(facts, scope, value, qualname, depth + 1))
    return found


def _own_statements(scope: Scope):
    """Small statements of a function body, not descending into nested functions or classes."""
    node = scope.node
    stack = list(node.body.body) if isinstance(node, cst.FunctionDef) else list(node.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(stmt, cst.SimpleStatementLine):
            yield from stmt.body
        elif isinstance(stmt, cst.BaseSmallStatement):
            yield stmt
        else:
            stack.extend(_nested_statements(stmt))


# Parts of compound statements that hold a block of their own (by name: see ddplint.syntax.lazycst).
_CLAUSES = frozenset({"Else", "Finally", "ExceptHandler", "ExceptStarHandler", "MatchCase"})


def _nested_statements(stmt: cst.CSTNode) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    for child in child_nodes(stmt):
        if isinstance(child, cst.BaseSuite):
            out.extend(child.body)
        elif isinstance(child, (cst.BaseCompoundStatement, cst.SimpleStatementLine)):
            out.append(child)
        elif type(child).__name__ in _CLAUSES:
            out.extend(child.body.body)
    return out


def returned_values(scope: Scope) -> list[cst.BaseExpression]:
    """The expressions a function returns (`return x`), in no particular order."""
    if not isinstance(scope.node, cst.FunctionDef):
        return []
    return [s.value for s in _own_statements(scope) if isinstance(s, cst.Return) and s.value is not None]


def assignment_target(scope: Scope, value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The target of the single-target assignment `target = value` in this scope, if any."""
    for stmt in _own_statements(scope):
        if isinstance(stmt, cst.Assign) and stmt.value is value and len(stmt.targets) == 1:
            return stmt.targets[0].target
    return None


def accelerator_set_device(facts: ModuleFacts, node: cst.Call) -> bool:
    """DeepSpeed's `get_accelerator().set_device(i)` (accelerator/cuda_accelerator.py, 0.16.5:
    torch.cuda.set_device underneath)."""
    if not facts.spells_accelerator:
        return False  # most modules: their calls' nodes left unread
    func = node.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "set_device"):
        return False
    inner = func.value
    name = dotted_name(inner.func) if isinstance(inner, cst.Call) else None
    return (
        name is not None
        and facts.imports.resolve_dotted(name) == f"deepspeed.accelerator.{ACCELERATOR_GETTER}"
    )


def names_in(node: cst.CSTNode) -> set[str]:
    """Every plain name a target or expression spells (`a`, `b` in `a, (b, c.d)`)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        elif isinstance(current, cst.Attribute):
            dotted = dotted_name(current)
            if dotted is not None:
                found.add(dotted)
            stack.append(current.value)
        else:
            stack.extend(child_nodes(current))
    return found
