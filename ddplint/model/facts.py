"""Per-module facts, gathered in one walk: scopes, imports, assignments, calls and loops.

Rules read these instead of re-walking the tree. The walk is hand-written rather than a
CSTVisitor: it skips whitespace nodes and runs several times faster.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ddplint.model.catalogue import ACCELERATOR_GETTER, BUILT_DEVICE_STRING, RANK_WORDS, WRAPPER_WORDS
from ddplint.model.names import ImportMap, dotted_name, looks_like_data
from ddplint.model.signatures import SIGNATURES, BoundArgs, bind
from ddplint.syntax.lazycst import cst
from ddplint.syntax.source import Source


@dataclass(eq=False, slots=True)
class Loop:
    node: cst.For | cst.While
    scope: Scope
    parent: Loop | None
    # The loop variable when it is a plain name (`for epoch in ...`), for fixes that need it.
    target: str | None
    iter: cst.BaseExpression | None

    @property
    def infinite(self) -> bool:
        return isinstance(self.node, cst.While) and _is_true(self.node.test)

    def encloses(self, other: Loop | None) -> bool:
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False


@dataclass(eq=False, slots=True)
class CallSite:
    node: cst.Call
    # Qualified through imports when the head is imported (`torch.utils.data.DataLoader`),
    # else the dotted spelling (`sampler.set_epoch`, `self.train`); None for `f()()` etc.
    name: str | None
    scope: Scope
    loop: Loop | None
    # `x` in `x = Call(...)` / `self.x = Call(...)`.
    target: str | None = None
    # `a.b` in `a.b.m()`, as written (not import-resolved); None for a call of a plain name.
    receiver: str | None = None
    # Passes a parameter of its function on, as an argument's whole value (`fn` in `run(fn)`):
    # read by the flags of every function reached (see Analysis.flags), without the nodes.
    passes_param: bool = False

    def bound(self) -> BoundArgs:
        return bind(self.node, SIGNATURES.get(self.name or "", ()))

    @property
    def method(self) -> str | None:
        return self.name.rsplit(".", 1)[-1] if self.name else None


@dataclass(eq=False, slots=True)
class Scope:
    """The module body, or one function or method."""

    name: str  # "" for the module, "f", "Class.method", "outer.<locals>.inner"
    node: cst.Module | cst.FunctionDef
    parent: Scope | None
    class_name: str | None = None
    params: list[str] = field(default_factory=list)
    assignments: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    # In the order the code spells them, a call before the calls within it.
    calls: list[CallSite] = field(default_factory=list)
    loops: list[Loop] | tuple[Loop, ...] = field(default_factory=list)
    is_generator: bool = False
    # Names read in this scope that can carry a rank (`rank`, `is_main_process`, `environ`):
    # a function without any, calling no function with any, cannot return a rank-derived value.
    rank_names: set[str] | frozenset[str] = field(default_factory=set)
    # Iterates something that reads as per-rank data, or reads gradients: its result may diverge.
    reads_data: bool = False
    # For each name in `assignments`, what each of its values calls to build it: the callee's
    # dotted spelling ("" when it has none, `f()()`), None for a value that is no call (and
    # nothing at all when none is). What resolving `x.method()` reads, without the nodes (see
    # ddplint.model.skeleton).
    builders: dict[str, tuple[str | None, ...]] = field(default_factory=dict)
    # Returns the `.module` of something (`return model.module`): what it gives back is the
    # module inside a wrapper (`unwrap_model(model)`).
    returns_module: bool = False
    # Assigns an attribute of `self` (`self.best = loss`): calling it changes its object.
    stores_on_self: bool = False
    # Tests the shape of a value (`"mask" in batch`, `isinstance(batch, list)`): handed per-rank
    # data, it decides alike on every rank, which only its simulation sees.
    tests_shape: bool = False

    def values_of(self, dotted: str) -> list[cst.BaseExpression]:
        """Every value assigned to `dotted` in this scope, then in enclosing ones."""
        scope: Scope | None = self
        while scope is not None:
            if dotted in scope.assignments:
                return scope.assignments[dotted]
            scope = scope.parent
        return []


def is_init(scope: Scope) -> bool:
    """Whether a function is an `__init__` (by its name, which a skeleton keeps)."""
    return scope.parent is not None and scope.name.rsplit(".", 1)[-1] == "__init__"


# Fields that hold only whitespace, punctuation or comments; never walked.
_SKIP_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "comma",
        "semicolon",
        "whitespace_before",
        "whitespace_after",
        "whitespace_before_colon",
        "whitespace_after_colon",
        "whitespace_after_star",
        "whitespace_after_arg",
        "whitespace_before_args",
        "whitespace_after_def",
        "whitespace_before_params",
        "whitespace_after_keyword",
        "whitespace_after_in",
        "whitespace_before_in",
        "whitespace_after_for",
        "whitespace_before_equal",
        "whitespace_after_equal",
        "whitespace_after_await",
        "whitespace_after_lambda",
        "whitespace_after_if",
        "whitespace_before_if",
        "whitespace_after_else",
        "whitespace_before_else",
        "whitespace_after_test",
        "whitespace_after_dot",
        "whitespace_before_dot",
        "whitespace_after_import",
        "whitespace_after_from",
        "whitespace_before_import",
        "whitespace_after_with",
        "whitespace_after_return",
        "whitespace_after_assert",
        "whitespace_before_as",
        "whitespace_after_as",
        "whitespace_after_class",
        "whitespace_after_yield",
        "leading_lines",
        "lines_after_decorators",
        "leading_whitespace",
        "trailing_whitespace",
        "header",
        "footer",
        "newline",
        "equal",
        "dot",
        "colon",
        "operator",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "star",
        "star_tok",
        "asynchronous",
        "async_",
        "await_",
    }
)
_FIELDS_BY_TYPE: dict[type, tuple[str, ...]] = {}


# `isinstance` against CSTNode, an ABC, is slow; each concrete type is asked once.
_NODE_KINDS: set[type] = set()
_OTHER_KINDS: set[type] = {type(None), str, tuple, list}


def _is_node_kind(kind: type) -> bool:
    if issubclass(kind, cst.CSTNode):
        _NODE_KINDS.add(kind)
        return True
    _OTHER_KINDS.add(kind)
    return False


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Syntactic children of a node, without whitespace and punctuation."""
    kind = type(node)
    names = _FIELDS_BY_TYPE.get(kind)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(kind) if f.name not in _SKIP_FIELDS)
        _FIELDS_BY_TYPE[kind] = names
    out: list[cst.CSTNode] = []
    nodes, others = _NODE_KINDS, _OTHER_KINDS
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        if kind in nodes:
            out.append(value)
        elif kind is tuple or kind is list:
            for item in value:
                item_kind = type(item)
                if item_kind in nodes or (item_kind not in others and _is_node_kind(item_kind)):
                    out.append(item)
        elif kind not in others and _is_node_kind(kind):
            out.append(value)
    return out


