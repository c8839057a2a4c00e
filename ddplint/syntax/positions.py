"""Node spans as character offsets, computed by one cheap code-generation pass.

libcst's PositionProvider builds a CodeRange object for every node; this pass only counts
characters, which costs a fraction of it, and is run only for modules that report something.
A message about a module that may report nothing needs one line of it: `locate` finds a single
function in the module's text instead.
"""

from __future__ import annotations

from collections import OrderedDict

import libcst as cst
from libcst._nodes.internal import CodegenState

from ddplint.syntax.parse import run_with_large_stack


class _OffsetState(CodegenState):
    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self.spans: dict[cst.CSTNode, tuple[int, int]] = {}

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        pass

    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Recording:
        return _Recording(self, node, start_node, end_node)


class _Recording:
    """One node's span, recorded around its code generation: a plain context manager, as a
    generator-based one costs several calls per node, and this runs for every node generated."""

    __slots__ = ("end_node", "node", "start", "start_node", "state")

    def __init__(self, state: _OffsetState, node, start_node, end_node) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = self.state.offset

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is not None:
            return  # the generation failed: nothing is recorded
        state, start_node, end_node = self.state, self.start_node, self.end_node
        spans = state.spans
        start = self.start
        if start_node is not None and start_node in spans:
            start = spans[start_node][0]
        end = spans[end_node][1] if end_node is not None and end_node in spans else state.offset
        spans[self.node] = (start, end)


def compute_spans(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int]]:
    """Map every syntactic node of `module` to its (start, end) offsets in `module.code`."""
    state = _OffsetState(module)
    # Code generation recurses once per nesting level: give deep trees a deep stack.
    run_with_large_stack(lambda: module._codegen(state))
    return state.spans


class _TextAndOffsetState(_OffsetState):
    """Offsets, and the code itself."""

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        super().add_indent_tokens()

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)


# The code of the statements `locate` generated last, with their spans, for a process that
# checks one document again and again (see `keep_generated`). An editor's document is parsed
# again at each change, but the statements the change left alone keep their nodes (see
# ddplint.syntax.reparse): a message about one of them finds its line without generating it again.
_kept_count = 0
_generated: OrderedDict[tuple, tuple[str, dict]] = OrderedDict()


def keep_generated(count: int) -> None:
    """Keep the code of the last `count` statements `locate` generated (none by default: a run
    over a project locates each function once, and a big function's spans take a megabyte)."""
    global _kept_count
    _kept_count = count
    while len(_generated) > count:
        _generated.popitem(last=False)


def locate(
    module: cst.Module, text: str, node: cst.CSTNode
) -> tuple[int, dict[cst.CSTNode, tuple[int, int]]] | None:
    """Where statement `node` of `module` starts in `text` (the module's code), with the spans
    of its nodes relative to that start; None when its code is not found there exactly once.

    Generating one statement costs far less than the whole module: a function's code, indented
    as the blocks around it indent it, is a piece of the module's code, found by searching.
    """
    indents = _indents_around(module, node)
    if indents is None:
        return None
    key = (node, tuple(indents), module.default_indent, module.default_newline)
    generated = _generated.get(key)
    if generated is None:
        state = _TextAndOffsetState(module)
        state.indent_tokens = indents
        run_with_large_stack(lambda: node._codegen(state))
        # Without its last newline: the module's last line may have none.
        generated = ("".join(state.tokens).rstrip("\r\n"), state.spans)
        if _kept_count:
            _generated[key] = generated
            if len(_generated) > _kept_count:
                _generated.popitem(last=False)
    else:
        _generated.move_to_end(key)
    code, spans = generated
    start = text.find(code)
    if start < 0 or text.find(code, start + 1) >= 0:
        return None
    return start, spans


# Nodes a statement can lie in, below the module: compound statements and their clauses.
_HOLDERS = (
    cst.BaseCompoundStatement,
    cst.IndentedBlock,
    cst.Else,
    cst.Finally,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.MatchCase,
)

_CLAUSE_FIELDS = ("body", "handlers", "orelse", "finalbody")


def _indents_around(module: cst.Module, target: cst.CSTNode) -> list[str] | None:
    """The indentation each block around `target` adds, outermost first, as code generation
    adds it; None when `target` is no statement of `module`."""
    default = module.default_indent
    stack: list[tuple[cst.CSTNode, tuple[str, ...]]] = [(stmt, ()) for stmt in module.body]
    while stack:
        node, indents = stack.pop()
        if node is target:
            return list(indents)
        if isinstance(node, cst.IndentedBlock):
            inner = (*indents, default if node.indent is None else node.indent)
            stack.extend((stmt, inner) for stmt in node.body)
        elif isinstance(node, cst.Match):
            inner = (*indents, default if node.indent is None else node.indent)
            stack.extend((case, inner) for case in node.cases)
        elif isinstance(node, _HOLDERS):
            for field in _CLAUSE_FIELDS:
                value = getattr(node, field, None)
                if isinstance(value, (tuple, list)):
                    stack.extend((clause, indents) for clause in value)
                elif value is not None:
                    stack.append((value, indents))
    return None
