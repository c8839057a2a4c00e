"""The two questions about expressions the analysis asks most often: a dotted name's spelling and
a string literal's value, each answered by a shortcut that must agree with the long way."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from ddplint.analysis.divergence.analysis import Analysis
from ddplint.model.names import dotted_name
from ddplint.model.project import Project


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x", "x"),
        ("torch.distributed.all_reduce", "torch.distributed.all_reduce"),
        ("self.model.module", "self.model.module"),
        ("f(x).y", None),
        ("a[0].b", None),
        ("(a).b", "a.b"),
        ("'s'.join", None),
        ("1", None),
    ],
)
def test_dotted_names(text: str, expected: str | None) -> None:
    assert dotted_name(cst.parse_expression(text)) == expected


STRINGS = [
    '"train"',
    "'train'",
    "''",
    '""',
    "'a \"b\"'",
    '"it\'s"',
    '"""doc"""',
    "'''doc'''",
    '""""""',
    r'"a\nb"',
    r"'\''",
    r'r"\d+"',
    'b"bytes"',
    'u"text"',
    'R"x"',
    'rb"\\x"',
    "'é'",
]


@pytest.mark.parametrize("text", STRINGS)
def test_string_values_are_what_python_reads(text: str) -> None:
    node = cst.parse_expression(text)
    assert isinstance(node, cst.SimpleString)
    value = Analysis(Project()).string_value(node)
    assert value == ast.literal_eval(text) and type(value) is type(ast.literal_eval(text))


def test_string_values_are_remembered_by_their_text_not_their_node() -> None:
    analysis = Analysis(Project())
    first, again, other = (cst.parse_expression(text) for text in ('"train"', '"train"', "b'x'"))
    assert [analysis.string_value(node) for node in (first, again, other)] == ["train", "train", b"x"]
    # One entry a text, none holding a node: a module's tree can go while the analysis lives.
    assert analysis._strings == {'"train"': "train", "b'x'": b"x"}
