"""Collective sequences: what one rank class does, as a tree of ops, choices, loops and exits.

A block is built statement by statement; when a branch can leave early (`continue`, `break`,
`return`), the rest of the block is pushed into the branch's arms that fall through, so each arm
shows everything it really runs until the exit's target. Comparing two arms then compares what
two ranks taking different arms would do.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Union

from ddplint.analysis.divergence.domain import Val
from ddplint.syntax.lazycst import cst

if TYPE_CHECKING:
    from ddplint.model.facts import ModuleFacts


@dataclass(frozen=True, eq=False)
class Guard:
    """A rank condition decided differently for the two classes (`if rank == 0:`)."""

    node: cst.CSTNode = field(repr=False)  # the condition expression
    facts: ModuleFacts = field(repr=False)
    text: str
    # Settled for both rank classes (`rank == 0`), not mixed with a uniform unknown
    # (`args.distributed and rank == 0`): only then can a collective simply leave the branch.
    decided: bool = True


@dataclass(frozen=True, eq=False)
class Op:
    """One collective, as seen from the function being simulated."""

    name: str  # canonical, for comparison: "torch.distributed.all_reduce"
    label: str  # as the user wrote it: "dist.all_reduce"
    site: cst.CSTNode = field(repr=False)  # the call in this function that performs or reaches it
    facts: ModuleFacts = field(repr=False)  # where `site` is
    # The collective call itself, maybe in a callee.
    origin: tuple[ModuleFacts, cst.CSTNode] = field(repr=False)
    via: tuple[str, ...] = ()  # functions between `site` and the collective
    guard: Guard | None = None
    # A call of the summarised function's parameter `param`: a collective only when the caller
    # passes a DDP-wrapped module. Resolved (or dropped) when inlined into the caller.
    param: int | None = None
    # The expression that carries a DDP-wrapped module into this call (`model` in `model(x)` or
    # in `evaluate(model)`): replacing it by `X.module` removes the collective.
    ddp_expr: cst.CSTNode | None = field(default=None, repr=False)
    # The parameter that carried the DDP-wrapped module in, so a caller can point at its argument.
    from_param: int | None = None
    # A collective only under these launch configurations (see catalogue.CONDITIONS); empty: always.
    when: frozenset[str] = frozenset()
    why: str = ""  # what it does, when only some launch configurations make it a collective
    # Resolved to a collective by this call's argument (a DDP-wrapped model passed in): the
    # callee alone could not know, so the difference is reported at the call.
    resolved_here: bool = False
    # The module passed in is wrapped on some launch paths only: unwrap with `getattr(m, "module", m)`.
    partial: bool = False
    # Issued on a process group given by name (`group=mpu.get_tensor_model_parallel_group()`):
    # only its members take part, and which ranks those are is not in view.
    subgroup: bool = False


@dataclass(frozen=True, eq=False)
class Exit:
    kind: str  # "continue", "break", "return", or "abort" (sys.exit, raise: ends the job)
    node: cst.CSTNode = field(repr=False)
    facts: ModuleFacts = field(repr=False)
    guard: Guard | None = None
    # A callee's `return` seen from its caller: it ends the callee, not the caller's flow, but
    # stays visible so a finding can point at it.
    inlined: bool = False

    @property
    def terminal(self) -> bool:
        return not self.inlined


@dataclass(frozen=True, eq=False)
class Choice:
    """A branch both arms of which some rank may take: the condition is not decided here."""

    node: cst.CSTNode = field(repr=False)  # the if/while/match statement
    test: cst.CSTNode | None = field(repr=False)
    facts: ModuleFacts = field(repr=False)
    cond: Val
    arms: tuple[Seq, Seq]
    # Computed once: walking nested arms again on every append is quadratic.
    exits: bool = field(init=False, repr=False)
    size: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "exits", any(may_exit(arm) for arm in self.arms))
        object.__setattr__(self, "size", 1 + sum(seq_size(arm) for arm in self.arms))


@dataclass(frozen=True, eq=False)
class Loop:
    node: cst.CSTNode = field(repr=False)
    facts: ModuleFacts = field(repr=False)
    body: Seq
    # Divergent when ranks may run different numbers of iterations (`while not done:`).
    cond: Val | None = None
    size: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", 1 + seq_size(self.body))


Item = Union[Op, Exit, Choice, Loop]
Seq = tuple  # tuple[Item, ...]


def seq_size(seq: Seq) -> int:
    return sum(getattr(item, "size", 1) for item in seq)


def may_exit(seq: Seq) -> bool:
    """Can the sequence leave the block early (`continue`, `break`, `return`)?

    An abort (raise, sys.exit) is left out: it ends the job, so what follows a branch that may
    abort needs no pushing into the branch's other arm — comparisons drop aborting arms.
    """
    if not seq:
        return False
    last = seq[-1]
    if isinstance(last, Exit) and last.terminal:
        return last.kind != "abort"
    return isinstance(last, Choice) and last.exits


def falls_through(seq: Seq) -> bool:
    if not seq:
        return True
    last = seq[-1]
    if isinstance(last, Exit) and last.terminal:
        return False
    if isinstance(last, Choice):
        return any(falls_through(arm) for arm in last.arms)
    return True


def append(first: Seq, rest: Seq) -> Seq:
    """`first` then `rest`, where `rest` runs only on the paths of `first` that fall through."""
    if not rest:
        return first
    if not first:
        return rest
    last = first[-1]
    if isinstance(last, Exit) and last.terminal:
        return first
    if isinstance(last, Choice) and last.exits:
        arms = tuple(append(arm, rest) for arm in last.arms)
        return (*first[:-1], replace(last, arms=arms))
    return first + rest


def matters(item) -> bool:
    """Whether an item can change a comparison: it holds a collective or an exit."""
    if isinstance(item, (Op, Exit)):
        return True
    if isinstance(item, Choice):
        return item.exits or any(has_ops(arm, count_params=True) or _has_exit(arm) for arm in item.arms)
    if isinstance(item, Loop):
        # A loop that one rank class leaves under a rank test changes what follows it too.
        return has_ops(item.body, count_params=True) or any(
            isinstance(x, Exit) and x.guard is not None for x in walk(item.body)
        )
    return True


def _has_exit(seq: Seq) -> bool:
    return any(isinstance(item, Exit) for item in walk(seq))


def has_ops(seq: Seq, *, count_params: bool = False) -> bool:
    for item in seq:
        if isinstance(item, Op) and (item.param is None or count_params):
            return True
        if isinstance(item, Choice) and any(has_ops(arm, count_params=count_params) for arm in item.arms):
            return True
        if isinstance(item, Loop) and has_ops(item.body, count_params=count_params):
            return True
    return False


@dataclass
class Token:
    key: object
    item: Item | None = None


@dataclass
class Linearizer:
    """Flattens a sequence into comparable tokens; structure kept as bracket tokens.

    `stop_matters`: inside a loop that performs collectives, `break`/`return` also skip every
    later iteration's collectives, so they are tokens of their own.
    """

    ignore_params: bool = False
    tokens: list[Token] = field(default_factory=list)
    # Branches seen on the other side of a comparison: one seen here only, whose condition is
    # uniform and one arm of which leaves early (an error path: `if not ok: return -1`), is
    # read as its other arm — comparing both sides' normal path, not their error exits.
    shared: frozenset[int] | None = None

    def sub(self) -> Linearizer:
        return Linearizer(self.ignore_params, shared=self.shared)

    def run(self, seq: Seq, stop_matters: bool = False) -> list[Token]:
        self._seq(seq, stop_matters)
        return self.tokens

    def _seq(self, seq: Seq, stop_matters: bool) -> None:
        for item in seq:
            if isinstance(item, Op):
                if item.param is not None:
                    if not self.ignore_params:
                        self.tokens.append(Token(("param", item.param), item))
                else:
                    self.tokens.append(Token(item.name, item))
            elif isinstance(item, Exit) and item.terminal:
                if item.kind == "abort":
                    self.tokens.append(Token("!", item))
                elif item.kind in ("break", "return") and stop_matters:
                    self.tokens.append(Token("stop", item))
            elif isinstance(item, Choice):
                error_arm = self._one_sided_error_path(item)
                if error_arm is not None:
                    self.tokens.extend(self.sub().run(item.arms[1 - error_arm], stop_matters))
                    continue
                left = self.sub().run(item.arms[0], stop_matters)
                right = self.sub().run(item.arms[1], stop_matters)
                left_keys, right_keys = [t.key for t in left], [t.key for t in right]
                # An arm that always ends the job (raise, sys.exit) is fail-fast: compare the other.
                if aborts(left_keys) and not aborts(right_keys):
                    self.tokens.extend(right)
                elif (aborts(right_keys) and not aborts(left_keys)) or left_keys == right_keys:
                    self.tokens.extend(left)
                else:
                    self.tokens.append(Token(("(", id(item.node)), item))
                    self.tokens.extend(left)
                    self.tokens.append(Token(("|", id(item.node)), item))
                    self.tokens.extend(right)
                    self.tokens.append(Token((")", id(item.node)), item))
            elif isinstance(item, Loop):
                inner = self.sub().run(item.body, has_ops(item.body))
                if inner:
                    self.tokens.append(Token(("[", id(item.node)), item))
                    self.tokens.extend(inner)
                    self.tokens.append(Token(("]", id(item.node)), item))

    def _one_sided_error_path(self, item: Choice) -> int | None:
        """The arm that only leaves (no collective, then `return`), for a one-sided branch."""
        if self.shared is None or id(item.node) in self.shared or item.cond.divergent:
            return None
        for index, arm in enumerate(item.arms):
            last = arm[-1] if arm else None
            # A loop left under a rank test (`if rank == 0: if done: break`) is no error path;
            # a `return` is one, even on one rank (`if is_master: if exists: return -1`).
            if (
                isinstance(last, Exit)
                and last.terminal
                and (last.guard is None or last.kind == "return")
                and not has_ops(arm, count_params=True)
            ):
                return index
        return None


def choice_nodes(seq: Seq) -> frozenset[int]:
    return frozenset(id(item.node) for item in walk(seq) if isinstance(item, Choice))


def aborts(keys: list) -> bool:
    """The tokens end the process on every path (a `raise` or `sys.exit` outside nested branches)."""
    depth = 0
    for key in keys:
        if isinstance(key, tuple) and key[0] in ("(", "["):
            depth += 1
        elif isinstance(key, tuple) and key[0] in (")", "]"):
            depth -= 1
        elif key == "!" and depth == 0:
            return True
    return False


def linearize(
    seq: Seq, *, stop_matters: bool = False, ignore_params: bool = False, shared: frozenset[int] | None = None
) -> list[Token]:
    return Linearizer(ignore_params, shared=shared).run(seq, stop_matters)


def walk(seq: Seq):
    """Every item of the tree, depth first."""
    for item in seq:
        yield item
        if isinstance(item, Choice):
            for arm in item.arms:
                yield from walk(arm)
        elif isinstance(item, Loop):
            yield from walk(item.body)


def ops_of(seq: Seq) -> list[Op]:
    return [item for item in walk(seq) if isinstance(item, Op) and item.param is None]
