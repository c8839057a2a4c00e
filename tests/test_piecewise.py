"""A large module parsed in pieces gives the tree of one whole parse, node for node."""

from __future__ import annotations

import re

import libcst as cst
import pytest
from fixture_harness import FIXTURES

from ddplint.syntax import pieces
from ddplint.syntax.parse import parse_module
from ddplint.syntax.pieces import parse_in_pieces

FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))

# Every kind of cut, and every place where a cut would change the tree.
MODULE = '''\
"""Docstring."""
# a comment before the imports

import torch

SIZES = [
    1,  # one
    # a lone comment between elements
    2,
    (3),
    4
    ,
    5,
]


@decorated
class Model:
    """Doc."""

    def forward(self, x):
        return x
        # the block's footer: as deep as the block
    # and this one, above a deeper one, too
            # deeper

    def backward(self):
        pass
  # shallower than the next statement: the next statement's

    class Inner:
        def f(self):
            if True:
                return 1
            \t
        g = 0  # after a line of spaces deeper than itself: the block above takes it

        table = {
            "a": 1,
            **other,
            "b": {"c": [1, 2]},
            "p": [(1), 2, 3],
            "nested": {  # cut inside, and inside its elements
                "x": [1, 2, 3],
                "y": [4,
                      5],
            },
            "é": "ü",  # non-ASCII before a cut
        }

    x = 1; y = 2
    z = 3
# a comment at column 0 inside the class

    def last(self): return 0


def after():
    pass
\x20\x20\x20\x20
def later():
    pass

{1, 2, 3,
 4}
[5, 6] + [7, 8]
# the module's footer

'''


STAND_INS = re.compile(r"(?:class _:\n    pass\n)?(?:[ \t]*class _:\n)*")


def parsed_pieces(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts libcst parses, as parse_in_pieces hands them over."""
    seen: list[str] = []
    real = cst.parse_module

    def recording(text: str) -> cst.Module:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(pieces.cst, "parse_module", recording)
    return seen


@pytest.mark.parametrize("limit", [1, 40, 120, 400])
def test_pieces_of_every_kind_equal_a_whole_parse(limit: int) -> None:
    tree = parse_in_pieces(MODULE, limit)
    assert tree is not None
    assert tree.deep_equals(cst.parse_module(MODULE))


def test_line_ends_and_indentation_are_the_module_own() -> None:
    text = MODULE.replace("\n", "\r\n")
    assert parse_in_pieces(text, 40).deep_equals(cst.parse_module(text))
    # A first block indented by two spaces makes two the default, recorded where it differs.
    text = "if x:\n  a = 1\n\n\ndef f():\n    return 1\n\n\ndef g():\n        return 2\n" * 3
    assert parse_in_pieces(text, 30).deep_equals(cst.parse_module(text))
    # The first block is the first indented one, here after a statement on its header's line.
    text = "if a: x = 1\nelif b:\n  y = 2\n\n\ndef f():\n    return 1\n" * 3
    assert parse_in_pieces(text, 30).deep_equals(cst.parse_module(text))
    text = "match x:\n  case 1:\n    pass\n" + MODULE  # the cases make it a matter of lines
    assert parse_in_pieces(text, 30) is None
    text = MODULE.rstrip("\n")  # no line end at the end
    assert parse_in_pieces(text, 40).deep_equals(cst.parse_module(text))


def test_cuts_only_where_the_tree_stays_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = parsed_pieces(monkeypatch)
    parse_in_pieces(MODULE, 1)
    pieces = [text[STAND_INS.match(text).end() :] for text in seen]  # without the stand-in blocks
    # The deeper comments stay with the statement above them: no piece starts with them.
    assert not any(p.lstrip("\n").startswith(("        # the block", "    # and this", "\t")) for p in pieces)
    # An element of SIZES starts a piece where it is the first or only a comma, space and
    # comments precede it: not `(3)` nor `4`, whose gaps hold a parenthesis, but `5` after `4\n    ,`.
    starts = [p.split(", ", 1)[1] for p in pieces if p.startswith("_ = [__ddplint_piece__, ")]
    assert [s[:1] for s in starts] == ["1", "2", "5"]
    # The dict is cut before its first key, "b", "nested" (and inside it) and "é", not before
    # `**other`, whose start CPython does not give.
    starts = [p.split(", ", 1)[1] for p in pieces if p.startswith("        _ = {__ddplint_piece__: 0, ")]
    assert [s[:3] for s in starts] == ['"a"', '"b"', '"p"', '"ne', '"x"', '"y"', '"é"']


def test_a_large_literal_is_parsed_in_pieces_no_larger_than_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = (
        "OPS = [\n"
        + "".join(f"    Op('op_{i}', dtypes=(float, int), ref=lambda x: x + {i}),\n" for i in range(3000))
        + "]\n"
    )
    seen = parsed_pieces(monkeypatch)
    tree = parse_in_pieces(text, 4096)
    assert tree is not None and tree.deep_equals(cst.parse_module(text))
    assert len(seen) >= len(text) // 4096
    assert max(len(piece) for piece in seen) < 4096 + 100


def test_small_or_unreadable_modules_are_left_to_a_whole_parse() -> None:
    assert parse_in_pieces("x = 1\n", 100) is None
    # libcst prints `except E:` for `except E :`: a text it does not print back is parsed whole.
    assert parse_in_pieces("try:\n    pass\nexcept E :\n    pass\n" + MODULE, 40) is None
    text = "type Alias = int\n" + "x = 1\n" * 100  # newer grammar than this Python's parser may know
    tree = parse_module(text, "m.py")
    assert tree.deep_equals(cst.parse_module(text))


def test_every_fixture_in_small_pieces_equals_its_whole_parse() -> None:
    assert len(FIXTURE_FILES) > 100
    for path in FIXTURE_FILES:
        text = path.read_text(encoding="utf-8")
        if len(text) > 200:
            tree = parse_in_pieces(text, 200)
            assert tree is not None, path
            assert tree.deep_equals(cst.parse_module(text)), path


def test_the_guarded_parse_cuts_large_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pieces, "PIECE_BYTES", 300)
    monkeypatch.setattr(pieces, "WHOLE_UP_TO", 1000)
    seen = parsed_pieces(monkeypatch)
    text = "\n\n".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(100))
    tree = parse_module(text, "m.py")
    assert len(seen) >= len(text) // 300
    assert tree.deep_equals(cst.parse_module(text))
