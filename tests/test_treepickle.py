"""Parsed modules pickled for the trip back from a worker come back equal, with shared whitespace."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from ddplint.syntax import pickling
from ddplint.syntax.parse import parse_module

FIXTURES = sorted((Path(__file__).parent / "fixtures").rglob("*.py"))
TEXT = "x = 1  # one\ny = 2  # two\n\n\ndef f(a, b):\n    return a + b\n"


def kinds(tree: cst.CSTNode) -> set[type]:
    found, stack = set(), [tree]
    while stack:
        node = stack.pop()
        found.add(type(node))
        stack.extend(node.children)
    return found


def test_modules_come_back_equal() -> None:
    for path in FIXTURES:
        tree = parse_module(path.read_text(encoding="utf-8"), str(path))
        back = pickling.loads(pickling.dumps(tree))
        assert back.deep_equals(tree), path
        assert back.code == tree.code


def test_every_kind_of_node_met_pickles_as_its_fields() -> None:
    table = pickling._dispatch_table()
    met = set().union(*(kinds(parse_module(p.read_text(encoding="utf-8"), str(p))) for p in FIXTURES))
    assert len(met) > 60
    assert met <= set(table)


def test_equal_whitespace_comes_back_as_one_node_and_comments_apart() -> None:
    back = pickling.loads(pickling.dumps(cst.parse_module(TEXT)))
    first, second = (stmt.trailing_whitespace for stmt in back.body[:2])
    assert first.whitespace is second.whitespace  # "  " before each comment
    assert first.newline is second.newline
    assert first is not second and first.comment.value == "# one"
    blank_lines = back.body[2].leading_lines
    assert len(blank_lines) == 2 and blank_lines[0] is blank_lines[1]


def test_what_a_parse_shared_stays_shared_within_the_tree() -> None:
    text = "def f(alpha, beta, gamma):\n    return alpha + beta - gamma\n"
    back = pickling.loads(pickling.dumps(parse_module(text, "t.py")))
    params = back.body[0].params.params
    total = back.body[0].body.body[0].body[0].value  # (alpha + beta) - gamma
    assert params[0].comma is params[1].comma
    assert params[0].name is not total.left.left and params[0].name.value is total.left.left.value


def test_nodes_built_after_unpickling_are_checked() -> None:
    pickling.loads(pickling.dumps(cst.parse_module(TEXT)))
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
