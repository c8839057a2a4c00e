"""Simulating one function under one rank class: the values it computes and the collectives it runs.

Rank tests the class can decide take one arm (and are remembered as guards for messages);
uniform tests become choices that every rank takes alike; data-dependent tests become choices
ranks may take differently. Calls into the project inline the callee's summary for the same
class, so a collective two calls down is seen where the chain starts.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ddplint.analysis.divergence import sharding
from ddplint.analysis.divergence.domain import (
    AGREED,
    CHANGED_UNDER_RANK_TEST,
    FUNCTION,
    HELD,
    NONE,
    ONE_PROCESS,
    PARAMS,
    UNIFORM,
    UNWRAPPED,
    WORLD_SIZE,
    WRAPPED,
    Kind,
    OriginLabel,
    Val,
    combine,
    const,
    data,
    first_shard,
    holds_per_rank,
    join,
    main_flag,
    one_of,
    rank_value,
    taint,
)
from ddplint.analysis.divergence.results import Summaries, Summary, Update
from ddplint.analysis.divergence.seq import (
    Choice,
    Exit,
    Guard,
    Loop,
    Op,
    Seq,
    append,
    falls_through,
    matters,
    seq_size,
    walk,
)
from ddplint.model import catalogue as cat
from ddplint.model.catalogue import LibraryCall, Role
from ddplint.model.facts import is_init
from ddplint.model.names import dotted_name, looks_like_data
from ddplint.syntax.lazycst import cst

if TYPE_CHECKING:
    from ddplint.model.facts import ModuleFacts, Scope

# By the operator's class name: libcst is imported only once a module is parsed.
_COMPARE = {
    "Equal": lambda a, b: a == b,
    "NotEqual": lambda a, b: a != b,
    "LessThan": lambda a, b: a < b,
    "LessThanEqual": lambda a, b: a <= b,
    "GreaterThan": lambda a, b: a > b,
    "GreaterThanEqual": lambda a, b: a >= b,
}
MAX_SEQ = 4000  # items in one function's sequence before the simulation gives up on it


class _TooBig(Exception):
    pass


class Simulator:
    def __init__(
        self,
        analysis: Summaries,
        facts: ModuleFacts,
        scope: Scope,
        rank_zero: bool,
        args: tuple[Val | None, ...] | None = None,
        world: str | None = None,
    ) -> None:
        self.analysis = analysis
        # One launch configuration (see catalogue.CONDITIONS), or None for all of them at once:
        # then collectives that exist only under some are kept, with their condition.
        self.world = world
        self.facts = facts
        self.scope = scope
        self.rank_zero = rank_zero
        self.env: dict[str, Val] = {}
        self.seq: Seq = ()
        self.guards: list[Guard] = []
        self.returns: list[Val] = []
        self.no_sync = 0
        self.split_barrier: list[cst.CSTNode] = []  # `with accelerator.main_process_first():`
        self.split_findings: list[tuple[Op, cst.CSTNode]] = []
        # (shard source, loop node, ops): loops over data split per rank, calling collectives.
        self.shard_findings: list[tuple[tuple, cst.CSTNode, list[Op]]] = []
        self.updates: list[Update] = []  # replica state changed here or in callees (DDP013)
        self.mutated: set[str] = set()  # `self.x` objects changed through their own methods
        # Attributes of `self` left holding per-rank data (None once a callee's are unknown), and
        # those of the object whose method was just inlined (see _absorb).
        self.stored: set[str] | None = set()
        self.callee_stored: frozenset[str] | None = None
        self.guarded_calls: set[int] = set()  # parameters called under a rank test
        self.joined = 0  # inside `with model.join():`, uneven inputs are handled
        self.path: list[Val] = []  # divergent tests of the branches being simulated
        # The loops being simulated, innermost last, as the name each iterates and its body (see
        # for_stmt): `len()` of such a name is that loop's own count of iterations.
        self.counted: list[tuple[str, cst.BaseSuite]] = []
        self.complete = True  # False once a callee could not be summarised
        self._class_attr_stack: set[str] = set()
        self._bind_params(args)

    # Entry -------------------------------------------------------------------------------

    def _bind_params(self, args) -> None:
        node = self.scope.node
        if not isinstance(node, cst.FunctionDef):
            return
        for index, name in enumerate(self.scope.params):
            given = args[index] if args is not None and index < len(args) else None
            if given is not None:
                self.env[name] = given.with_deps(frozenset({index}))
            elif name in cat.RANK_NAMES:
                self.env[name] = rank_value(self.rank_zero, f"`{name}`").with_deps(frozenset({index}))
            elif name in cat.MAIN_NAMES:
                self.env[name] = main_flag(self.rank_zero, f"`{name}`").with_deps(frozenset({index}))
            elif name in cat.WORLD_SIZE_NAMES:
                self.env[name] = WORLD_SIZE.with_deps(frozenset({index}))
            elif name in cat.DISTRIBUTED_NAMES:
                # `def train(..., distributed)`: a hang needs a distributed run
                self.env[name] = const(True).with_deps(frozenset({index}))
            elif name == "accelerator":
                self.env[name] = Val(Kind.OBJECT, tag="accelerator", deps=frozenset({index}))
            elif index == 0 and self.analysis.spawned(self.scope):
                # The first parameter of a function given to `mp.spawn` is the process index.
                self.env[name] = rank_value(self.rank_zero, f"`{name}`").with_deps(frozenset({index}))
            else:
                self.env[name] = Val(Kind.UNIFORM, deps=frozenset({index}))

    def run(self) -> Summary:
        node = self.scope.node
        body = node.body
        only = _main_process_decorator(node)
        if only is not None:
            # `@rank_zero_only`, `@accelerator.on_main_process`: the other ranks skip the body.
            if not self.rank_zero:
                return Summary((), NONE)
            self.guards.append(Guard(only, self.facts, f"@{self.facts.text_of(only)}"))
        try:
            if isinstance(node, cst.Module):
                self.block(body)
            else:
                self.suite(body)
        except _TooBig:
            return self.analysis.cut(self.facts, self.scope)
        ret = NONE
        if self.returns:
            ret = self.returns[0]
            for value in self.returns[1:]:
                ret = join(ret, value)
        return Summary(
            self.seq,
            ret,
            complete=self.complete,
            split_findings=self.split_findings,
            shard_findings=self.shard_findings,
            updates=self.updates,
            mutated=frozenset(self.mutated),
            guarded_calls=frozenset(self.guarded_calls),
            stored=frozenset(self.stored) if self.stored is not None else None,
        )

    # Blocks ------------------------------------------------------------------------------

    def emit(self, *items) -> None:
        kept = tuple(item for item in items if matters(item))
        if not kept:
            return  # a branch or loop with no collective and no exit cannot make ranks differ
        self.seq = append(self.seq, kept)
        if seq_size(self.seq) > MAX_SEQ:
            raise _TooBig

    def sub(self, statements) -> tuple[Seq, dict[str, Val], bool]:
        """Simulate a nested block from the current env; return its seq, env and reachability."""
        saved_seq, saved_env = self.seq, self.env
        self.seq, self.env = (), dict(saved_env)
        if isinstance(statements, cst.BaseSuite):
            self.suite(statements)
        else:
            self.block(statements)
        result = (self.seq, self.env, falls_through(self.seq))
        self.seq, self.env = saved_seq, saved_env
        return result

    def suite(self, suite: cst.BaseSuite) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self.block(suite.body)
        else:
            for small in suite.body:
                if not falls_through(self.seq):
                    return
                self.small(small)

    def block(self, statements) -> None:
        for stmt in statements:
            if not falls_through(self.seq):
                return  # unreachable after an unconditional exit
            self.statement(stmt)

    def statement(self, stmt: cst.CSTNode) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if not falls_through(self.seq):
                    return
                self.small(small)
        elif isinstance(stmt, cst.If):
            self.if_stmt(stmt)
        elif isinstance(stmt, cst.For):
            self.for_stmt(stmt)
        elif isinstance(stmt, cst.While):
            self.while_stmt(stmt)
        elif isinstance(stmt, cst.Try):
            self.try_stmt(stmt)
        elif isinstance(stmt, cst.With):
            self.with_stmt(stmt)
        elif isinstance(stmt, cst.Match):
            self.match_stmt(stmt)
        # Nested function and class definitions are simulated when called.

    def small(self, node: cst.BaseSmallStatement) -> None:
        if isinstance(node, cst.Expr):
            self.eval(node.value)
        elif isinstance(node, cst.Assign):
            value = self.eval(node.value)
            for target in node.targets:
                self.assign(target.target, value, node.value)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.eval(node.value), node.value)
        elif isinstance(node, cst.AugAssign):
            value = self.eval(node.value)
            target = node.target.value if isinstance(node.target, cst.Subscript) else node.target
            name = dotted_name(target)  # `loss[0] += out.item()` changes `loss`
            if name is not None:
                self.env[name] = combine([self.lookup(target), value])
                self._note_store(name, self.env[name])
        elif isinstance(node, cst.Return):
            value = self.eval(node.value) if node.value is not None else NONE
            for cond in self.path:
                value = taint(value, cond)  # returned under a divergent test: diverges with it
            self.returns.append(value)
            self.emit(Exit("return", node, self.facts, self._guard()))
        elif isinstance(node, cst.Continue):
            self.emit(Exit("continue", node, self.facts, self._guard()))
        elif isinstance(node, cst.Break):
            self.emit(Exit("break", node, self.facts, self._guard()))
        elif isinstance(node, cst.Raise):
            if node.exc is not None:
                self.eval(node.exc)
            self.emit(Exit("abort", node, self.facts, self._guard()))
        elif isinstance(node, cst.Assert):
            fails = self.eval(node.test).truth() is False
            if fails:  # `assert rank == 0` on another rank: it stops, and the launcher stops the job
                self.emit(Exit("abort", node, self.facts, self._guard()))

    def _guard(self) -> Guard | None:
        return self.guards[-1] if self.guards else None

    # Assignment --------------------------------------------------------------------------

    def assign(self, target: cst.BaseExpression, value: Val, value_node: cst.BaseExpression) -> None:
        name = dotted_name(target)
        if name is not None:
            self._note_store(name, value)
            self.env[name] = value
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            for index, element in enumerate(target.elements):
                if isinstance(value_node, (cst.Tuple, cst.List)) and index < len(value_node.elements):
                    part = self.eval(value_node.elements[index].value, emit=False)
                elif isinstance(value_node, cst.IfExp):
                    part = self._unpacked_arms(value_node, index, len(target.elements))
                else:
                    part = unpacked(value, index, len(target.elements))
                inner = element.value
                if isinstance(inner, cst.StarredElement):
                    inner = inner.value
                self.assign(inner, part, value_node)
        # Subscript targets (`x[i] = v`) change a container: the container absorbs the value.
        elif isinstance(target, cst.Subscript):
            base = dotted_name(target.value)
            if base is not None:
                self._note_store(base, value)
            if base is not None and value.divergent:
                current = self.lookup(target.value)
                if value.kind is Kind.DATA and self._same_keys(target, current):
                    self.env[base] = replace(
                        current, fields=current.fields | {HELD}, origin=current.origin or value.origin
                    )
                else:
                    self.env[base] = combine([current, value])

    def _same_keys(self, target: cst.Subscript, container: Val) -> bool:
        """Whether a store into `container` under this key leaves its keys the same on every rank:
        a key and a container the same everywhere, and no per-rank test on the way here."""
        if container.divergent or any(not c.weak for c in self.path):
            return False
        keys = [e.slice.value for e in target.slice if isinstance(e.slice, cst.Index)]
        if len(keys) != len(target.slice):
            return False  # a slice assignment may change how many items there are
        return not any(self.eval(key, emit=False).divergent for key in keys)

    def _unpacked_arms(self, node: cst.IfExp, index: int, count: int) -> Val:
        """Item `index` of `a if test else (b, None)` unpacked: each arm's item, joined, so that
        `targets` is None exactly where the test says."""
        parts = []
        for arm in (node.body, node.orelse):
            if isinstance(arm, (cst.Tuple, cst.List)) and index < len(arm.elements):
                parts.append(self.eval(arm.elements[index].value, emit=False))
            else:
                parts.append(unpacked(self.eval(arm, emit=False), index, count))
        return taint(join(*parts), self.eval(node.test, emit=False))

    def _note_store(self, name: str, value: Val, parts: frozenset[str] | None = None) -> None:
        """Remember an attribute of `self` given per-rank data, or anything under a per-rank test
        (only the `parts` under it, when those are what holds it)."""
        if self.stored is None or not name.startswith("self."):
            return
        if (value.divergent and not value.weak) or any(not c.weak for c in self.path):
            if parts:
                self.stored.update(f"{name[5:]}.{part}" for part in parts)
            else:
                self.stored.add(name[5:])

    # Compound statements ---------------------------------------------------------------------

    def if_stmt(self, node: cst.If) -> None:
        cond = self.eval(node.test)
        self._branch(node, node.test, cond, node.body, node.orelse)

    def _branch(self, node, test, cond: Val, body, orelse) -> None:
        truth = cond.truth()
        if truth is not None:
            arm = body if truth else orelse
            guarded = cond.rank
            before = dict(self.env)
            if guarded:
                self.guards.append(Guard(test, self.facts, self._text(test)))
            try:
                if arm is not None:
                    self._arm(arm)
            finally:
                if guarded:
                    self.guards.pop()
            if guarded:
                # What one rank class assigned here and the other did not is a hidden rank flag.
                for name, value in self.env.items():
                    if before.get(name) is not value:
                        self.env[name] = _with_rank(value)
            return
        # A rank test this class cannot settle (`args.distributed and rank == 0` on rank 0) still
        # guards what it encloses, for messages.
        # Only a test that names a rank guards what it encloses when this class cannot settle it;
        # values merely touched by a rank somewhere (`data` built with `args.rank`) do not.
        undecided_guard = cond.rank and sharding.mentions_rank(test, cat.RANK_WORDS)
        if undecided_guard:
            self.guards.append(Guard(test, self.facts, self._text(test), decided=False))
        if cond.divergent:
            self.path.append(cond)
        try:
            then_seq, then_env, then_falls = self.sub(
                body.body if isinstance(body, cst.IndentedBlock) else body
            )
            if orelse is None:
                else_seq, else_env, else_falls = (), dict(self.env), True
            elif isinstance(orelse, cst.If):
                saved_seq, saved_env = self.seq, self.env
                self.seq, self.env = (), dict(saved_env)
                self.if_stmt(orelse)
                else_seq, else_env, else_falls = self.seq, self.env, falls_through(self.seq)
                self.seq, self.env = saved_seq, saved_env
            else:
                else_seq, else_env, else_falls = self.sub(orelse.body)
        finally:
            if undecided_guard:
                self.guards.pop()
            if cond.divergent:
                self.path.pop()
        before = self.env
        self.env = self._merge([(then_env, then_falls), (else_env, else_falls)], cond)
        if undecided_guard and not cond.divergent:
            # `if rank == 0 and epoch > 5: stop = True`: this class may change it, the other
            # ranks never do, so what it assigns here differs between ranks.
            flag = Val(Kind.RANK, rank=True, origin=self._origin(test))
            for name, value in self.env.items():
                if before.get(name) is not value:
                    self.env[name] = taint(value, flag)
        self.emit(Choice(node, test, self.facts, cond, (then_seq, else_seq)))

    def _arm(self, arm) -> None:
        if isinstance(arm, cst.If):
            self.if_stmt(arm)
        elif isinstance(arm, cst.Else):
            self.suite(arm.body)
        else:
            self.suite(arm)

    def _merge(self, envs: list[tuple[dict[str, Val], bool]], cond: Val) -> dict[str, Val]:
        live = [env for env, falls in envs if falls] or [env for env, _ in envs]
        merged = dict(live[0])
        for env in live[1:]:
            # A name only `merged` holds keeps its value, and one both hold alike (most of a
            # large function's names, untouched by either arm) joins to itself: only the rest
            # are joined.
            for name, b in env.items():
                a = merged.get(name)
                if a is not b:
                    merged[name] = b if a is None else join(a, b)
        if cond.divergent:
            base = self.env
            for name, value in merged.items():
                if base.get(name) is not value:
                    merged[name] = taint(value, cond)
        return merged

    def for_stmt(self, node: cst.For) -> None:
        iterable = self.eval(node.iter)
        self.assign_loop_target(node.target, node.iter, iterable)
        counted = _iterated_name(node.iter) if iterable.shard is None else None
        if counted is not None:
            # A loop over per-rank items runs as often on every rank (a shard's loop is
            # reported on its own), so `index < len(views) - 1` is the same test everywhere.
            self.counted.append((counted, node.body))
        try:
            self._loop(node, node.body, None)
        finally:
            if counted is not None:
                self.counted.pop()
        last = self.seq[-1] if self.seq else None
        if iterable.shard is not None and not self.joined and isinstance(last, Loop) and last.node is node:
            ops = [op for op in walk(last.body) if isinstance(op, Op) and op.param is None]
            if ops:
                self.shard_findings.append((iterable.shard, node, ops))
        if node.orelse is not None:
            self.suite(node.orelse.body)

    def _counts_iterations(self, name: str | None) -> bool:
        """Whether `len(name)` is the count of iterations of a loop around: one over `name`
        whose body does not give it other contents. Asked only where `len()` reads such a
        name, as walking a long loop body costs more than most of its simulation."""
        return name is not None and any(
            iterated == name and name not in _rebound(body) for iterated, body in self.counted
        )

    def while_stmt(self, node: cst.While) -> None:
        cond = self.eval(node.test)
        if cond.truth() is False:
            return
        self._loop(node, node.body, cond)
        # The test runs again after every iteration: with what the body assigned, too.
        again = self.eval(node.test)
        loop = self.seq[-1] if self.seq and isinstance(self.seq[-1], Loop) else None
        if loop is not None and loop.node is node:
            divergent = cond if cond.divergent else again if again.divergent else None
            if divergent is None and again.rank and not cond.rank:
                # The body changed what the test reads under a rank test (`if rank == 0: epoch =
                # swa_start`): the ranks run different numbers of iterations.
                divergent = Val(
                    Kind.RANK, rank=True, origin=self._origin(node.test), tag=CHANGED_UNDER_RANK_TEST
                )
            self.seq = (*self.seq[:-1], replace(loop, cond=divergent))
        if node.orelse is not None:
            self.suite(node.orelse.body)

    def _loop(self, node, body, cond: Val | None) -> None:
        # `continue` ends one iteration, `break`/`return` the loop: both stay in the body, where
        # the comparison of arms reads them (a shortened loop skips later iterations too).
        body_seq, body_env, _ = self.sub(body)
        for name, value in body_env.items():
            before = self.env.get(name)
            self.env[name] = value if before is None else join(before, value)
        self.emit(Loop(node, self.facts, body_seq, cond))

    def assign_loop_target(self, target, iter_node, iterable: Val) -> None:
        """Items of a data loader are per-rank data; `enumerate`'s counter and `range` are not."""
        inner = iter_node
        while isinstance(inner, cst.Call) and inner.args:
            short = (dotted_name(inner.func) or "").rsplit(".", 1)[-1]
            if short == "enumerate" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
                self.assign(target.elements[0].value, UNIFORM, iter_node)
                self.assign_loop_target(target.elements[1].value, inner.args[0].value, iterable)
                return
            if short == "zip" and isinstance(target, cst.Tuple) and len(target.elements) == len(inner.args):
                for element, arg in zip(target.elements, inner.args):
                    self.assign_loop_target(element.value, arg.value, self.eval(arg.value, emit=False))
                return
            if short not in ("tqdm", "iter", "list", "track", "progress_bar", "enumerate", "zip"):
                break
            inner = inner.args[0].value
        item = iterable
        named_as_data = looks_like_data(inner) and not self._steps(inner)
        if named_as_data or self.analysis.is_loader(self.facts, self.scope, inner):
            item = data(self._origin(inner, "items of `{}`"))
        elif not iterable.rank:
            # Over a literal, or a list this function fills only with literals: each item is
            # one of them, not the whole container.
            literal = self._literal_items(inner)
            known = self._item_of(literal, target, item) if literal is not None else None
            if known is not None:
                self.assign(target, known, None)
                return
        self.assign(target, item, iter_node)

    def _literal_items(self, node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        """The items of a list, tuple or set literal; or of a name this function binds only to
        such literals and changes only by appending to it (`pairs.append(("dev", lang))`):
        None when anything else may put items in it."""
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return _elements(node)
        if not isinstance(node, cst.Name):
            return None
        bound = self.scope.assignments.get(node.value)
        if not bound or not all(isinstance(v, (cst.List, cst.Tuple)) for v in bound):
            return None  # bound elsewhere (a module's constant) or to something else
        written = [_elements(v) for v in bound]
        appended = _appended_only(self.scope.node, node.value)
        if appended is None or None in written:
            return None
        return [item for items in written for item in items] + appended

    def _item_of(self, items: list, target: cst.BaseExpression, fallback: Val) -> Val | None:
        """An item of a container holding `items` (expressions), as `target` takes it: one of
        their constants; for `for split, lang in pairs` over tuples, one of each position's
        constants, the other positions as before. None when nothing is known this way."""
        if not isinstance(target, (cst.Tuple, cst.List)):
            values = [self._literal(item) for item in items]
            return None if None in values else one_of(tuple(v.const for v in values))
        count = len(target.elements)
        if any(isinstance(e.value, cst.StarredElement) for e in target.elements):
            return None
        rows = [_elements(item) if isinstance(item, cst.Tuple) else None for item in items]
        if any(row is None or len(row) != count for row in rows):
            return None
        parts = []
        for index in range(count):
            values = [self._literal(row[index]) for row in rows]
            parts.append(
                unpacked(fallback, index, count) if None in values else one_of(tuple(v.const for v in values))
            )
        return Val(Kind.UNIFORM, items=tuple(parts))

    def _literal(self, node: cst.BaseExpression) -> Val | None:
        """The value of a constant written out (`"dev"`, `-1`, `True`), else None."""
        if isinstance(node, cst.UnaryOperation):  # `-1`, not `not flag`
            written = isinstance(node.expression, (cst.Integer, cst.Float))
        else:
            written = type(node).__name__ in _LITERALS or (
                isinstance(node, cst.Name) and node.value in ("True", "False", "None")
            )
        if not written:
            return None
        value = self.eval(node, emit=False)
        if value.kind is not Kind.CONST or value.rank or type(value.const) not in _PLAIN_CONSTANTS:
            return None
        return value

    def _steps(self, node: cst.BaseExpression, seen: frozenset[int] = frozenset()) -> bool:
        """Whether `node` is a `range(...)`, maybe in a progress bar, or a name this function
        binds to nothing else (`iterator = range(start, steps)`): counters, whatever its name."""
        if isinstance(node, cst.Call):
            qualified = self.facts.imports.resolve_dotted(_call_name(node))
            if qualified == "range":
                return True
            first = node.args[0] if node.args else None
            return (
                qualified in cat.PROGRESS_BARS
                and first is not None
                and first.keyword is None
                and self._steps(first.value, seen)
            )
        bound = self.scope.assignments.get(dotted_name(node) or "")
        if not bound:
            return False
        # `iterator = tqdm(iterator)` binds the name to itself, wrapped: each value is read once.
        ahead = [value for value in bound if id(value) not in seen]
        seen = seen | {id(value) for value in bound}
        return all(self._steps(value, seen) for value in ahead)

    def try_stmt(self, node: cst.Try) -> None:
        self.suite(node.body)
        if node.orelse is not None:
            self.suite(node.orelse.body)
        if node.finalbody is not None:
            self.suite(node.finalbody.body)

    def with_stmt(self, node: cst.With) -> None:
        split = no_sync = joined = False
        for item in node.items:
            self.eval(item.item)
            method = _method_name(item.item)
            if method == "join" or _call_name(item.item).endswith("Join"):
                self.joined += 1
                joined = True
            if method in cat.SPLIT_BARRIER_METHODS:
                split = True
            elif method in cat.NO_SYNC_METHODS:
                no_sync = True
            if item.asname is not None:
                self.assign(item.asname.name, UNIFORM, item.item)
        if split:
            self.split_barrier.append(node)
        if no_sync:
            self.no_sync += 1
        try:
            self.suite(node.body)
        finally:
            if split:
                self.split_barrier.pop()
            if no_sync:
                self.no_sync -= 1
            if joined:
                self.joined -= 1

    def match_stmt(self, node: cst.Match) -> None:
        subject = self.eval(node.subject)
        arms = [self.sub(case.body) for case in node.cases]
        if not arms:
            return
        self.env = self._merge([(env, falls) for _, env, falls in arms], subject)
        seq = arms[-1][0]
        for arm_seq, _, _ in reversed(arms[:-1]):
            seq = (Choice(node, node.subject, self.facts, subject, (arm_seq, seq)),)
        self.emit(*seq)

    # Expressions -------------------------------------------------------------------------

    def eval(self, node: cst.BaseExpression, emit: bool = True) -> Val:
        if not emit:
            saved = self.seq
            value = self.eval(node)
            self.seq = saved
            return value
        # By exact type, not isinstance: libcst's node classes are ABCs, whose failed isinstance
        # checks cost a call each, and every expression walks this chain; none of these
        # classes has subclasses, so the branch taken is the same.
        kind = type(node)
        if kind is cst.Integer:
            try:
                return const(int(node.value.replace("_", ""), 0))
            except ValueError:
                return UNIFORM
        if kind is cst.Float:
            return UNIFORM
        if kind is cst.SimpleString:
            text = self.analysis.string_value(node)
            return const(text) if isinstance(text, str) else UNIFORM
        if kind is cst.Name:
            if node.value in ("True", "False", "None"):
                return const({"True": True, "False": False, "None": None}[node.value])
            return self.lookup(node)
        if kind is cst.Attribute:
            return self.attribute(node)
        if kind is cst.Call:
            return self.call(node)
        if kind is cst.Comparison:
            return self.comparison(node)
        if kind is cst.BooleanOperation:
            return self.boolean(node)
        if kind is cst.UnaryOperation:
            operand = self.eval(node.expression)
            if isinstance(node.operator, cst.Not):
                truth = operand.truth()
                if truth is not None:
                    return const(not truth, rank=operand.rank)
            if (
                isinstance(node.operator, cst.Minus)
                and operand.kind is Kind.CONST
                and isinstance(operand.const, int)
            ):
                return const(-operand.const, rank=operand.rank)
            return combine([operand])
        if kind is cst.BinaryOperation:
            return self.binary(node)
        if kind is cst.IfExp:
            cond = self.eval(node.test)
            truth = cond.truth()
            if truth is not None:
                value = self.eval(node.body if truth else node.orelse)
                # `x if rank == 0 else None` is a hidden rank flag: None-ness follows the rank.
                return _with_rank(value) if cond.rank else value
            return taint(join(self.eval(node.body), self.eval(node.orelse)), cond)
        if kind in (cst.Tuple, cst.List, cst.Set):
            values = [self.eval(e.value) for e in node.elements]
            if values and all(v.kind is Kind.CONST for v in values):
                return const(tuple(v.const for v in values), rank=any(v.rank for v in values))
            starred = any(isinstance(e, cst.StarredElement) for e in node.elements)
            items = tuple(values) if kind is cst.Tuple and not starred else None
            return replace(combine(values), items=items)
        if kind is cst.Dict:
            return self.dict_display(node)
        if kind is cst.Subscript:
            return self.subscript(node)
        if kind in (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp):
            return self.comprehension(node)
        if kind in (cst.Await, cst.Yield):
            inner = node.expression if kind is cst.Await else node.value
            if isinstance(inner, cst.BaseExpression):
                return self.eval(inner)
            return UNIFORM
        if kind is cst.NamedExpr:
            value = self.eval(node.value)
            self.assign(node.target, value, node.value)
            return value
        if kind is cst.Lambda:
            return Val(Kind.OBJECT)
        if kind is cst.FormattedString:
            # Calls inside an f-string run too: `print(f"{evaluate(model):.2f}")`.
            parts = [
                self.eval(p.expression) for p in node.parts if isinstance(p, cst.FormattedStringExpression)
            ]
            return combine(parts)
        values = [self.eval(c) for c in _expr_children(node)]
        return combine(values)

    def dict_display(self, node: cst.Dict) -> Val:
        """`{"loss": loss, **extra}`: per-rank values under keys the same on every rank are what
        it holds (see HELD); per-rank keys make all of it per-rank."""
        keys, values = [], []
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                keys.append(self.eval(element.key))
            values.append(self.eval(element.value))
        held = [v for v in values if v.kind is Kind.DATA or HELD in v.fields]
        if any(k.divergent for k in keys) or not held or any(v.kind is Kind.RANK for v in values):
            return combine(keys + values)
        return Val(Kind.OBJECT, fields=frozenset({HELD}), origin=held[0].origin)

    def lookup(self, node: cst.BaseExpression) -> Val:
        name = dotted_name(node)
        if name is None:
            return self.eval(node)
        if name in self.env:
            return self.env[name]
        holder = name
        while "." in holder:  # `stopper.early_stop` of a stopper that holds per-rank state
            holder = holder.rsplit(".", 1)[0]
            known = self.env.get(holder)
            if known is not None and known.divergent:
                return combine([known])
            if known is not None and known.fields and holds_per_rank(known.fields, name[len(holder) + 1 :]):
                return Val(Kind.DATA, origin=known.origin)
        last = name.rsplit(".", 1)[-1]
        if name.startswith("self.") and self.scope.class_name is not None:
            value = self.analysis.class_attr(self.facts, self.scope.class_name, name[5:], self.rank_zero)
            if value is not None:
                return value
        if "." not in name:
            value = self.analysis.module_global(self.facts, name, self.rank_zero)
            if value is not None:
                return value
            named = name in self.facts.functions or name in self.facts.imports.aliases
            if named and self.analysis.resolve(self.facts, self.scope, node, None):
                # `if is_main_process:` naming a function, not calling it: always true
                return Val(Kind.OBJECT, tag=FUNCTION)
        if last in cat.RANK_NAMES:
            return rank_value(self.rank_zero, f"`{name}`")
        if last in cat.MAIN_NAMES:
            return main_flag(self.rank_zero, f"`{name}`")
        distributed = _distributed_name(last)
        if distributed is not None:
            return distributed
        if last == "accelerator":
            return Val(Kind.OBJECT, tag="accelerator")
        return UNIFORM

    def attribute(self, node: cst.Attribute) -> Val:
        name = dotted_name(node)
        if self.world is not None:
            known = self._launch_attribute(node, name)
            if known is not None:
                return known
        if name is not None and (name in self.env or name.startswith("self.")):
            return self.lookup(node)
        base = self.eval(node.value)
        attr = node.attr.value
        if base.fields and not base.divergent:
            per_rank = Val(Kind.DATA, origin=base.origin)
            if holds_per_rank(base.fields, attr):
                return per_rank  # one of the attributes holding per-rank data
            method = self.analysis.resolve(self.facts, self.scope, node, base)
            if method is not None:
                # A property is read on the object; another method may read them all.
                return self._read_through(method, base) or per_rank
        if base.tag == ONE_PROCESS and (attr in cat.RANK_NAMES or attr in cat.MAIN_NAMES):
            return const(0 if attr in cat.RANK_NAMES else True)  # `Trainer(devices=1).global_rank`
        if attr in cat.RANK_NAMES:
            return rank_value(self.rank_zero, f"`{self._text(node)}`")
        if attr in cat.MAIN_NAMES:
            return main_flag(self.rank_zero, f"`{self._text(node)}`")
        distributed = _distributed_name(attr)
        if distributed is not None:
            return distributed
        if attr == "n" and base.tag == "progress-off":
            return const(0, rank=True)
        if attr == "n" and base.tag == "progress-counting":
            return Val(Kind.RANK, rank=True, origin=self._origin(node))
        if attr == "data" and base.tag == PARAMS:
            return base  # `p.data` of a parameter is that parameter's storage
        if attr in cat.TENSOR_METADATA and base.kind is Kind.DATA:
            return Val(Kind.UNIFORM, deps=base.deps)  # `hidden.requires_grad`: the code decides it
        if attr == "type" and _names_a_device(node.value) and base.divergent:
            return Val(Kind.UNIFORM, deps=base.deps)  # `t.device.type`: "cuda" on every rank
        if attr == "grad":
            # Whether a parameter got a gradient, and its value, follow this rank's batch.
            return data(self._origin(node))
        if attr == "module" and (base.tag in WRAPPED or base.kind in (Kind.OBJECT, Kind.UNIFORM)):
            # the module inside a wrapper: its forward is no collective, whatever it was given
            return Val(Kind.OBJECT, deps=base.deps, tag=UNWRAPPED)
        if name is not None and name in self.env:
            return self.env[name]
        if base.kind is Kind.OBJECT and not base.divergent:
            return Val(Kind.UNIFORM, deps=base.deps, tag="accelerator" if attr == "accelerator" else None)
        return combine([base])

    def _read_through(self, target, base: Val) -> Val | None:
        """`detector.should_rollback`, a property of an object some of whose attributes hold
        per-rank data: what it returns, simulated on that object (None when it is no property,
        or runs a collective)."""
        callee_facts, callee = target
        if not _is_property(callee.node):
            return None
        bound = (base, *(None for _ in callee.params[1:]))
        summary = self.analysis.summary(callee_facts, callee, self.rank_zero, bound, self.world)
        if not summary.complete or any(isinstance(item, Op) for item in walk(summary.seq)):
            return None
        return _substitute(summary.ret, bound)

    def _launch_attribute(self, node: cst.Attribute, name: str | None) -> Val | None:
        """What the code reads of its launch configuration, in the one simulated: accelerate's
        `distributed_type`, `DistributedType.X`, `state.deepspeed_plugin`/`fsdp_plugin`."""
        attr = node.attr.value
        qualified = self.facts.imports.resolve_dotted(name) if name else ""
        if qualified.rsplit(".", 1)[0].endswith("DistributedType"):
            return const(attr)
        if attr == "distributed_type":
            return const(cat.ACCELERATE_TYPE[self.world])
        if attr in cat.PLUGINS:
            return Val(Kind.OBJECT) if cat.PLUGINS[attr] == self.world else NONE
        return None

    def subscript(self, node: cst.Subscript) -> Val:
        base_name = dotted_name(node.value)
        if base_name is not None and self.facts.imports.resolve_dotted(base_name) == "os.environ":
            return self._environ(_string_key(node), node)
        base = self.eval(node.value)
        if HELD in base.fields and not base.divergent:
            base = Val(Kind.DATA, origin=base.origin)  # one of the values it holds
        if self._is_split(node):
            return replace(combine([base]), shard=(self.facts, node))
        indexes = []
        for element in node.slice:
            part = element.slice
            if isinstance(part, cst.Index):
                indexes.append(self.eval(part.value))
            elif isinstance(part, cst.Slice):
                for bound in (part.lower, part.upper, part.step):
                    if bound is not None:
                        indexes.append(self.eval(bound))
        return combine([base, *indexes])

    def _is_split(self, node: cst.Subscript) -> bool:
        facts, scope = self.facts, self.scope
        if sharding.split_then_index(facts, scope, node):
            return True
        if sharding.strided_slice(node) or sharding.ragged_block(facts, scope, node):
            return not sharding.padded(facts, scope, sharding.sliced_names(node))
        return False

    def comparison(self, node: cst.Comparison) -> Val:
        left = self.eval(node.left)
        result: Val | None = None
        for target in node.comparisons:
            right = self.eval(target.comparator)
            step = self._launcher_sets(node.left, target) or _compare(target.operator, left, right)
            if step.kind is Kind.RANK and step.origin is None:
                step = Val(Kind.RANK, rank=True, origin=self._origin(node))
            result = step if result is None else _and(result, step)
            left = right
        return result or UNIFORM

    def _launcher_sets(self, left: cst.BaseExpression, target: cst.ComparisonTarget) -> Val | None:
        """`"LOCAL_RANK" in os.environ`: in a launched run, the only kind that can hang, the launcher
        set it."""
        spelled = dotted_name(target.comparator)
        if not isinstance(left, cst.SimpleString) or spelled is None:
            return None
        if self.facts.imports.resolve_dotted(spelled) != "os.environ":
            return None
        key = self.analysis.string_value(left)
        if key not in cat.RANK_ENV_VARS and key not in cat.WORLD_SIZE_ENV_VARS:
            return None
        return const(isinstance(target.operator, cst.In))

    def boolean(self, node: cst.BooleanOperation) -> Val:
        left = self.eval(node.left)
        truth = left.truth()
        is_and = isinstance(node.operator, cst.And)
        if truth is not None and truth != is_and:
            return left  # short-circuit: `False and x`, `True or x`
        right = self.eval(node.right)
        if truth is not None:
            return right if not left.rank else _with_rank(right)
        return _and(left, right) if is_and else _or(left, right)

    def binary(self, node: cst.BinaryOperation) -> Val:
        left, right = self.eval(node.left), self.eval(node.right)
        if left.kind is Kind.CONST and right.kind is Kind.CONST:
            try:
                value = _BINARY[type(node.operator).__name__](left.const, right.const)
                return const(value, rank=left.rank or right.rank)
            except Exception:
                pass
        if Kind.NONZERO in (left.kind, right.kind):
            origin = self._origin(node)
            return Val(Kind.RANK, rank=True, origin=origin, deps=left.deps | right.deps)
        return combine([left, right])

    def comprehension(self, node) -> Val:
        saved_env = dict(self.env)
        values = []
        for clause in _for_clauses(node.for_in):
            iterable = self.eval(clause.iter)
            self.assign_loop_target(clause.target, clause.iter, iterable)
            values.append(iterable)
            for condition in clause.ifs:
                values.append(self.eval(condition.test))
        saved_seq = self.seq
        self.seq = ()
        elements = [node.key, node.value] if isinstance(node, cst.DictComp) else [node.elt]
        values.extend(self.eval(e) for e in elements)
        body, self.seq = self.seq, saved_seq
        if body:
            self.emit(Loop(node, self.facts, body, None))
        self.env = saved_env
        return combine(values)

    # Calls -------------------------------------------------------------------------------

    def call(self, node: cst.Call) -> Val:
        func = node.func
        receiver: Val | None = None
        if isinstance(func, cst.Attribute):
            receiver = self.eval(func.value)
        # What is called, when it is a name or an attribute (`model(x)`, `self.model(x)`).
        callee_value = self.lookup(func) if isinstance(func, cst.Name) else None
        if isinstance(func, cst.Attribute) and dotted_name(func.value) == "self":
            callee_value = self.lookup(func)
        args = [self.eval(arg.value) for arg in node.args]
        dotted = dotted_name(func)
        qualified = self.facts.imports.resolve_dotted(dotted) if dotted else None
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        analysis = self.analysis

        if method in cat.CONTAINER_MUTATORS and isinstance(func, cst.Attribute):
            holder = dotted_name(func.value)
            if holder is not None:
                self._note_store(holder, combine(args))  # `self.window.append(loss)`
        library = analysis.library_call(qualified) if qualified is not None else None
        if library is not None and self._exists(library):
            return self._library_call(library, qualified, node, func, args)
        if qualified == "next" and node.args:
            # `next(loader_iter)` yields per-rank data; `next(iter(config))` does not.
            source = node.args[0].value
            inner = (
                source.args[0].value
                if isinstance(source, cst.Call) and _call_name(source) == "iter" and source.args
                else source
            )
            if looks_like_data(inner) or self.analysis.is_loader(self.facts, self.scope, inner):
                return data(self._origin(node))
            return combine(args)
        if (
            qualified in sharding.ISLICE
            and len(node.args) >= 2
            and sharding.mentions_rank(node.args[1].value)
        ):
            return replace(combine(args), shard=(self.facts, node))
        if (
            qualified in sharding.STRIDED_RANGES
            and len(node.args) >= 3
            and sharding.mentions_rank(node.args[0].value)
            and not sharding.padded(self.facts, self.scope)
        ):
            # `range(rank, len(dataset), world_size)`: every world_size-th index, unpadded.
            return replace(combine(args), shard=(self.facts, node))
        world = launch_class_test(self.facts, node) if self.world is not None else None
        if world is not None:
            return const(world == self.world)  # `isinstance(model, FSDP)` in this configuration
        if qualified in cat.ONE_PROCESS_LAUNCHERS and _one_process(node):
            return Val(Kind.OBJECT, tag=ONE_PROCESS)
        if qualified in cat.GRADIENT_NORMS and args and args[0].tag == PARAMS and not self.no_sync:
            return AGREED  # of a DDP model's parameters: its backward averaged the gradients
        if qualified in cat.PROGRESS_BARS:
            disable = _keyword(node, "disable")
            off = self.eval(disable, emit=False) if disable is not None else None
            if off is not None and off.rank and off.truth() is not None:
                # Its counter (`bar.n`) moves only where it is on: on the other ranks it stays 0.
                return Val(Kind.OBJECT, tag="progress-off" if off.truth() else "progress-counting")
            if node.args and node.args[0].keyword is None and not node.args[0].star:
                # A bar iterates as what it wraps: `if rank == 0: steps = tqdm(steps)` leaves
                # every rank the same steps (the very value, so no path makes it differ).
                return args[0]
        if (
            qualified == "len"
            and len(node.args) == 1
            and self._counts_iterations(dotted_name(node.args[0].value))
        ):
            return UNIFORM  # the count of iterations of the loop over it
        if qualified in ("int", "bool", "float", "str") and len(args) == 1:
            return _convert(qualified, args[0])
        if qualified in cat.TYPE_TESTS and args and args[0].kind is Kind.DATA:
            return Val(Kind.UNIFORM, deps=args[0].deps)  # a batch's type: see _structural_key
        if qualified == "os.environ.get" or qualified == "os.getenv":
            return self._environ(_string_arg(node), node)

        if (
            qualified is not None
            and qualified.startswith("torch.nn.init.")
            and args
            and args[0].tag == PARAMS
        ):
            self._note_write(node, func)  # `torch.nn.init.zeros_(p)` on a parameter of the DDP model
        if method is not None and receiver is not None:
            if method in ("parameters", "named_parameters") and receiver.tag in (*WRAPPED, UNWRAPPED):
                return Val(Kind.OBJECT, tag=PARAMS)
            if receiver.tag == PARAMS and method.endswith("_") and not method.startswith("_"):
                self._note_write(node, func)  # `p.data.copy_(...)`, `p.zero_()`
            self._note_update(node, func, method, receiver)
            if method == "get" and args and _structural_key(args[0], receiver):
                return replace(combine([receiver]), null=Kind.UNIFORM)  # `batch.get("mask")`
            handled = self._method(node, method, receiver, func, args)
            if handled is not None:
                return handled
        if callee_value is not None and callee_value.tag in WRAPPED:
            source = next(iter(callee_value.deps)) if len(callee_value.deps) == 1 else None
            self._op(
                "ddp.forward", func, node, ddp_expr=func, from_param=source, partial=callee_value.partial
            )
            return combine(args)
        if self._is_bare_param(func, callee_value):
            (param,) = callee_value.deps
            if self._guard() is not None:
                self.guarded_calls.add(param)
            op = Op(
                "param",
                self._text(func),
                node,
                self.facts,
                (self.facts, node),
                param=param,
                guard=self._guard(),
                ddp_expr=func,
            )
            self.seq = append(self.seq, (op,))

        target = analysis.resolve(self.facts, self.scope, func, receiver)
        if target is not None:
            result = self._inline(node, target, args, receiver)
            self._absorb(func, target[1], args)
            return result
        if method is not None and isinstance(func, cst.Attribute):
            receiver_name = dotted_name(func.value) or ""
            if receiver_name == "self":
                receiver_name = self._library_base() or ""
            named = analysis.named_method(self.facts, receiver_name, method)
            if named is not None and named.role is Role.COLLECTIVE and self._exists(named):
                self._op(self._text(func), func, node, when=named.when, why=named.why)
                return UNIFORM
            guessed = analysis.guess_method(self.facts, self.scope, func)
            if guessed is not None:
                self._inline(node, guessed, args, receiver)  # its collectives; its result stays unknown
                self._absorb(func, guessed[1], args)  # and the state it changes on its object
        if dotted is not None:
            last = dotted.rsplit(".", 1)[-1]
            if last in cat.RANK_FUNCTION_NAMES:
                return rank_value(self.rank_zero, self._origin(node))
            if last in cat.MAIN_FUNCTION_NAMES:
                return main_flag(self.rank_zero, self._origin(node))
            if last in cat.WORLD_SIZE_FUNCTION_NAMES:
                return WORLD_SIZE
            if last[:1].isupper():
                # A constructed object: not None; a loader or subset of a shard is one too.
                return Val(Kind.OBJECT, shard=first_shard(args))
        return combine([*(a for a in args), *([receiver] if receiver is not None else [])])

    def _exists(self, library: LibraryCall) -> bool:
        """Is this a collective in the launch configuration simulated (always, with none)?"""
        return self.world is None or not library.when or self.world in library.when

    def _environ(self, key: str | None, node: cst.CSTNode) -> Val:
        """`os.environ["RANK"]`, `os.getenv("WORLD_SIZE")`: what the launcher set for this process."""
        if key in cat.RANK_ENV_VARS:
            return rank_value(self.rank_zero, f"`{self._text(node)}`")
        if key in cat.WORLD_SIZE_ENV_VARS:
            return WORLD_SIZE
        return UNIFORM

    def _library_call(self, library: LibraryCall, qualified: str, node: cst.Call, func, args) -> Val:
        """What a call the catalogue describes does (see ddplint.model.catalogue.FUNCTIONS)."""
        role = library.role
        if role is Role.EXIT:
            self.emit(Exit("abort", node, self.facts, self._guard()))
            return UNIFORM
        if role is Role.COLLECTIVE:
            self._op(qualified, func, node, when=library.when, why=library.why)
            short = qualified.rsplit(".", 1)[-1]
            if short in cat.IN_PLACE_OUTPUT and node.args:
                out = dotted_name(node.args[0].value)
                if out is not None:
                    self.env[out] = AGREED
            return AGREED
        if role is Role.RANK:
            return rank_value(self.rank_zero, self._origin(node))
        if role is Role.MAIN:
            return main_flag(self.rank_zero, self._origin(node))
        if role is Role.DATA:
            if any(a.divergent for a in args):
                return combine(args)  # keep the root cause: `isnan(loss)` diverges through `loss`
            if args and qualified in cat.NUMERIC_TESTS and combine(args).agreed:
                return AGREED  # `math.isnan(reduced_loss)`: the same number on every rank
            return data(self._origin(node))
        if role is Role.WRAPPER:
            self._op(qualified, func, node, what="DDP construction")
            buffers = _keyword(node, "broadcast_buffers")
            off = isinstance(buffers, cst.Name) and buffers.value == "False"
            return Val(Kind.OBJECT, tag=library.tag or ("ddp-nobuf" if off else "ddp"))
        if role is Role.ENGINE:
            return Val(Kind.OBJECT, tag=library.tag)
        if role is Role.WORLD_SIZE:
            return WORLD_SIZE
        if role is Role.SAME and args:
            return args[0]
        if role is Role.SHARD:
            return replace(combine(args), shard=(self.facts, node))
        if role is Role.DISTRIBUTED:
            return const(True)
        return UNIFORM

    def _is_bare_param(self, func, value: Val | None) -> bool:
        """`f(...)` where `f` is still exactly a parameter: a collective if the caller passes DDP."""
        return (
            isinstance(func, cst.Name)
            and value is not None
            and func.value in self.scope.params
            and value.kind is Kind.UNIFORM
            and len(value.deps) == 1
        )

    def _method(self, node, method: str, receiver: Val, func: cst.BaseExpression, args) -> Val | None:
        tag = receiver.tag
        if method == "backward":
            if tag == "accelerator" or tag == "deepspeed":
                self._op(f"{tag}.backward", func, node, what="gradient all-reduce")
                return UNIFORM
            if self.analysis.distributed(self.facts) and not self.no_sync:
                self._op("backward", func, node, what="DDP gradient all-reduce")
            return UNIFORM
        library = cat.METHODS.get(tag or "", {}).get(method)
        if library is not None and library.role is Role.COLLECTIVE and self._exists(library):
            self._op(f"{tag}.{method}", func, node, when=library.when, why=library.why)
            return UNIFORM
        if tag in WRAPPED and method == "forward":
            self._op("ddp.forward", func, node, what="DDP forward")
            return combine(args)
        receiver_name = dotted_name(node.func.value) or ""
        if receiver_name == "self" and method in cat.LIGHTNING_COLLECTIVES and self._lightning_class():
            self._op(f"lightning.{method}", func, node)
            return UNIFORM
        if receiver_name == "self" and method == "log" and _keyword_true(node, "sync_dist"):
            self._op("lightning.log(sync_dist=True)", func, node)
            return UNIFORM
        if method in ("prepare", "setup_dataloaders", "prepare_data_loader"):
            # accelerate and Fabric re-shard and pad loaders (`even_batches`).
            return replace(combine([receiver, *args]), shard=None)
        if method in ("item", "tolist", "cpu", "numpy", "detach", "clone", "float", "int", "sum", "mean"):
            return combine([receiver, *args])
        if HELD in receiver.fields and not receiver.divergent:
            return _held_by(receiver, method)
        return None

    def _library_base(self) -> str | None:
        """For `self.m()` in a subclass of a library class the catalogue knows methods of by
        their receiver's name (`class MyTrainer(transformers.Trainer)`): that name."""
        node = self.facts.classes.get(self.scope.class_name or "")
        for base in node.bases if node is not None else ():
            name = self.facts.qualname(base.value) or ""
            if name.split(".", 1)[0] in cat.LIBRARY_ROOTS:
                return name.rsplit(".", 1)[-1].lower()
        return None

    def _lightning_class(self) -> bool:
        node = self.facts.classes.get(self.scope.class_name or "")
        if node is None:
            return False
        return any("Lightning" in (dotted_name(base.value) or "") for base in node.bases)

    def _op(
        self,
        name,
        func,
        node,
        *,
        what: str | None = None,
        ddp_expr=None,
        from_param=None,
        when=frozenset(),
        why: str = "",
        partial: bool = False,
    ) -> None:
        op = Op(
            name,
            self._text(func),  # as the call spells it
            node,
            self.facts,
            (self.facts, node),
            guard=self._guard(),
            ddp_expr=ddp_expr,
            from_param=from_param,
            when=when if self.world is None else frozenset(),
            why=why,
            partial=partial,
            subgroup=_on_subgroup(node),
        )
        if self.split_barrier:
            self.split_findings.append((op, self.split_barrier[-1]))
        self.emit(op)

    def _inline(self, node: cst.Call, target, args: list[Val], receiver: Val | None) -> Val:
        callee_facts, callee_scope = target
        params = callee_scope.params
        offset = 1 if callee_scope.class_name is not None and params[:1] in (["self"], ["cls"]) else 0
        bound: list[Val | None] = [None] * len(params)
        if offset and receiver is not None:
            bound[0] = receiver
        arg_nodes: list[cst.BaseExpression | None] = [None] * len(params)
        position = offset
        for arg, value in zip(node.args, args):
            if arg.star:
                continue
            if arg.keyword is not None:
                if arg.keyword.value in params:
                    index = params.index(arg.keyword.value)
                    bound[index], arg_nodes[index] = value, arg.value
            elif position < len(params):
                bound[position], arg_nodes[position] = value, arg.value
                position += 1
        self.callee_stored = None
        shard = self.analysis.shard_of(callee_facts, callee_scope)
        if shard is not None:
            return Val(Kind.OBJECT, shard=shard)  # iterating it yields this rank's share only
        reach, special, calls_param = self.analysis.flags(callee_facts, callee_scope)
        # A helper handed per-rank data that tests its shape (`if "mask" in batch: ... else None`)
        # returns what is None alike on every rank: only its simulation tells.
        # So does a method storing what it is handed: which of its object's attributes it fills.
        given_data = any(v is not None and v.kind is Kind.DATA for v in bound)
        shaped = given_data and (callee_scope.tests_shape or callee_scope.stores_on_self)
        wrapped = calls_param and any(v is not None and v.tag in WRAPPED for v in bound)
        if not (reach or special or wrapped or shaped):
            # Nothing in there can run a collective or produce a rank: the result follows the
            # inputs. (Read before the callee's literal defaults, which are uniform and would
            # change nothing here, so that its module's tree may stay unread.)
            if is_init(callee_scope):
                # An instance of a project class; a sampler or loader over a shard is one too.
                return Val(Kind.OBJECT, shard=first_shard([v for v in bound if v is not None]))
            if self.analysis.unwraps(callee_scope):
                return Val(Kind.OBJECT, tag=UNWRAPPED)
            return combine([v for v in bound if v is not None])
        for index, default in _literal_defaults(callee_scope.node).items():
            if bound[index] is None and arg_nodes[index] is None:
                bound[index] = self.eval(default, emit=False)  # not passed: the default decides
        summary = self.analysis.summary(callee_facts, callee_scope, self.rank_zero, tuple(bound), self.world)
        name = callee_scope.name
        self.callee_stored = summary.stored
        if (
            isinstance(node.func, cst.Attribute)
            and dotted_name(node.func.value) == "self"
            and self.stored is not None
        ):
            # `self.record(loss)`: what it stores on this object, this method leaves there too.
            self.stored = self.stored | summary.stored if summary.stored is not None else None
        # What the callee finds in this calling context (a shard it was handed) is found here too.
        self.shard_findings.extend(summary.shard_findings)
        self.updates.extend(
            replace(u, site=node, site_facts=self.facts, guard=u.guard or self._guard(), via=(name, *u.via))
            for u in summary.updates
        )
        for index in summary.guarded_calls:  # `run_on_main(stopper.update, ...)`
            passed = arg_nodes[index] if index < len(arg_nodes) else None
            if isinstance(passed, cst.Attribute):
                method = self.analysis.resolve(self.facts, self.scope, passed, None)
                if method is not None:
                    guard = Guard(passed, self.facts, f"{self._text(node.func)}(...)")
                    self._absorb(passed, method[1], [], guard=guard)
        if (
            summary.mutated
            and isinstance(node.func, cst.Attribute)
            and dotted_name(node.func.value) == "self"
        ):
            for holder in summary.mutated:  # `self.on_stage_end(...)` changing `self.counter`
                self._mutate(holder)
        self.complete = self.complete and summary.complete
        self.emit(*self._rebase(summary.seq, node, name, bound, arg_nodes))
        return _substitute(summary.ret, bound)

    def _note_update(self, node: cst.Call, func: cst.Attribute, method: str, receiver: Val) -> None:
        """`optimizer.step()`, `scheduler.step()`, `scaler.update()`, and, on a model DDP wrapped
        (or its `.module`), `load_state_dict()`/`apply()`: state the replicas must hold alike."""
        spelled = dotted_name(func.value)
        if spelled is None or method not in cat.REPLICA_METHODS:
            return  # most method calls: no name or constructor to read
        if receiver.tag in (*WRAPPED, UNWRAPPED):
            kind = "model"
        elif self.analysis.distributed(self.facts):
            kind = cat.replica_kind(spelled) or self._built_kind(spelled)
        else:
            return
        if kind == "scheduler" and method == "step" and len(node.args) >= 3:
            return  # a diffusion sampler's `step(model_output, t, sample)`: no learning rate moves
        for state in cat.REPLICA_STATES:
            if state.kind == kind and method in state.methods:
                self._note_write(node, func, state)
                return

    def _note_write(
        self, node: cst.Call, func: cst.BaseExpression, state: cat.ReplicaState = cat.PARAMETER_WRITE
    ) -> None:
        """Record a change of replica state made here (under the rank test around it, if any)."""
        label = f"`{self._text(func)}()`"
        self.updates.append(Update(state, label, node, self.facts, node, self.facts, self._guard()))

    def _built_kind(self, name: str) -> str | None:
        """The replica state a name holds by what built it (`plateau = ReduceLROnPlateau(...)`)."""
        for value in self.facts.values_of(self.scope, name):
            if isinstance(value, cst.Call):
                kind = cat.built_replica_kind(self.facts.qualname(value.func) or "")
                if kind is not None:
                    return kind
        return None

    def _absorb(
        self, func: cst.BaseExpression, callee: Scope, args: list[Val], guard: Guard | None = None
    ) -> None:
        """A method of a project object that stores what it is given (`early_stopping(val_loss)`,
        `stopper.update(loss)`) holds per-rank data afterwards when it was given some: what is
        read from the object later (`early_stopping.early_stop`) differs between ranks."""
        node = func.value if isinstance(func, cst.Attribute) else func
        holder = dotted_name(node)
        if holder is None or holder == "self" or callee.class_name is None or is_init(callee):
            return
        if not callee.stores_on_self:
            return  # it stores nothing
        given = [a for a in args if a is not None and a.kind is Kind.DATA and not a.weak]
        stored = self.callee_stored if guard is None else None
        if given and stored is not None:
            # Only the attributes the method filled with it hold per-rank data.
            current = self.lookup(node)
            if stored and not current.divergent:
                fields = current.fields | stored
                self.env[holder] = replace(current, fields=fields, origin=current.origin or given[0].origin)
            self._note_store(holder, Val(Kind.OBJECT) if not stored else given[0], stored)
        elif given:
            self.env[holder] = combine([self.lookup(node), *given])
            self._note_store(holder, self.env[holder])
        self._mutate(holder, guard)

    def _mutate(self, holder: str, guard: Guard | None = None) -> None:
        """An object changed through its own method: under a rank test (here, or in the callee
        it was handed to), only some ranks changed it, and what is read from it later
        (`self.counter.should_stop`) differs."""
        if holder.startswith("self."):
            self.mutated.add(holder)
        guard = guard or self._guard()
        if guard is not None:
            self.env[holder] = Val(Kind.RANK, rank=True, origin=self._origin(guard.node))

    def _rebase(self, seq: Seq, site, name: str, bound, arg_nodes) -> Seq:
        """A callee's sequence as seen from this call: its ops now sit at `site`, and its
        `return`s end the callee, not the caller's flow (one pass over the tree: a pass per
        nesting level was quadratic in the depth)."""
        out = []
        for item in seq:
            if isinstance(item, Op):
                op = self._rebase_op(item, site, name, bound, arg_nodes)
                if op is not None:
                    out.append(op)
            elif isinstance(item, Choice):
                arms = tuple(self._rebase(arm, site, name, bound, arg_nodes) for arm in item.arms)
                out.append(replace(item, arms=arms))
            elif isinstance(item, Loop):
                out.append(replace(item, body=self._rebase(item.body, site, name, bound, arg_nodes)))
            elif isinstance(item, Exit) and item.kind == "return":
                out.append(replace(item, inlined=True))
            else:
                out.append(item)
        return tuple(out)

    def _rebase_op(self, op: Op, site, name: str, bound, arg_nodes) -> Op | None:
        moved = replace(
            op, site=site, facts=self.facts, via=(name, *op.via), guard=self._guard(), resolved_here=False
        )
        # Which of the callee's parameters the op depends on, and what this call passed there.
        index = op.param if op.param is not None else op.from_param
        if index is None:
            return replace(moved, ddp_expr=None)
        value = bound[index] if index < len(bound) else None
        arg = arg_nodes[index] if index < len(arg_nodes) else None
        mine = next(iter(value.deps)) if value is not None and len(value.deps) == 1 else None
        # The model came in through this call's argument; unless it came into this function
        # through a parameter too, this call is where it is known to be wrapped.
        known_here = mine is None
        partial = op.partial or (value is not None and value.partial)
        if op.param is None:  # a DDP forward through a parameter the caller filled
            return replace(moved, ddp_expr=arg, from_param=mine, resolved_here=known_here, partial=partial)
        if value is not None and value.tag in WRAPPED:  # the placeholder resolves: a DDP forward
            return replace(
                moved,
                name="ddp.forward",
                param=None,
                ddp_expr=arg,
                from_param=mine,
                resolved_here=known_here,
                partial=partial,
            )
        if value is not None and value.kind is Kind.UNIFORM and mine is not None:
            return replace(moved, param=mine, ddp_expr=arg)  # still unknown: ask our caller
        return None  # not a DDP-wrapped module: no collective

    # Helpers -----------------------------------------------------------------------------

    def _text(self, node: cst.CSTNode) -> str:
        text = self.facts.text_of(node)
        text = " ".join(text.split())
        return text if len(text) <= 60 else text[:57] + "..."

    def _origin(self, node: cst.CSTNode, template: str = "`{}`") -> OriginLabel:
        facts, scope = self.facts, self.scope
        label = template.format(self._text(node))
        return OriginLabel(label, facts.path.name, node, lambda: facts.line_in(node, scope))


def _literal_defaults(node: cst.CSTNode) -> dict[int, cst.BaseExpression]:
    """Parameters whose default is a literal (`rank=-1`, `shuffle=True`), by position: the
    value the callee sees when the caller passes none."""
    params = getattr(node, "params", None)
    if params is None:
        return {}
    found = {}
    for index, param in enumerate((*params.posonly_params, *params.params)):
        value = param.default
        negative = isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus)
        if (
            isinstance(value, cst.Integer)
            or (negative and isinstance(value.expression, cst.Integer))
            or (isinstance(value, cst.Name) and value.value in ("True", "False", "None"))
        ):
            found[index] = value
    return found


