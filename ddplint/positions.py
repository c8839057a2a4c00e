"""Node spans as character offsets, computed by one cheap code-generation pass.

libcst's PositionProvider builds a CodeRange object for every node; this pass only counts
characters, which costs a fraction of it, and is run only for modules that report something.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst
from libcst._nodes.internal import CodegenState

from ddplint.safeparse import run_with_large_stack


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

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        start = self.offset
        yield
        spans = self.spans
        if start_node is not None and start_node in spans:
            start = spans[start_node][0]
        end = spans[end_node][1] if end_node is not None and end_node in spans else self.offset
        spans[node] = (start, end)


def compute_spans(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int]]:
    """Map every syntactic node of `module` to its (start, end) offsets in `module.code`."""
    state = _OffsetState(module)
    # Code generation recurses once per nesting level: give deep trees a deep stack.
    run_with_large_stack(lambda: module._codegen(state))
    return state.spans
