"""Property tests: generated programs and mutated fixtures never cause an internal error; every
`--fix --unsafe-fixes` result parses; a second fix changes nothing.

The example counts come from the hypothesis profile (tests/conftest.py): a bounded one for CI,
`HYPOTHESIS_PROFILE=ddplint-long` for a long run (see tests/README.md).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ddplint.config import Settings
from ddplint.diagnostics import INTERNAL_ERROR
from ddplint.run.runner import RunOptions, run
from ddplint.syntax.parse import parse_module

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_TEXTS = sorted(
    {p.read_text(encoding="utf-8") for p in FIXTURES.rglob("*.py")} | {Path(__file__).read_text()}
)

# Pieces that make the rules fire, so that fixes get exercised and not only parsing.
FRAGMENTS = [
    "from torch.utils.data import DataLoader, DistributedSampler\n",
    "import torch.distributed as dist\n",
    "import torch.utils.data as tud\n",
    "sampler = DistributedSampler(ds)\n",
    "sampler = DistributedSampler(ds, shuffle=True, drop_last=False)\n",
    "loader = DataLoader(ds, shuffle=True, sampler=sampler)\n",
    "loader = tud.DataLoader(ds, 4, True, sampler)\n",
    "loader = DataLoader(ds, batch_size=2, shuffle=True, sampler=s, **kw)\n",
    "loader = DataLoader(ds, batch_sampler=bs, batch_size=4, shuffle=True)\n",
    "for epoch in range(10):\n    for x in loader:\n        pass\n",
    "for epoch in range(3):\n    sampler.set_epoch(epoch)\n",
    "while True:\n    for batch in loader:\n        step(batch)\n",
    "def train(loader, epochs):\n    for e in range(epochs):\n"
    "        for b in loader:\n            dist.all_reduce(b)\n",
    "if dist.get_rank() == 0:\n    dist.barrier()\n",
    "class T:\n    def __init__(self):\n        self.sampler = DistributedSampler(d)\n",
    "# noqa\n",
    "x = 1  # noqa: DDP001\n",
    "# ddplint: noqa\n",
    "\t",
    "    ",
    "\\\n",
    "(",
    ")",
    '"""',
    "'",
    "#",
    ":",
    "\r\n",
    "\r",
    "\ufeff",
    "é",
    "lambda: ",
    "async ",
    "await ",
    "yield ",
    "*",
    ",",
]


def check_and_fix(text: str) -> None:
    """The properties, for one module written as UTF-8."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "module.py"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        settings = Settings(root=Path(folder))
        checked = run([str(path)], settings)
        assert [d.message for d in checked.diagnostics if d.code == INTERNAL_ERROR] == []
        original = path.read_bytes()
        first = run([str(path)], settings, RunOptions(fix=True, unsafe_fixes=True))
        assert [d.message for d in first.diagnostics if d.code == INTERNAL_ERROR] == []
        fixed = path.read_bytes()
        if fixed != original:
            parses_as_strictly_as(fixed, original)  # a fix never leaves code that does not parse
        second = run([str(path)], settings, RunOptions(fix=True, unsafe_fixes=True))
        assert [d.message for d in second.diagnostics if d.code == INTERNAL_ERROR] == []
        assert path.read_bytes() == fixed, "a second --fix changed the file"
        assert second.fixed == 0


def parses_as_strictly_as(fixed: bytes, original: bytes) -> None:
    """libcst's checks ask the running Python whether a name is an identifier: a name from a
    newer Unicode (U+1E5D0, Unicode 16) fails them on 3.11 though libcst's parser reads it. Such
    a module is checked and fixed all the same; its fixed text must then parse as it did."""
    try:
        cst.parse_module(original.decode("utf-8"))
    except cst.CSTValidationError:
        parse_module(fixed.decode("utf-8"), "module.py")
        return
    cst.parse_module(fixed.decode("utf-8"))


# The generator compiles each program it draws (filename "<string>") to keep only valid ones;
# CPython's warnings on that text ("'int' object is not callable") say nothing about ddplint.
GENERATOR_WARNINGS = pytest.mark.filterwarnings("ignore::SyntaxWarning:<string>")


@GENERATOR_WARNINGS
@given(hypothesmith.from_grammar())
def test_generated_programs(text: str) -> None:
    check_and_fix(text)


# Per test, relative to the profile: libcst-built trees are slow to generate, mutations cheap.
BASE = settings().max_examples
SLOW = settings(max_examples=max(10, BASE // 5))
CHEAP = settings(max_examples=BASE * 3 // 2)


@SLOW
@GENERATOR_WARNINGS
@given(hypothesmith.from_node())
def test_generated_syntax_trees(text: str) -> None:
    check_and_fix(text)


@st.composite
def mutated_fixture(draw) -> str:
    lines = draw(st.sampled_from(FIXTURE_TEXTS)).splitlines(keepends=True) or [""]
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(
            st.sampled_from(["delete", "duplicate", "swap", "insert", "splice", "truncate", "indent"])
        )
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        if kind == "delete" and len(lines) > 1:
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, max(0, len(lines) - 1)))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "insert":
            lines.insert(i, draw(st.sampled_from(FRAGMENTS)))
        elif kind == "splice":
            line = lines[i]
            at = draw(st.integers(0, len(line)))
            piece = draw(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)))
            lines[i] = line[:at] + piece + line[at:]
        elif kind == "truncate":
            line = lines[i]
            lines[i] = line[: draw(st.integers(0, len(line)))]
            del lines[i + 1 :]
        elif kind == "indent":
            lines[i] = draw(st.sampled_from(["    ", "\t", "  "])) + lines[i]
    return "".join(lines)


@CHEAP
@given(mutated_fixture())
@example(
    "import lightning.pytorch as pl\n\U0001e5d0\n\nclass Model(pl.LightningModule):\n"
    "    def on_validation_epoch_end(self):\n        if self.trainer.is_global_zero:\n"
    "            self.all_gather(self.scores)\n"
)
def test_mutated_fixtures(text: str) -> None:
    check_and_fix(text)


@CHEAP
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12))
def test_fragment_programs(pieces: list[str]) -> None:
    check_and_fix("".join(pieces))
