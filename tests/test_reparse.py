"""An edited document parsed again from the pieces of its previous version gives the tree of
one whole parse, node for node, prints back to its text, and reports a syntax error as a whole
parse does."""

from __future__ import annotations

import ast
import random
from collections.abc import Callable

import libcst as cst
import pytest
from fixture_harness import FIXTURES
from test_piecewise import MODULE, parsed_pieces

from ddplint.syntax import reparse
from ddplint.syntax.parse import parse_source
from ddplint.syntax.reading import LoadError
from ddplint.syntax.reparse import DocumentParser
from ddplint.syntax.source import Source

FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))

# Blocks, strings and brackets over several lines, decorators, comments at every depth.
SPANNING = '''\
import torch.distributed as dist

HELP = """Usage:
    train.py [options]

Options:
    --rank  this process's rank
"""


def reduce_all(tensors, group=None):
    for t in tensors:
        dist.all_reduce(
            t,  # summed over the ranks
            group=group,
        )
    return tensors


@torch.no_grad()
@other(
    1,
    2,
)
def evaluate(model, loader):
    total = 0
    for batch in loader:
        if dist.get_rank() == 0:
            total += batch.sum()
        else:
            total += 0
    # a comment at the block's depth
    return total


class Trainer:
    """Trains.

    Over several lines.
    """

    def step(self, x):
        y = (x +
             1)
        return y

    def finish(self):
        dist.barrier()
'''


def whole(text: str) -> cst.Module | LoadError:
    try:
        return parse_source(Source("m.py", text))
    except LoadError as exc:
        return exc


