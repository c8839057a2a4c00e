"""Whitespace and punctuation built while parsing are shared, and names' text is interned;
nodes with a position of their own, and nodes built any other way, are not shared."""

from __future__ import annotations

import libcst as cst

from ddplint.syntax.parse import parse_module
from ddplint.syntax.sharing import shared_whitespace

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
    assert elements[0].comma is elements[1].comma  # `, `: made of whitespace only
    assert elements[0].value is not elements[1].value  # an expression: every node its own


def test_names_are_nodes_of_their_own_holding_one_copy_of_their_text() -> None:
    first = parse_module("total = total + total\n", "a.py")
    second = parse_module("".join(["tot", "al = 1\n"]), "b.py")
    assign = first.body[0].body[0]
    names = [
        assign.targets[0].target,
        assign.value.left,
        assign.value.right,
        second.body[0].body[0].targets[0].target,
    ]
    assert len({id(name) for name in names}) == 4
    assert len({id(name.value) for name in names}) == 1
    assert assign.value.operator is not None and first.code == "total = total + total\n"


def test_a_line_break_in_brackets_is_shared_unless_a_comment_or_blank_line_follows() -> None:
    text = "f(a,\n  b)\ng(a,\n  b)\nh(a,\n\n  b)\nk(a,\n  # why\n  b)\nm(a,  # why\n  b)\n"
    tree = parse_module(text, "t.py")
    breaks = [stmt.body[0].value.args[0].comma.whitespace_after for stmt in tree.body]
    assert all(isinstance(b, cst.ParenthesizedWhitespace) for b in breaks)
    assert breaks[0] is breaks[1]
    assert len({id(b) for b in breaks[1:]}) == 4  # a blank line, a comment line, a comment
    assert tree.code == text


def test_nodes_built_by_hand_are_not_shared() -> None:
    parse_module(TEXT, "t.py")
    assert cst.SimpleWhitespace(" ") is not cst.SimpleWhitespace(" ")
    assert cst.Newline() is not cst.Newline()
    assert cst.EmptyLine() is not cst.EmptyLine()
    space = cst.SimpleWhitespace(" ")
    assert cst.Comma(space, space) is not cst.Comma(space, space)
    with shared_whitespace():
        with shared_whitespace():
            assert cst.SimpleWhitespace(" ") is cst.SimpleWhitespace(" ")
        assert cst.Newline("\n") is cst.Newline("\n")  # still on: the outer one is
        assert cst.EmptyLine() is not cst.EmptyLine()  # defaults: not compared
        named = {"whitespace_before": space, "whitespace_after": space}
        assert cst.Comma(**named) is cst.Comma(**named)  # as the parser builds it
        assert cst.Comma(space, space) is not cst.Comma(space, space)  # by position: alone
    assert cst.SimpleWhitespace(" ") is not cst.SimpleWhitespace(" ")
    assert isinstance(cst.SimpleWhitespace, type)  # libcst's own classes again
    assert isinstance(cst.Comma, type) and isinstance(cst.Name, type)


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
