"""Lines of nodes found through one function (`ModuleFacts.line_in`) equal those of the module."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.model.facts import ModuleFacts, child_nodes
from ddplint.syntax.positions import compute_spans, locate
from ddplint.syntax.source import Source

NESTED = textwrap.dedent(
    """\
    import torch.distributed as dist

    class Trainer:
        # a comment at the class's level
        def step(self, rank):
            if rank == 0:
                dist.barrier()

    if dist.is_available():
        try:
            def helper(x):
            \tmatch x:
            \t    case 0:
            \t        def inner():
            \t            return dist.get_rank()
            \t        return inner
        finally:
            pass
    """
)
# The same code twice, the second without a last newline.
TWICE = "import os\n\n\ndef forward(x):\n    return x\n\n\ndef forward(x):\n    return x"


def facts_of(text: str) -> ModuleFacts:
    return ModuleFacts(Source("m.py", text), cst.parse_module(text), "m")


def nodes_of(node: cst.CSTNode) -> list[cst.CSTNode]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(child_nodes(current))
    return out


@pytest.mark.parametrize("text", [NESTED, TWICE], ids=["nested", "twice"])
def test_lines_within_a_function_equal_the_module_lines(text: str) -> None:
    facts = facts_of(text)
    spans = compute_spans(facts.tree)  # kept apart: `line_in` computes them only when it must
    checked = 0
    for scope in facts.scopes:
        for node in nodes_of(scope.node):
            if node in spans and isinstance(scope.node, cst.FunctionDef):
                assert facts.line_in(node, scope) == facts.source.location(spans[node][0])[0], scope.name
                checked += 1
    assert checked > 10
    # Only where a function's code is not found alone are the module's positions computed.
    assert ("spans" in facts.__dict__) == (text is TWICE)


def test_functions_are_found_alone_at_any_depth() -> None:
    facts = facts_of(NESTED)
    lines = {}
    for scope in facts.scopes:
        if isinstance(scope.node, cst.FunctionDef):
            start, _ = locate(facts.tree, NESTED, scope.node)
            lines[scope.name] = facts.source.location(start)[0]
    # A function's code starts with its leading comment lines.
    assert lines == {"Trainer.step": 4, "helper": 11, "helper.<locals>.inner": 14}


def test_a_function_whose_code_appears_twice_is_not_placed() -> None:
    facts = facts_of(TWICE)
    first, last = (s.node for s in facts.scopes if isinstance(s.node, cst.FunctionDef))
    assert locate(facts.tree, TWICE, first) is None
    assert locate(facts.tree, TWICE, last) is None


def test_a_statement_an_edit_left_alone_is_placed_without_generating_it_again(monkeypatch) -> None:
    """An editor's document is parsed again at each change, keeping the nodes of the statements
    the change left alone: their code is not generated again, and their lines follow the edit."""
    from ddplint.syntax import positions
    from ddplint.syntax.reparse import DocumentParser

    # Long enough to be parsed statement by statement.
    filler = "".join(f"\n\ndef f{i}(x):\n    return x + {i}\n" for i in range(300))
    text = NESTED + filler
    parser = DocumentParser()
    before = parser.parse(text)
    step = next(n for n in nodes_of(before) if isinstance(n, cst.FunctionDef) and n.name.value == "step")
    locate(before, text, step)
    assert not positions._generated  # a run over a project keeps nothing: it locates each once
    positions.keep_generated(32)  # as the language server does
    try:
        start, spans = locate(before, text, step)
        assert Source("m.py", text).location(start)[0] == 4

        edited = "import os\n\n\n" + text.replace("pass", "raise")
        after = parser.parse(edited)
        assert any(n is step for n in nodes_of(after))  # the class statement was left alone
        generated = []
        monkeypatch.setattr(
            positions._TextAndOffsetState, "add_token", lambda self, value: generated.append(value)
        )
        moved, same = locate(after, edited, step)
        assert generated == [] and same is spans
        assert Source("m.py", edited).location(moved)[0] == 7
        facts = ModuleFacts(Source("m.py", edited), after, "m")
        barrier = next(n for n in nodes_of(step) if isinstance(n, cst.Call))
        scope = next(s for s in facts.scopes if s.node is step)
        assert (
            facts.line_in(barrier, scope) == 10 == facts.source.location(compute_spans(after)[barrier][0])[0]
        )
    finally:
        positions.keep_generated(0)
    assert not positions._generated
