"""Which collections two processes may iterate in different orders (ddplint.model.iteration_order).

Each case is the body of `f(model, params, cfg, names, root)`, whose last statement is the loop
under question; the answer is the part of its iterable that is unordered, with the reason, or
None where every process iterates it alike.
"""

from __future__ import annotations

import pytest

from ddplint.engine.checker import Linter
from ddplint.model.iteration_order import DIRECTORY, HASH, IterationOrder
from ddplint.model.project import Project
from ddplint.syntax.lazycst import cst
from ddplint.syntax.source import Source

HEADER = (
    "import glob\nimport os\nfrom pathlib import Path\n\n\n"
    "def f(model, params, cfg, names, root, tags: list[str], paths: Path):\n"
)

UNORDERED = [
    # sets of strings
    ("for n in {'a', 'b'}: pass", HASH, "{'a', 'b'}"),
    ("for n in {n for n, p in model.named_parameters()}: pass", HASH, None),
    ("for n in set(model.state_dict()): pass", HASH, None),
    ("for n in frozenset(tags): pass", HASH, None),
    ("d = {'loss': 1, 'acc': 2}\n    for k in d.keys() - {'acc'}: pass", HASH, None),
    ("d = dict(model.named_parameters())\n    for k in set(d): pass", HASH, None),
    ("s = {'x', 'y'}\n    for k in list(s): pass", HASH, "s"),
    (
        "s = set()\n    for n, p in model.named_parameters():\n        s.add(n)\n    for k in s: pass",
        HASH,
        None,
    ),
    ("s = {f'{n}.weight' for n in tags}\n    for k in enumerate(s): pass", HASH, "s"),
    ("for k in set(tags) | {'head'}: pass", HASH, None),
    ("for k in {'a', 'b'}.union(tags): pass", HASH, None),
    ("s = {p.name for p in paths.iterdir()}\n    for k in s: pass", HASH, None),
    # directory listings
    ("for f in os.listdir(root): pass", DIRECTORY, "os.listdir(root)"),
    ("for i, f in enumerate(os.listdir(root)): pass", DIRECTORY, "os.listdir(root)"),
    ("for f in [x for x in glob.glob('*.pt') if x]: pass", DIRECTORY, "glob.glob('*.pt')"),
    ("for f in os.listdir(root)[:4]: pass", DIRECTORY, "os.listdir(root)"),
    ("for f in Path(root).glob('*.pt'): pass", DIRECTORY, None),
    ("for f in (Path(root) / 'x').rglob('*'): pass", DIRECTORY, None),
    ("for f in paths.glob('*'): pass", DIRECTORY, None),
    ("files = os.listdir(root)\n    for a, b in zip(files, names): pass", DIRECTORY, "files"),
    ("d = {f: 0 for f in os.listdir(root)}\n    for k, v in d.items(): pass", DIRECTORY, "d.items()"),
    ("for f in os.listdir(root) if root else []: pass", DIRECTORY, "os.listdir(root)"),
]

ORDERED = [
    "for f in sorted(os.listdir(root)): pass",
    "files = glob.glob('*.pt')\n    files.sort()\n    for f in files: pass",
    "s = {n for n in tags}\n    s = sorted(s)\n    for k in s: pass",
    "for i in {1, 2, 3}: pass",
    "for i in set(range(4)): pass",
    "for shape in {tuple(p.shape) for p in model.parameters()}: pass",
    "for g in set(cfg.groups): pass",  # elements of unknown type
    "for n in set(names): pass",  # a parameter without an annotation
    "for k in {'only'}: pass",
    "for n, p in model.named_parameters(): pass",
    "for k, v in model.state_dict().items(): pass",
    "d = {'loss': 1, 'acc': 2}\n    for k in d: pass",
    "for f in cfg.fs.glob('*.pt'): pass",  # not a pathlib path
    "for x in {'a', 'b'}:\n        for y in x: pass",  # the inner loop walks one string
]


def _loop_iter(body: str):
    source = HEADER + "    " + body + "\n"
    facts = Linter().facts_for(Source.from_bytes("case.py", source.encode()), "case")
    scope = facts.functions["f"]
    loop = [loop for loop in scope.loops if isinstance(loop.node, cst.For)][-1]
    return facts, scope, loop.node.iter


@pytest.mark.parametrize(("body", "kind", "part"), UNORDERED, ids=[case[0] for case in UNORDERED])
def test_unordered(body: str, kind: str, part: str | None) -> None:
    facts, scope, iterable = _loop_iter(body)
    found = IterationOrder(Project([facts])).locate(facts, scope, iterable)
    assert found is not None
    wrapped, reason = found
    assert reason.kind == kind
    assert facts.code(wrapped) == (part if part is not None else facts.code(iterable))


@pytest.mark.parametrize("body", ORDERED)
def test_ordered(body: str) -> None:
    facts, scope, iterable = _loop_iter(body)
    assert IterationOrder(Project([facts])).locate(facts, scope, iterable) is None
