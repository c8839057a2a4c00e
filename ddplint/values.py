"""Small questions about what a local expression may hold, answered from assignments."""

from __future__ import annotations

from enum import Enum

import libcst as cst

from ddplint.facts import ModuleFacts, Scope
from ddplint.names import dotted_name


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
        values = facts.values_of(scope, name)
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
    for value in facts.values_of(scope, name):
        if value is not node:
            found.extend(constructed_by(facts, scope, value, qualname, depth + 1))
    return found