def launch_class_test(facts: ModuleFacts, node: cst.CSTNode) -> str | None:
    """The launch configuration an `isinstance(model, FSDP)` call tests, if it is one."""
    if not (isinstance(node, cst.Call) and dotted_name(node.func) == "isinstance" and len(node.args) == 2):
        return None
    spelled = dotted_name(node.args[1].value)
    return cat.LAUNCH_CLASSES.get(facts.imports.resolve_dotted(spelled)) if spelled else None


def _main_process_decorator(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The decorator that runs a function on the main process only, if it has one."""
    for decorator in getattr(node, "decorators", ()):
        name = dotted_name(decorator.decorator) or ""
        if name.rsplit(".", 1)[-1] in cat.MAIN_PROCESS_DECORATORS:
            return decorator.decorator
    return None


def _held_by(container: Val, method: str) -> Val | None:
    """What a container read by this method gives, when its keys are the same on every rank and
    its values are not (see HELD)."""
    held = Val(Kind.DATA, origin=container.origin)
    if method in ("keys", "__len__", "__contains__"):
        return UNIFORM
    if method in ("items", "popitem"):
        return replace(held, items=(UNIFORM, held))  # `for key, value in ...items()`
    if method in ("values", "get", "pop", "setdefault", "__getitem__"):
        return held
    return None


# By class name, as _COMPARE: libcst is imported only once a module is parsed.
_LITERALS = frozenset({"SimpleString", "ConcatenatedString", "Integer", "Float"})
_PLAIN_CONSTANTS = (str, int, float, bool, type(None))


def _elements(node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The elements of a list, tuple or set literal; None when one is starred (`[*a, b]`)."""
    if any(isinstance(e, cst.StarredElement) for e in node.elements):
        return None
    return [e.value for e in node.elements]


def _appended_only(function: cst.CSTNode, name: str) -> list[cst.BaseExpression] | None:
    """What `function`'s code appends to `name` (`name.append(x)`), when it otherwise only binds
    the name, loops over it and takes its `len()`: None when anything else may change it or
    share it (another method, `+=`, a store into it, a call it is handed to, an alias)."""
    from ddplint.model.facts import child_nodes

    def named(node: cst.CSTNode | None) -> bool:
        return isinstance(node, cst.Name) and node.value == name

    appended: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = [function]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and named(node.func.value):
            arg = node.args[0] if len(node.args) == 1 else None
            if node.func.attr.value != "append" or arg is None or arg.keyword or arg.star:
                return None
            appended.append(arg.value)
            stack.append(arg.value)
        elif isinstance(node, cst.Call) and _is_len_of(node, name):
            continue
        elif isinstance(node, cst.Assign):
            stack.extend(t.target for t in node.targets if not named(t.target))
            stack.append(node.value)
        elif isinstance(node, cst.For) and named(node.iter):
            stack.extend([node.target, node.body, *([node.orelse] if node.orelse else [])])
        elif isinstance(node, cst.Attribute):
            stack.append(node.value)  # not `.attr`, a field's name
        elif isinstance(node, cst.Arg):
            stack.append(node.value)  # not `keyword=`
        elif named(node):
            return None
        else:
            stack.extend(child_nodes(node))
    return appended


def _is_len_of(call: cst.Call, name: str) -> bool:
    return (
        isinstance(call.func, cst.Name)
        and call.func.value == "len"
        and len(call.args) == 1
        and isinstance(call.args[0].value, cst.Name)
        and call.args[0].value.value == name
    )


def unpacked(value: Val, index: int, count: int) -> Val:
    """Element `index` of `value` unpacked into `count` targets (`engine, opt, _, _ = ...`)."""
    if value.tag == "deepspeed-init":
        return Val(Kind.OBJECT, tag="deepspeed") if index == 0 else Val(Kind.OBJECT)
    if value.items is not None and len(value.items) == count:
        return value.items[index]
    if value.kind is Kind.CONST and isinstance(value.const, tuple) and index < len(value.const):
        return const(value.const[index], rank=value.rank)
    return value


def _substitute(value: Val, bound) -> Val:
    """A callee's result in terms of this call's arguments (`return x` gives back what we passed)."""
    items = tuple(_substitute(item, bound) for item in value.items) if value.items is not None else None
    if not value.deps:
        return replace(value, items=items) if items is not None else value
    base = replace(value, deps=frozenset(), items=items)
    if value.kind is not Kind.UNIFORM:
        return base
    inputs = [bound[i] for i in value.deps if i < len(bound) and bound[i] is not None]
    result = combine([base, *inputs])
    if len(inputs) == 1 and inputs[0].kind is Kind.UNIFORM:
        result = replace(result, items=inputs[0].items or items, null=inputs[0].null or value.null)
    return replace(
        result, null=result.null or value.null, tag=value.tag or result.tag, items=result.items or items
    )


def _is_property(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.FunctionDef) and any(
        (dotted_name(d.decorator) or "").rsplit(".", 1)[-1] in ("property", "cached_property")
        for d in node.decorators
    )


def _one_process(node: cst.Call) -> bool:
    """`Trainer(devices=1)`, `Fabric(devices=[0])`, on one node: a run of one process."""
    devices = _keyword(node, "devices")
    nodes = _keyword(node, "num_nodes")
    one = isinstance(devices, cst.Integer) and devices.value == "1"
    one = one or (isinstance(devices, (cst.List, cst.Tuple)) and len(devices.elements) == 1)
    return one and (nodes is None or (isinstance(nodes, cst.Integer) and nodes.value == "1"))


def _on_subgroup(node: cst.CSTNode) -> bool:
    """Whether a collective call names the process group it runs on, other than the world."""
    group = _keyword(node, "group") if isinstance(node, cst.Call) else None
    if group is None:
        return False
    spelled = dotted_name(group) or ""
    return spelled != "None" and not spelled.endswith(".WORLD")


def _distributed_name(name: str) -> Val | None:
    """What a name says of the run when nothing in view assigns it: its world size (at least 2),
    or that it is distributed (true): the only runs that can hang."""
    if name in cat.WORLD_SIZE_NAMES:
        return WORLD_SIZE
    if name in cat.DISTRIBUTED_NAMES:
        return const(True)
    return None


def _method_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value
    return None


def _call_name(node: cst.BaseExpression) -> str:
    return (dotted_name(node.func) or "") if isinstance(node, cst.Call) else ""


def _keyword(node: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _keyword_true(node: cst.Call, name: str) -> bool:
    value = _keyword(node, name)
    return isinstance(value, cst.Name) and value.value == "True"


def _string_key(node: cst.Subscript) -> str | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        value = node.slice[0].slice.value
        if isinstance(value, cst.SimpleString):
            evaluated = value.evaluated_value
            return evaluated if isinstance(evaluated, str) else None
    return None


def _string_arg(node: cst.Call) -> str | None:
    if node.args and isinstance(node.args[0].value, cst.SimpleString):
        evaluated = node.args[0].value.evaluated_value
        return evaluated if isinstance(evaluated, str) else None
    return None


def _convert(name: str, value: Val) -> Val:
    if value.kind is Kind.CONST:
        try:
            return const(
                {"int": int, "bool": bool, "float": float, "str": str}[name](value.const), rank=value.rank
            )
        except Exception:
            return combine([value])
    if value.kind is Kind.NONZERO and name == "bool":
        return const(True, rank=True)
    return value


# Wrappers a loop iterates through to the items of their first argument.
_ITERATING = frozenset({"enumerate", "tqdm", "iter", "list", "track", "progress_bar"})


def _iterated_name(node: cst.BaseExpression) -> str | None:
    """The name a loop iterates over, through `enumerate(...)` and the like."""
    while isinstance(node, cst.Call) and node.args and not node.args[0].keyword:
        if (dotted_name(node.func) or "").rsplit(".", 1)[-1] not in _ITERATING:
            return None
        node = node.args[0].value
    return dotted_name(node)


def _rebound(body: cst.CSTNode) -> set[str]:
    """Names a loop body may give other contents: assigned, or changed by a container method."""
    from ddplint.model.facts import child_nodes

    names: set[str] = set()
    stack = [body]
    while stack:
        node = stack.pop()
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)):
            targets = [node.target]
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            targets = [node.func.value]  # `views.append(...)`, `views.pop()`
        for target in targets:
            while isinstance(target, cst.Subscript):
                target = target.value
            names.update(n for n in _names_in_target(target))
        stack.extend(child_nodes(node))
    return names


