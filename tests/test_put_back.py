"""A run that reads the modules it checks from the kept trees puts each back to its skeleton once
its own check is done, when that check read no other module whole and left every table that may
hold nodes as it was: what it finds is what a run that parses everything finds, and no table
holds a node of a module put back (read again, it would come back as other nodes)."""

from __future__ import annotations

import gc
import types
from pathlib import Path

import libcst as cst
import pytest
from test_positions import nodes_of

from ddplint.config import Settings
from ddplint.engine import context_modules
from ddplint.engine.checker import Linter
from ddplint.model import skeleton
from ddplint.model.facts import CallSite, Loop, ModuleFacts, Scope
from ddplint.model.skeleton import LazyModuleFacts, LazyScope, put_back, way_back
from ddplint.run import group
from ddplint.run.cache.trees import TreeCache
from ddplint.run.runner import RunOptions, run
from ddplint.syntax.source import Source

# A package whose modules each meet the check a different way: simulated for the training
# script (helpers, data, devices), only named (models, config), or simulated by a rule during
# their own check only (hooks: DDP013 asks what its functions update).
PACKAGE = {
    "__init__.py": "",
    "config.py": """\
import os

RANK = int(os.environ.get("RANK", "0"))
SEED = 17
""",
    "data.py": """\
import torch.distributed as dist


class Shards:
    def __init__(self, files):
        self.files = files[dist.get_rank() :: dist.get_world_size()]

    def __iter__(self):
        return iter(self.files)


def collate(items):
    return sorted(items)
""",
    "devices.py": """\
import torch
import torch.distributed as dist


def setup(local_rank):
    dist.init_process_group("nccl")
    dist.barrier()
    torch.cuda.set_device(local_rank)
""",
    "helpers.py": """\
import torch.distributed as dist


def sync(t):
    dist.all_reduce(t)


def mean(values):
    return sum(values) / len(values)
""",
    "hooks.py": """\
def step_all(optimizers):
    for optimizer in optimizers:
        optimizer.step()
""",
    "models.py": """\
class Net:
    def __init__(self, width=64):
        self.width = width

    def forward(self, x):
        for part in x.split(2):
            x = part.view(-1)
        return x
""",
    "train.py": """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from pkg.config import RANK
from pkg.data import Shards, collate
from pkg.devices import setup
from pkg.helpers import mean, sync
from pkg.hooks import step_all
from pkg.models import Net


def main(files, t, optimizer):
    setup(0)
    model = DDP(Net())
    for batch in Shards(files):
        loss = model(collate(batch)).sum()
        loss.backward()
    if RANK == 0:
        sync(t)
    if dist.get_rank() == 0:
        optimizer.step()
    return mean([1.0, 2.0])


if __name__ == "__main__":
    main([], None, None)
""",
}

FINDINGS = [("data.py", "DDP003", 6), ("devices.py", "DDP012", 7), ("train.py", "DDP013", 26)]


@pytest.fixture
def package(tmp_path: Path) -> Path:
    folder = tmp_path / "pkg"
    folder.mkdir()
    for name, text in PACKAGE.items():
        (folder / name).write_text(text)
    return folder


def _checked(package: Path, **options) -> list:
    context_modules._cache.clear()  # as a new process would
    return run([str(package)], Settings(root=package.parent), RunOptions(**options)).files


def _findings(files) -> list[tuple[str, str, int]]:
    return [(Path(f.filename).name, d.code, d.location.row) for f in files for d in f.diagnostics]


def _warm(package: Path) -> list:
    """A run after an edit of the training script, every other module read from the kept trees."""
    _checked(package, cache=True, keep_trees=True)  # parses and keeps every module
    (package / "train.py").write_text(PACKAGE["train.py"] + "# edited\n")
    return _checked(package, cache=True, keep_trees=True)


def test_a_warm_run_puts_back_the_modules_whose_check_kept_nothing(package: Path) -> None:
    assert _findings(_checked(package)) == FINDINGS  # nothing kept: every module parsed
    files = _warm(package)
    assert _findings(files) == FINDINGS
    assert {Path(f.filename).name: type(f.facts) for f in files} == {
        "__init__.py": LazyModuleFacts,  # never read past its skeleton
        "config.py": LazyModuleFacts,  # put back: its check read only itself, and kept nothing
        "models.py": LazyModuleFacts,
        "data.py": ModuleFacts,  # read whole by the first check, which simulates the script
        "devices.py": ModuleFacts,
        "helpers.py": ModuleFacts,
        "hooks.py": ModuleFacts,  # its own check summarised `step_all`, which holds its nodes
        "train.py": ModuleFacts,  # edited: parsed
    }


