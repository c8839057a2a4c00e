"""libcst's parse as ddplint runs it: the same trees, and node checks left on for everything else."""

from __future__ import annotations

import contextlib
import sys

import libcst as cst
import pytest
from fixture_harness import FIXTURES

from ddplint.syntax.parse import parse_module

FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))


def test_trees_equal_libcst_own_parse() -> None:
    assert len(FIXTURE_FILES) > 100
    for path in FIXTURE_FILES:
        text = path.read_text(encoding="utf-8")
        assert parse_module(text, str(path)).deep_equals(cst.parse_module(text)), path


@pytest.mark.parametrize("text", ["x = 1\n", "def broken(:\n"])
def test_nodes_built_after_a_parse_are_checked(text: str) -> None:
    with contextlib.suppress(cst.ParserSyntaxError):
        parse_module(text, "m.py")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


def test_a_parsed_text_keeps_no_second_encoding_of_itself() -> None:
    text = "".join(f'label_{i} = "température {i} °C"\n' for i in range(200))
    size = sys.getsizeof(text)
    tree = parse_module(text, "t.py")
    assert tree.code == text
    assert sys.getsizeof(text) == size  # CPython caches UTF-8 in a str that a parser read