def own_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`root` and the nodes within it, leaving out functions, classes and lambdas defined there
    (a nested function is its own scope: what it does is not the enclosing code's)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        yield node
        stack.extend(child_nodes(node))


def _is_true(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Name) and node.value == "True") or (
        isinstance(node, cst.Integer) and node.value != "0"
    )


def assigned_name(target: cst.BaseExpression) -> str | None:
    """`x` or `self.x` for an assignment target; None for tuples, subscripts, ..."""
    return dotted_name(target)


def _param_names(params: cst.Parameters) -> list[str]:
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        names.append(params.star_arg.name.value)
    names.extend(p.name.value for p in params.kwonly_params)
    if params.star_kwarg is not None:
        names.append(params.star_kwarg.name.value)
    return names


# Shared by every scope that has none, and immutable: nothing adds to facts after the walk.
_NO_LOOPS: tuple[Loop, ...] = ()
_NO_NAMES: frozenset[str] = frozenset()
_NO_BUILDERS: dict[str, tuple[str | None, ...]] = {}  # never written to, like the two above


def _builders(values: list[cst.BaseExpression]) -> tuple[str | None, ...]:
    built = tuple((dotted_name(v.func) or "") if isinstance(v, cst.Call) else None for v in values)
    return built if any(b is not None for b in built) else ()  # no call: one shared empty tuple