def readable(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def check(parser: DocumentParser, text: str) -> int:
    """`text` parsed with `parser` is what a whole parse gives: the same tree, or the same error.
    A text that both parsers read is not left to a whole parse. Returns how many pieces its
    parse reused."""
    expected = whole(text)
    reused = None  # by the first of the two parses below that ran
    if isinstance(expected, cst.Module) and expected.body and expected.code == text and readable(text):
        tree = parser.parse(text)
        assert tree is not None
        assert tree.code == text
        assert tree.deep_equals(expected)
        reused = parser.reused
    try:
        tree = parse_source(Source("m.py", text), parser)
    except LoadError as exc:
        assert isinstance(expected, LoadError), exc.diagnostic.message
        got, want = exc.diagnostic, expected.diagnostic
        assert (got.code, got.message, got.location) == (want.code, want.message, want.location)
        return parser.reused
    assert not isinstance(expected, LoadError), expected.diagnostic.message
    assert tree.code == text
    assert tree.deep_equals(expected)
    return parser.reused if reused is None else reused


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every module reparsed, and a statement longer than 80 characters cut inside."""
    monkeypatch.setattr(reparse, "REUSE_FROM", 0)
    monkeypatch.setattr(reparse, "SPLIT_OVER", 80)


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def insert_line(rng: random.Random, text: str) -> str:
    lines = lines_of(text)
    at = rng.randrange(len(lines) + 1)
    model = lines[at] if at < len(lines) else ""
    indent = model[: len(model) - len(model.lstrip(" \t"))]
    new = rng.choice(["", "# note", "x = 1", "pass", "dist.barrier()", "@decorated", "if x:", ")"])
    return "".join([*lines[:at], indent + new + "\n", *lines[at:]])


def delete_line(rng: random.Random, text: str) -> str:
    lines = lines_of(text)
    del lines[rng.randrange(len(lines))]
    return "".join(lines)


def insert_character(rng: random.Random, text: str) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice("x ,(#\n\t'\"") + text[at:]


def delete_character(rng: random.Random, text: str) -> str:
    at = rng.randrange(len(text))
    return text[:at] + text[at + 1 :]


def indent_line(rng: random.Random, text: str) -> str:
    lines = lines_of(text)
    at = rng.randrange(len(lines))
    lines[at] = rng.choice([" ", "    "]) + lines[at] if rng.random() < 0.5 else lines[at][1:]
    return "".join(lines)


def decorate(rng: random.Random, text: str) -> str:
    lines = lines_of(text)
    defs = [i for i, line in enumerate(lines) if line.lstrip().startswith(("def ", "class "))]
    if not defs:
        return insert_line(rng, text)
    at = rng.choice(defs)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    return "".join([*lines[:at], f"{indent}@functools.cache\n", *lines[at:]])


EDITS: list[Callable[[random.Random, str], str]] = [
    insert_line,
    delete_line,
    insert_character,
    delete_character,
    indent_line,
    decorate,
]


def edit_and_compare(text: str, seed: int, rounds: int) -> None:
    """Random edits one after the other on one document; an edit that breaks the syntax is
    undone by the next one half of the time (as a typist fixes it)."""
    rng = random.Random(seed)
    parser = DocumentParser()
    check(parser, text)
    for _ in range(rounds):
        edited = rng.choice(EDITS)(rng, text) if text else "x = 1\n"
        check(parser, edited)
        if isinstance(whole(edited), LoadError) and rng.random() < 0.5:
            check(parser, text)  # fixed again: back to the text before
        else:
            text = edited


@pytest.mark.usefixtures("small_pieces")
@pytest.mark.parametrize("seed", range(6))
def test_random_edits_of_blocks_strings_and_brackets_equal_a_whole_parse(seed: int) -> None:
    edit_and_compare(SPANNING + MODULE, seed, 40)


@pytest.mark.usefixtures("small_pieces")
def test_random_edits_of_every_fixture_equal_a_whole_parse() -> None:
    assert len(FIXTURE_FILES) > 100
    for seed, path in enumerate(FIXTURE_FILES):
        edit_and_compare(path.read_text(encoding="utf-8"), seed, 4)


@pytest.mark.usefixtures("small_pieces")
def test_edits_named_one_by_one_equal_a_whole_parse() -> None:
    text = SPANNING + MODULE
    parser = DocumentParser()
    versions = [
        text,
        text.replace("    total = 0\n", "    total = 0\n    count = 0\n"),  # a line in a body
        text.replace("as dist\n", "as dist\nimport os\n", 1),  # module level
        text.replace("this process's rank", "this process's rank\n    --world  how many"),  # in a string
        text.replace(
            "            group=group,\n", "            group=group,\n            op=op,\n"
        ),  # a bracket
        text.replace("@torch.no_grad()\n", "@torch.no_grad()\n@torch.compile\n"),  # a decorator
        text.replace("        return y\n", "    return y\n"),  # dedented out of its function
        text.replace("        dist.barrier()\n", "      dist.barrier()\n"),  # an indentation change
        text.replace("def evaluate(model, loader):", "def evaluate(model, loader)"),  # broken
        text,  # and fixed
        text + "# the end\n",
        text.replace("\n", "\r\n"),
        text.rstrip("\n"),
    ]
    for number, version in enumerate(versions):
        reused = check(parser, version)
        # All but the first, the broken one and the two whose every line end changed reuse pieces.
        assert (reused > 0) == (number not in (0, 8, 11, 12)), number
    check(parser, versions[8])  # broken again
    assert check(parser, text) > 10  # and fixed: the pieces of the last version that parsed are reused


@pytest.mark.usefixtures("small_pieces")
def test_an_edit_parses_only_the_pieces_it_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    text = SPANNING + MODULE
    parser = DocumentParser()
    check(parser, text)
    seen = parsed_pieces(monkeypatch)
    check(parser, text.replace("    total = 0\n", "    total = 1\n"))
    # The changed statement, besides the whole parse the comparison makes.
    assert seen[1:] == ["class _:\n    pass\nclass _:\n    total = 1\n"]
    assert parser.reused > 10
    seen.clear()
    check(parser, text.replace("    total = 0\n", "    total = 1\n") + "# the end\n")
    assert len(seen) == 2 and seen[1].endswith("# the end\n")


@pytest.mark.usefixtures("small_pieces")
def test_a_repeated_statement_is_never_one_node_in_two_places() -> None:
    # The second and third `x = 1` are the same piece of text, in each block.
    text = "import os\n\nx = 1\nx = 1\nx = 1\n\n\ndef f():\n    x = 1\n    x = 1\n    x = 1\n"
    parser = DocumentParser()
    check(parser, text)
    text += "y = 2\n"
    tree = parser.parse(text)
    assert parser.reused > 0
    assert tree is not None and tree.body[2] is not tree.body[3]
    function = tree.body[4]
    assert function.body.body[1] is not function.body.body[2]


def test_a_small_document_is_parsed_whole() -> None:
    parser = DocumentParser()
    assert parser.parse("x = 1\n" * 10) is None
    assert parser.parse("x = 1\n" * 2000) is not None
