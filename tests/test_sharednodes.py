"""Whitespace nodes built while parsing are shared; nodes built any other way are not."""

from __future__ import annotations

import libcst as cst

from ddplint.safeparse import parse_module
from ddplint.sharednodes import shared_whitespace

TEXT = "a = 1  # one\nb = 2  # two\n\n\nc = [1, 2, 3]\nd = 4\n"


def test_parsed_whitespace_is_shared_and_comments_stay_apart() -> None:
    tree = parse_module(TEXT, "t.py")
    assert tree.code == TEXT
    first, second = (stmt.trailing_whitespace for stmt in tree.body[:2])
    assert first.whitespace is second.whitespace  # "  " before each comment
    assert first.newline is second.newline
    assert first is not second and (first.comment.value, second.comment.value) == ("# one", "# two")
    blank_lines = tree.body[2].leading_lines
    assert len(blank_lines) == 2 and blank_lines[0] is blank_lines[1]
    third, fourth = (stmt.trailing_whitespace for stmt in tree.body[2:4])
    assert third is fourth  # no comment: one node
    elements = tree.body[2].body[0].value.elements
    assert elements[0].comma.whitespace_after is elements[1].comma.whitespace_after
    assert elements[0].comma is not elements[1].comma  # not whitespace: every node its own


def test_nodes_built_by_hand_are_not_shared() -> None:
    parse_module(TEXT, "t.py")
    assert cst.SimpleWhitespace(" ") is not cst.SimpleWhitespace(" ")
    assert cst.Newline() is not cst.Newline()
    assert cst.EmptyLine() is not cst.EmptyLine()
    with shared_whitespace():
        with shared_whitespace():
            assert cst.SimpleWhitespace(" ") is cst.SimpleWhitespace(" ")
        assert cst.Newline("\n") is cst.Newline("\n")  # still on: the outer one is
        assert cst.EmptyLine() is not cst.EmptyLine()  # defaults: not compared
    assert cst.SimpleWhitespace(" ") is not cst.SimpleWhitespace(" ")
    assert isinstance(cst.SimpleWhitespace, type)  # libcst's own class again


def test_trees_with_shared_whitespace_give_the_same_code_and_equal_trees() -> None:
    text = "def f(x):\n    if x:  # why\n        return [x,  x]\n\n    return None\n"
    tree = parse_module(text, "t.py")
    plain = cst.parse_module(text)  # outside the context: nothing shared
    assert tree.deep_equals(plain)
    assert tree.code == text
    changed = tree.visit(_Rename())
    assert changed.code == text.replace("x", "y")


class _Rename(cst.CSTTransformer):
    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value="y") if original.value == "x" else updated