class ModuleFacts:
    """Everything the rules need to know about one parsed module."""

    def __init__(
        self, source: Source, tree: cst.Module, module_name: str, *, is_package: bool = False
    ) -> None:
        self.source = source
        self.tree = tree
        self.module_name = module_name
        self.imports = ImportMap(module_name, is_package)
        self.module_scope = Scope("", tree, None)
        self.scopes: list[Scope] = [self.module_scope]
        self.functions: dict[str, Scope] = {}
        self.classes: dict[str, cst.ClassDef] = {}
        # `self.x` assignments of a class, across all its methods: class name → attr → values.
        self.class_attrs: dict[str, dict[str, list[cst.BaseExpression]]] = {}
        # `self.a, self.b = value`: class name → attr → (value, position in the unpacking, count).
        self.unpacked_attrs: dict[str, dict[str, list[tuple[cst.BaseExpression, int, int]]]] = {}
        # A function → where it starts and its own spans (see `spans_in`); None: not found.
        self._located: dict[cst.FunctionDef, tuple[int, dict] | None] = {}
        self.has_try = False  # a `try` statement anywhere in the module
        # Whether the text spells a device string built from a value (see DDP006).
        self.builds_device_string = BUILT_DEVICE_STRING.search(source.text) is not None
        # Whether a value here may be built by a DDP/FSDP wrapper (see catalogue.WRAPPER_WORDS).
        self.spells_wrapper = any(word in source.text for word in WRAPPER_WORDS)
        # Whether it may call DeepSpeed's `get_accelerator()` (see expressions.accelerator_set_device).
        self.spells_accelerator = ACCELERATOR_GETTER in source.text
        _Walker(self).walk_module(tree)
        # Each class's bases, import-resolved: what resolution reads of a class it does not
        # simulate, without its tree (see ddplint.model.skeleton).
        self.class_bases: dict[str, tuple[str | None, ...]] = {
            name: tuple(self.qualname(base.value) for base in node.bases)
            for name, node in self.classes.items()
        }
        for scope in self.scopes:
            # Most functions have no loop and read no rank name: an empty set alone costs 216
            # bytes, more than the scope's other fields together.
            if not scope.loops:
                scope.loops = _NO_LOOPS
            if not scope.rank_names:
                scope.rank_names = _NO_NAMES
            scope.builders = (
                {name: _builders(values) for name, values in scope.assignments.items()}
                if scope.assignments
                else _NO_BUILDERS
            )
            scope.stores_on_self = any(name.startswith("self.") for name in scope.assignments)
        self.class_attr_builders = {
            class_name: {attr: _builders(values) for attr, values in attrs.items()}
            for class_name, attrs in self.class_attrs.items()
        }

    @property
    def filename(self) -> str:
        return self.source.filename

    @property
    def path(self) -> Path:
        return Path(self.source.filename)

    @cached_property
    def spans(self) -> dict[cst.CSTNode, tuple[int, int]]:
        from ddplint.syntax.positions import compute_spans  # libcst's code generation: only when needed

        return compute_spans(self.tree)

    def forget_positions(self) -> None:
        """Drop the positions computed to report this module: an entry per node, so that every
        module with a finding kept them, as much as half of a run's memory. Asked for again, they
        are computed again (a message naming a line of this module, a later fix)."""
        self.__dict__.pop("spans", None)
        self.__dict__.pop("_statement_spans", None)
        located = self.__dict__.get("_located")  # a skeleton has none, and computed none
        if located is not None:
            located.clear()

    def span(self, node: cst.CSTNode) -> tuple[int, int]:
        return self.spans[node]

    @cached_property
    def _statement_spans(self) -> list[tuple[int, int]]:
        kinds = (cst.SimpleStatementLine, cst.BaseCompoundStatement)
        return sorted(span for node, span in self.spans.items() if isinstance(node, kinds))

    def statement_row(self, offset: int) -> int:
        """First row of the innermost statement around `offset`: where its `# noqa` goes."""
        best = offset
        for start, end in self._statement_spans:
            if start > offset:
                break
            if end >= offset:
                best = start
        return self.source.location(best)[0]

    def line_of(self, node: cst.CSTNode) -> int:
        return self.source.location(self.spans[node][0])[0]

    def place_of(self, node: cst.CSTNode) -> str:
        """`train.py:12` (`nb.ipynb:cell 3:2` in a notebook): a node's line, as messages name it."""
        return self.source.place(self.line_of(node))

    def spans_in(self, scope: Scope) -> tuple[int, dict[cst.CSTNode, tuple[int, int]]]:
        """Spans of the nodes of `scope`'s code, relative to the offset returned with them: the
        module's own spans once they are known, else, for a function, its spans alone (see
        positions.locate), which cost a fraction of the module's. For work on modules that may
        report nothing."""
        if "spans" not in self.__dict__ and isinstance(scope.node, cst.FunctionDef):
            located = self._located.get(scope.node, False)
            if located is False:
                from ddplint.syntax.positions import locate

                located = self._located[scope.node] = locate(self.tree, self.source.text, scope.node)
            if located is not None:
                return located
        return 0, self.spans

    def line_in(self, node: cst.CSTNode, scope: Scope) -> int:
        """`line_of` a node of `scope`'s code, for a message that may never be shown."""
        start, spans = self.spans_in(scope)
        if node not in spans:  # not in the scope's own code after all
            start, spans = 0, self.spans
        return self.source.location(start + spans[node][0])[0]

    def qualname(self, expr: cst.BaseExpression) -> str | None:
        return self.imports.resolve(expr)

    def code(self, node: cst.CSTNode) -> str:
        start, end = self.span(node)
        return self.source.text[start:end]

    def text_of(self, node: cst.CSTNode) -> str:
        """A node's code, generated from the node alone: for messages about modules that may
        report nothing, where computing every position (`code`) would cost more."""
        return self.tree.code_for_node(node)

    def values_of(self, scope: Scope, dotted: str) -> list[cst.BaseExpression]:
        """Values assigned to a local name or to a `self.attr` of the scope's class."""
        if dotted.startswith("self.") and scope.class_name is not None:
            return self.class_attrs.get(scope.class_name, {}).get(dotted[5:], [])
        return scope.values_of(dotted)

    def assigned_builders(self, scope: Scope, dotted: str) -> tuple[str | None, ...] | None:
        """What each value `values_of` gives calls to build it (see `Scope.builders`); None when
        it finds no value. Told without reading the nodes: the builders are keyed like the
        assignments."""
        if dotted.startswith("self.") and scope.class_name is not None:
            return self.class_attr_builders.get(scope.class_name, {}).get(dotted[5:])
        found: Scope | None = scope
        while found is not None:
            if dotted in found.builders:
                return found.builders[dotted]
            found = found.parent
        return None

    def builders_of(self, scope: Scope, dotted: str) -> tuple[str | None, ...]:
        """`assigned_builders`, empty for a name assigned nowhere."""
        return self.assigned_builders(scope, dotted) or ()

    def all_calls(self):
        for scope in self.scopes:
            yield from scope.calls


