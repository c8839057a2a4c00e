"""What the rank-divergence analysis hands on: function summaries and findings.

A finding says what makes ranks diverge (its cause), not which rule reports it: each rule built
on the analysis declares the cause it reports (see ddplint.rules.divergence_base).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Protocol

from ddplint.analysis.divergence.domain import Val
from ddplint.analysis.divergence.seq import Choice, Exit, Guard, Op, Seq

if TYPE_CHECKING:
    from ddplint.model.catalogue import LibraryCall, ReplicaState
    from ddplint.model.facts import ModuleFacts, Scope
    from ddplint.syntax.lazycst import cst


class Cause(Enum):
    DATA = "data"  # a branch or exit on per-rank data: a loss, a batch, an exception
    RANK = "rank"  # a branch on the rank, or on a flag only some ranks hold
    UNEVEN = "uneven"  # a loop over data split per rank with no padding
    ORDER = "order"  # the same collectives on every rank, in another order


@dataclass
class Summary:
    seq: Seq
    ret: Val
    complete: bool = True
    split_findings: list = field(default_factory=list)
    shard_findings: list = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    # `self.x` objects whose state a method of theirs changed (`self.counter.update(loss)`)
    mutated: frozenset[str] = frozenset()
    # Parameters the function calls under a rank test (`run_on_main(func)`: `if is_main(): func()`)
    guarded_calls: frozenset[int] = frozenset()
    # The attributes of `self` it leaves holding per-rank data (`window` in `self.window.append(loss)`);
    # None when not known (a function cut off).
    stored: frozenset[str] | None = None


@dataclass(frozen=True, eq=False)
class Update:
    """A change of state every DDP replica must hold alike (`optimizer.step()`), as seen from
    one function: `site` is the update itself, or the call in this function that reaches it."""

    state: ReplicaState
    label: str  # "`optimizer.step()`"
    node: cst.CSTNode  # the update call, maybe in a callee
    facts: ModuleFacts  # where `node` is
    site: cst.CSTNode
    site_facts: ModuleFacts
    guard: Guard | None
    via: tuple[str, ...] = ()


@dataclass(eq=False)
class Finding:
    """A divergence found in one function; the rules turn these into diagnostics and fixes."""

    cause: Cause  # what makes the ranks diverge; each rule reports one cause
    kind: str  # "rank-only", "exit", "branch", "loop", "order", "split-barrier"
    facts: ModuleFacts  # where it is reported
    node: cst.CSTNode
    ops: list[Op]  # the collectives one side performs and the other does not
    choice: Choice | None = None
    exit: Exit | None = None
    notes: list[str] = field(default_factory=list)
    cond: Val | None = None
    other_ops: list[Op] = field(default_factory=list)  # "order": what the other side runs instead
    only_rank_zero: bool = True
    exits: list[Exit] = field(default_factory=list)  # early exits that made the difference
    block: cst.CSTNode | None = None  # the split-barrier `with` statement, or the uneven loop
    block_facts: ModuleFacts | None = None
    # The launch configurations under which it holds, when its collectives exist only under
    # some (accelerate's save_state under DeepSpeed and FSDP); empty: under every one.
    when: tuple[str, ...] = ()


class Summaries(Protocol):
    """What the simulator of one function asks of the whole-project analysis (see
    ddplint.analysis.divergence.analysis.Analysis): callees' summaries and project facts."""

    def summary(
        self, facts: ModuleFacts, scope: Scope, rank_zero: bool, args: tuple, world: str | None = None
    ) -> Summary: ...

    def cut(self, facts: ModuleFacts, scope: Scope) -> Summary: ...

    def library_call(self, qualified: str) -> LibraryCall | None: ...

    def string_value(self, node: cst.SimpleString) -> object: ...

    def named_method(self, facts: ModuleFacts, receiver: str, method: str) -> LibraryCall | None: ...

    def distributed(self, facts: ModuleFacts) -> bool: ...

    def unwraps(self, scope: Scope) -> bool: ...

    def spawned(self, scope: Scope) -> bool: ...

    def flags(self, facts: ModuleFacts, scope: Scope) -> tuple[bool, bool, bool]: ...

    def shard_of(self, facts: ModuleFacts, scope: Scope) -> tuple | None: ...

    def is_loader(self, facts: ModuleFacts, scope: Scope, node: cst.BaseExpression) -> bool: ...

    def resolve(self, facts: ModuleFacts, scope: Scope, func: cst.BaseExpression, receiver: Val | None): ...

    def guess_method(self, facts: ModuleFacts, scope: Scope, func: cst.BaseExpression): ...

    def class_attr(self, facts: ModuleFacts, class_name: str, attr: str, rank_zero: bool) -> Val | None: ...

    def module_global(self, facts: ModuleFacts, name: str, rank_zero: bool) -> Val | None: ...