def test_no_table_holds_a_node_of_a_module_put_back(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old: list[cst.CSTNode] = []  # the trees let go, kept alive here so that no id is reused
    linters: list[Linter] = []
    check_one = group.check_one

    def checking(linter, facts, options):
        linters.append(linter)
        return check_one(linter, facts, options)

    def putting_back(facts, back):
        old.append(facts.tree)
        put_back(facts, back)

    monkeypatch.setattr(group, "check_one", checking)
    monkeypatch.setattr(skeleton, "put_back", putting_back)
    assert _findings(_warm(package)) == FINDINGS
    ids = {id(node) for tree in old for node in nodes_of(tree)}
    assert _held(linters[-1].project._derived, ids) == []
    assert len(old) == 2  # config.py and models.py, whose trees are gone from their facts


# The facts hold their module's nodes as it is now; a tree's nodes lead only to its own.
_NOT_WALKED = (ModuleFacts, Scope, CallSite, Loop, Source, cst.CSTNode, type, types.ModuleType)


def _held(root: object, ids: set[int]) -> list:
    """The nodes among `ids`, or ints equal to one of them, that `root` reaches, not through the
    facts (which hold the nodes their module has now) nor through a tree."""
    found, seen, stack = [], set(), [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if id(obj) in ids or (type(obj) is int and obj in ids):
            found.append(obj)
        elif isinstance(
            obj, (ModuleFacts, Scope, CallSite, Loop, Source, cst.CSTNode, type, types.ModuleType)
        ):
            continue
        elif isinstance(obj, types.FunctionType):  # what it closes over, not its module's globals
            stack.extend(cell.cell_contents for cell in obj.__closure__ or ())
            stack.extend(obj.__defaults__ or ())
        else:
            stack.extend(gc.get_referents(obj))
    return found


# The same steps, one module at a time ---------------------------------------------------------


def _skeleton(package: Path, name: str) -> LazyModuleFacts:
    path, root = str(package / name), package.parent
    kept = Linter(Settings(root=root))
    kept.trees = TreeCache(root / "cache")
    kept.load(path)  # parsed and kept
    reader = Linter(Settings(root=root))
    reader.trees = TreeCache(root / "cache")
    facts = reader.load(path, context=True)
    assert type(facts) is LazyModuleFacts
    return facts


def test_a_module_put_back_reads_whole_again_into_the_same_objects(package: Path) -> None:
    facts = _skeleton(package, "models.py")
    back = way_back(facts)
    assert back is not None and "_whole" not in back.keys and "source" in back.keys
    forward = facts.functions["Net.forward"]
    split = forward.calls[0]
    first = split.node  # reads it whole
    assert type(facts) is ModuleFacts and way_back(facts) is None
    put_back(facts, back)
    assert type(facts) is LazyModuleFacts and type(forward) is LazyScope
    assert "tree" not in vars(facts) and "spans" not in vars(facts)
    reads = skeleton.read_whole
    again = split.node  # reads it whole again, as other nodes of the same text
    assert skeleton.read_whole == reads + 1
    assert type(facts) is ModuleFacts and facts.functions["Net.forward"] is forward
    assert again is not first and again.deep_equals(first)
    assert forward.node in nodes_of(facts.tree)


def test_only_a_module_read_whole_is_put_back(package: Path) -> None:
    facts = _skeleton(package, "models.py")
    back = way_back(facts)
    with pytest.raises(TypeError):
        put_back(facts, back)  # not read whole: nothing to let go
    whole = Linter(Settings(root=package.parent)).load(str(package / "models.py"))
    assert way_back(whole) is None


def test_forgetting_a_skeletons_positions_reads_nothing(package: Path) -> None:
    facts = _skeleton(package, "models.py")
    facts.forget_positions()
    assert type(facts) is LazyModuleFacts