class _Walker:
    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.scope = facts.module_scope
        self.loop: Loop | None = None
        self.class_stack: list[str] = []

    # Statements -------------------------------------------------------------------------

    def walk_module(self, module: cst.Module) -> None:
        self.body(module.body)

    def body(self, statements) -> None:
        for stmt in statements:
            self.statement(stmt)

    def block(self, node: cst.BaseSuite) -> None:
        if isinstance(node, cst.IndentedBlock):
            self.body(node.body)
        else:  # SimpleStatementSuite: `if x: a; b`
            for small in node.body:
                self.small(small)

    def statement(self, stmt: cst.CSTNode) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small)
        elif isinstance(stmt, cst.FunctionDef):
            self.function(stmt)
        elif isinstance(stmt, cst.ClassDef):
            self.class_def(stmt)
        elif isinstance(stmt, (cst.For, cst.While)):
            self.loop_stmt(stmt)
        else:
            if type(stmt) is cst.Try:
                self.facts.has_try = True
            # if / try / with / match: walk their expressions and blocks in order.
            for child in child_nodes(stmt):
                if isinstance(child, cst.BaseSuite):
                    self.block(child)
                elif isinstance(child, (cst.BaseCompoundStatement, cst.SimpleStatementLine)):
                    self.statement(child)
                else:
                    self.statement_part(child)

    def statement_part(self, node: cst.CSTNode) -> None:
        """Non-block parts of compound statements: tests, handlers, else/finally clauses."""
        if isinstance(node, cst.BaseSuite):
            self.block(node)
        elif isinstance(node, (cst.Else, cst.Finally, cst.ExceptHandler, cst.ExceptStarHandler)):
            if isinstance(node, (cst.ExceptHandler, cst.ExceptStarHandler)) and node.type:
                self.expr(node.type)
            self.block(node.body)
        elif isinstance(node, (cst.If, cst.BaseCompoundStatement)):
            self.statement(node)
        elif isinstance(node, cst.WithItem):
            self.expr(node.item)
        elif isinstance(node, cst.BaseExpression):
            self.expr(node)
        else:
            for child in child_nodes(node):
                self.statement_part(child)

    def small(self, node: cst.BaseSmallStatement) -> None:
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            self.facts.imports.add(node, override=self.scope.parent is None)
            return
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self.assign(target.target, node.value)
            self.expr(node.value, target=_single_target(node))
            return
        if isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            if isinstance(node, cst.AnnAssign) and node.value is not None:
                self.assign(node.target, node.value)
            if node.value is not None:
                self.expr(node.value)
            return
        if isinstance(node, cst.Expr) and isinstance(node.value, (cst.Yield, cst.Await)):
            self.scope.is_generator |= isinstance(node.value, cst.Yield)
        elif isinstance(node, cst.Return) and self.scope.parent is not None and not self._directly_in_class:
            self.scope.returns_module |= _takes_module(node.value)
        for child in child_nodes(node):
            if isinstance(child, cst.BaseExpression):
                self.expr(child)

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        name = assigned_name(target)
        if name is None:
            if isinstance(target, (cst.Tuple, cst.List)):
                count = len(target.elements)
                for index, element in enumerate(target.elements):
                    inner = assigned_name(element.value)
                    if inner is not None:
                        # Unpacked: the value is some part of `value`; record the whole.
                        self.scope.assignments.setdefault(inner, []).append(value)
                        if inner.startswith("self.") and self.scope.class_name is not None:
                            attrs = self.facts.unpacked_attrs.setdefault(self.scope.class_name, {})
                            attrs.setdefault(inner[5:], []).append((value, index, count))
            return
        if name.startswith("self.") and self.scope.class_name is not None:
            attrs = self.facts.class_attrs.setdefault(self.scope.class_name, {})
            attrs.setdefault(name[5:], []).append(value)
        self.scope.assignments.setdefault(name, []).append(value)

    def function(self, node: cst.FunctionDef) -> None:
        for deco in node.decorators:
            self.expr(deco.decorator)
        parent = self.scope
        name = node.name.value
        class_name = self.class_stack[-1] if self._directly_in_class else None
        if class_name is not None:
            qual = f"{class_name}.{name}"
        elif parent.parent is None:
            qual = name
        else:
            qual = f"{parent.name}.<locals>.{name}"
        # A closure inside a method still sees that method's `self`.
        class_name = class_name or parent.class_name
        scope = Scope(qual, node, parent, class_name, _param_names(node.params))
        self.facts.scopes.append(scope)
        self.facts.functions.setdefault(qual, scope)
        saved_loop, saved_direct = self.loop, self._directly_in_class
        self.scope, self.loop, self._directly_in_class = scope, None, False
        for param in (*node.params.params, *node.params.kwonly_params):
            if param.default is not None:
                self.expr(param.default)
        self.block(node.body)
        self.scope, self.loop, self._directly_in_class = parent, saved_loop, saved_direct

    _directly_in_class = False

    def class_def(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            self.expr(base.value)
        self.facts.classes.setdefault(node.name.value, node)
        self.class_stack.append(node.name.value)
        saved = self._directly_in_class
        self._directly_in_class = True
        self.block(node.body)
        self._directly_in_class = saved
        self.class_stack.pop()

    def loop_stmt(self, node: cst.For | cst.While) -> None:
        if isinstance(node, cst.For):
            self.expr(node.iter)
            target = node.target.value if isinstance(node.target, cst.Name) else None
            if target is None and isinstance(node.target, cst.Tuple):
                for element in node.target.elements:
                    name = assigned_name(element.value)
                    if name:
                        self.scope.assignments.setdefault(name, []).append(node.iter)
            elif target is not None:
                self.scope.assignments.setdefault(target, []).append(node.iter)
            loop = Loop(node, self.scope, self.loop, target, node.iter)
            self.scope.reads_data |= looks_like_data(node.iter)
        else:
            self.expr(node.test)
            loop = Loop(node, self.scope, self.loop, None, None)
        self.scope.loops.append(loop)
        saved = self.loop
        self.loop = loop
        self.block(node.body)
        self.loop = saved
        if node.orelse is not None:
            self.block(node.orelse.body)

    # Expressions ------------------------------------------------------------------------

    def expr(self, node: cst.CSTNode, target: str | None = None) -> None:
        # `target` follows the value into both arms of `a if c else b`: either may be stored.
        stack: list[tuple[cst.CSTNode, str | None]] = [(node, target)]
        while stack:
            current, current_target = stack.pop()
            kind = type(current)  # concrete node classes: cheaper than isinstance on an ABC
            if kind is cst.Call:
                name = dotted_name(current.func)
                resolved = self.facts.imports.resolve_dotted(name) if name else None
                if resolved == "isinstance":
                    self.scope.tests_shape = True
                func = current.func
                receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
                params = self.scope.params
                # A parameter's name has no dot: only a plain name can pass one on.
                passes = bool(params) and any(
                    type(arg.value) is cst.Name and arg.value.value in params for arg in current.args
                )
                self.scope.calls.append(
                    CallSite(current, resolved, self.scope, self.loop, current_target, receiver, passes)
                )
            elif kind is cst.Yield:
                self.scope.is_generator = True
            elif kind is cst.Name:
                if current.value in RANK_WORDS:
                    self.scope.rank_names.add(current.value)
                continue  # no children
            elif kind is cst.Attribute and current.attr.value in RANK_WORDS:
                self.scope.rank_names.add(current.attr.value)
            elif (kind is cst.Attribute and current.attr.value == "grad") or (
                kind is cst.CompFor and looks_like_data(current.iter)
            ):
                self.scope.reads_data = True
            elif kind is cst.Comparison and type(current.left) is cst.SimpleString:
                self.scope.tests_shape |= any(
                    type(c.operator) in (cst.In, cst.NotIn) for c in current.comparisons
                )
            elif kind is cst.IfExp and current_target is not None:
                stack.append((current.orelse, current_target))
                stack.append((current.test, None))
                stack.append((current.body, current_target))
                continue
            children = child_nodes(current)
            children.reverse()
            stack.extend((child, None) for child in children)


def _single_target(node: cst.Assign) -> str | None:
    if len(node.targets) == 1:
        return assigned_name(node.targets[0].target)
    return None


def _takes_module(value: cst.BaseExpression | None) -> bool:
    if isinstance(value, cst.IfExp):
        return _takes_module(value.body) or _takes_module(value.orelse)
    return isinstance(value, cst.Attribute) and value.attr.value == "module"