def _names_in_target(target: cst.BaseExpression):
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names_in_target(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _names_in_target(target.value)
    else:
        name = dotted_name(target)
        if name is not None:
            yield name


def _for_clauses(clause):
    while clause is not None:
        yield clause
        clause = clause.inner_for_in


def _expr_children(node: cst.CSTNode):
    from ddplint.model.facts import child_nodes

    return [c for c in child_nodes(node) if isinstance(c, cst.BaseExpression)]


_BINARY = {  # as _COMPARE
    "Add": lambda a, b: a + b,
    "Subtract": lambda a, b: a - b,
    "Multiply": lambda a, b: a * b,
    "Modulo": lambda a, b: a % b,
    "FloorDivide": lambda a, b: a // b,
}


def _compare(op: cst.BaseCompOp, left: Val, right: Val) -> Val:
    rank = left.rank or right.rank
    deps = left.deps | right.deps
    if isinstance(op, (cst.Is, cst.IsNot)):
        result = _identity_to_none(left, right)
        if result is None:
            maybe_none = left if left.null is not None else right if right.null is not None else None
            if maybe_none is not None and _is_none_literal(right if maybe_none is left else left):
                kind = maybe_none.null
                return Val(
                    kind, rank=maybe_none.rank or kind is Kind.RANK, origin=maybe_none.origin, deps=deps
                )
            return combine([left, right])
        value = result if isinstance(op, cst.Is) else not result
        return Val(Kind.CONST, value, rank=rank, deps=deps)
    if isinstance(op, (cst.In, cst.NotIn)):
        result = _compare_choices(lambda a, b: a in b, left, right) if right.kind is Kind.CONST else None
        if result is None:
            result = _membership(left, right)
        if result is None and _structural_key(left, right):
            return Val(Kind.UNIFORM, rank=rank, deps=deps)  # `"neg_context" in batch`
        if result is None:
            return _undecided(left, right)
        value = result if isinstance(op, cst.In) else not result
        return Val(Kind.CONST, value, rank=rank, deps=deps)
    compare = _COMPARE.get(type(op).__name__)
    if compare is None:
        return combine([left, right])
    chosen = _compare_choices(compare, left, right)
    if chosen is not None:
        return Val(Kind.CONST, chosen, rank=rank, deps=deps)
    left, right = _as_number(left, right), _as_number(right, left)  # `os.environ["RANK"] == "0"`
    if isinstance(op, (cst.Equal, cst.NotEqual)) and _function_and_literal(left, right):
        return Val(Kind.CONST, isinstance(op, cst.NotEqual), deps=deps)  # `evaluate == "train"`
    same = _same_on_every_rank(type(op), left, right)
    if same is not None:
        return Val(Kind.CONST, same, deps=deps)
    if left.kind is Kind.CONST and right.kind is Kind.CONST:
        try:
            return Val(Kind.CONST, bool(compare(left.const, right.const)), rank=rank, deps=deps)
        except Exception:
            return combine([left, right])
    for low, kind in ((1, Kind.NONZERO), (2, Kind.SEVERAL)):
        bounded, other, flipped = (left, right, False) if left.kind is kind else (right, left, True)
        if bounded.kind is kind and other.kind is Kind.CONST and isinstance(other.const, int):
            decided = _at_least_compare(type(op), other.const, flipped, low)
            if decided is not None:
                return Val(Kind.CONST, decided, rank=kind is Kind.NONZERO or rank, deps=deps)
    return _undecided(left, right)


def _compare_choices(compare, left: Val, right: Val) -> bool | None:
    """A comparison of one of several constants with a constant, when every choice gives the
    same answer (`split == "train"` for a split that is "dev" or "test"); else None."""
    if left.choices is None or right.kind is not Kind.CONST:
        if right.choices is None or left.kind is not Kind.CONST:
            return None
        return _compare_choices(lambda a, b: compare(b, a), right, left)
    try:
        answers = {bool(compare(choice, right.const)) for choice in left.choices}
    except Exception:
        return None
    return answers.pop() if len(answers) == 1 else None


def _structural_key(key: Val, holder: Val) -> bool:
    """Whether `key` names a field of per-rank data: the fields a batch has, like its type,
    are the same on every rank (one dataset, collated alike); their values are not. A batch
    that is None as a whole is another matter: a collate function that drops bad samples
    returns None for some batches only."""
    if holder.kind is not Kind.DATA:
        return False
    keys = key.choices if key.choices is not None else (key.const,) if key.kind is Kind.CONST else ()
    return bool(keys) and all(isinstance(k, str) for k in keys)


def _undecided(left: Val, right: Val) -> Val:
    kinds = (left.kind, right.kind)
    if Kind.UNIFORM in kinds and (Kind.NONZERO in kinds or Kind.RANK in kinds):
        # `rank == src`, `rank == i` over `range(world_size)`: each rank takes its turn, and
        # whether the arms pair up depends on correlations between ranks the two-class
        # simulation cannot see. Treated as the same on every rank: not guessed.
        return Val(Kind.UNIFORM, rank=True, deps=left.deps | right.deps)
    if Kind.NONZERO in kinds:
        return Val(Kind.RANK, rank=True, deps=left.deps | right.deps)
    return combine([left, right])


def _names_a_device(node: cst.BaseExpression) -> bool:
    """`t.device`, `device`, `self.device`: a device, whose index differs between ranks but
    whose type does not."""
    if isinstance(node, cst.Attribute):
        node = node.attr
    return isinstance(node, cst.Name) and (node.value == "device" or node.value.endswith("_device"))


def _function_and_literal(left: Val, right: Val) -> bool:
    """A function compared with a string or a number: never equal (a name shadowed by the
    module's function where a parameter was meant)."""
    for function, other in ((left, right), (right, left)):
        if function.tag == FUNCTION and other.kind is Kind.CONST and type(other.const) in (str, int, float):
            return True
    return False


def _same_on_every_rank(op: type, left: Val, right: Val) -> bool | None:
    """`local_rank != -1`: a rank compared with a negative number (a launcher's "not distributed")
    comes out the same on every rank of a distributed run, so it is no rank condition."""
    for rank, other, flipped in ((left, right, False), (right, left, True)):
        if not rank.rank or other.rank or other.kind is not Kind.CONST:
            continue
        if type(other.const) is not int or other.const >= 0:
            continue
        if rank.kind is Kind.NONZERO or (
            rank.kind is Kind.CONST and type(rank.const) is int and rank.const >= 0
        ):
            return _at_least_compare(op, other.const, flipped, 0)
    return None


def _at_least_compare(op: type, k: int, flipped: bool, low: int) -> bool | None:
    """`v OP k` for an unknown `v >= low` (or `k OP v` when flipped), when that is decided: a
    rank other than 0 (low 1), the world size (low 2)."""
    if flipped:
        op = {
            cst.LessThan: cst.GreaterThan,
            cst.GreaterThan: cst.LessThan,
            cst.LessThanEqual: cst.GreaterThanEqual,
            cst.GreaterThanEqual: cst.LessThanEqual,
        }.get(op, op)
    if op is cst.Equal:
        return False if k < low else None
    if op is cst.NotEqual:
        return True if k < low else None
    if op is cst.GreaterThan:
        return True if k < low else None
    if op is cst.GreaterThanEqual:
        return True if k <= low else None
    if op is cst.LessThan:
        return False if k <= low else None
    if op is cst.LessThanEqual:
        return False if k < low else None
    return None


def _is_none_literal(value: Val) -> bool:
    return value.kind is Kind.CONST and value.const is None


def _identity_to_none(left: Val, right: Val) -> bool | None:
    """`left is right` when one side is None and the other's None-ness is known."""
    for a, b in ((left, right), (right, left)):
        if b.kind is Kind.CONST and b.const is None:
            if a.kind is Kind.CONST:
                return a.const is None
            if a.kind in (Kind.OBJECT, Kind.NONZERO):
                return False
    return None


def _as_number(value: Val, other: Val) -> Val:
    """A string of digits compared with a rank: the rank came from the environment, as a string."""
    if other.rank and value.kind is Kind.CONST and isinstance(value.const, str) and value.const.isdigit():
        return replace(value, const=int(value.const))
    return value


def _membership(left: Val, right: Val) -> bool | None:
    if right.kind is not Kind.CONST or not isinstance(right.const, tuple):
        return None
    if left.kind is Kind.CONST:
        return left.const in right.const
    low = {Kind.NONZERO: 1, Kind.SEVERAL: 2}.get(left.kind)
    if low is not None:
        ints = [v for v in right.const if isinstance(v, int)]
        if len(ints) == len(right.const) and all(v < low for v in ints):
            return False
    return None


def _and(a: Val, b: Val) -> Val:
    ta, tb = a.truth(), b.truth()
    if ta is False:
        return a
    if tb is False and not a.divergent:
        return b
    if ta is True:
        return _with_rank(b) if a.rank else b
    return (
        combine([a, b])
        if (a.divergent or b.divergent)
        else Val(Kind.UNIFORM, rank=a.rank or b.rank, deps=a.deps | b.deps)
    )


def _or(a: Val, b: Val) -> Val:
    ta, tb = a.truth(), b.truth()
    if ta is True:
        return a
    if tb is True and not a.divergent:
        return b
    if ta is False:
        return _with_rank(b) if a.rank else b
    return (
        combine([a, b])
        if (a.divergent or b.divergent)
        else Val(Kind.UNIFORM, rank=a.rank or b.rank, deps=a.deps | b.deps)
    )


def _with_rank(value: Val) -> Val:
    return value if value.rank else Val(value.kind, value.const, True, value.origin, value.deps, value.tag)
