"""Modules read as context come back as skeletons: facts without nodes, read whole, into the same
objects, the first time a node is asked for; what a check finds is the same either way."""

from __future__ import annotations

import gc
import pickle
import zlib
from pathlib import Path

import pytest
from test_positions import nodes_of
from test_treecache import HostilePayload

from ddplint import analysis
from ddplint.config import Settings
from ddplint.engine import context_modules
from ddplint.engine.checker import Linter
from ddplint.model.facts import CallSite, Loop, ModuleFacts, Scope
from ddplint.model.project import Project
from ddplint.model.skeleton import LazyCallSite, LazyLoop, LazyModuleFacts, LazyScope
from ddplint.run.cache import trees
from ddplint.run.cache.trees import TreeCache
from ddplint.run.runner import RunOptions, run

HELPERS = """\
import torch.distributed as dist


def sync(t):
    dist.all_reduce(t)
"""

# Named by the training script, reaching no collective: read by name only.
MODELS = """\
class Base:
    pass


class Net(Base):
    def __init__(self):
        self.layer = make()

    def forward(self, x):
        for part in x.split(2):
            x = part.view(-1)
        return x


def make(width=64):
    return width


def unwrap(model):
    return model.module if hasattr(model, "module") else model
"""

# Imported on the way, never called from the code the check simulates: a model zoo, with a
# function of its own that reaches a collective.
ZOO = """\
import torch.distributed as dist

from pkg.models import Net


def resnet(depth=50):
    blocks = [Net() for _ in range(depth)]
    return blocks


def synced(t):
    dist.all_reduce(t)
"""

TRAIN = """\
import torch.distributed as dist

from pkg import zoo

from pkg.helpers import sync
from pkg.models import Net


def main(t):
    model = Net()
    model.forward(t)
    if dist.get_rank() == 0:
        sync(t)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(HELPERS)
    (package / "models.py").write_text(MODELS)
    (package / "zoo.py").write_text(ZOO)
    (package / "train.py").write_text(TRAIN)
    return tmp_path


def _kept_linter(folder: Path, root: Path) -> Linter:
    linter = Linter(Settings(root=root))
    linter.trees = TreeCache(folder)
    return linter


def _skeleton(project: Path, name: str) -> LazyModuleFacts:
    path = str(project / "pkg" / name)
    _kept_linter(project / "cache", project).load(path)  # parsed and kept
    facts = _kept_linter(project / "cache", project).load(path, context=True)
    assert type(facts) is LazyModuleFacts
    return facts


def test_a_skeleton_holds_the_facts_that_name_things(project: Path) -> None:
    facts = _skeleton(project, "models.py")
    whole = Linter(Settings(root=project)).load(str(project / "pkg" / "models.py"))
    assert list(facts.functions) == ["Net.__init__", "Net.forward", "make", "unwrap"]
    assert facts.class_bases == whole.class_bases == {"Base": (), "Net": ("Base",)}
    assert facts.imports.aliases == whole.imports.aliases
    forward = facts.functions["Net.forward"]
    assert [(c.name, c.receiver, c.target) for c in forward.calls] == [
        ("x.split", "x", None),
        ("part.view", "part", "x"),
    ]
    assert forward.builders == {"part": ("x.split",), "x": ("part.view",)}  # a loop binds its items
    assert facts.class_attr_builders == {"Net": {"layer": ("make",)}}
    assert [loop.target for loop in forward.loops] == ["part"]
    # What a callee does to its object or result, read without its tree.
    assert [(f.stores_on_self, f.returns_module) for f in facts.functions.values()] == [
        (True, False),
        (False, False),
        (False, False),
        (False, True),
    ]
    assert type(forward) is LazyScope and type(forward.calls[0]) is LazyCallSite
    assert type(forward.loops[0]) is LazyLoop
    assert "tree" not in vars(facts) and "classes" not in vars(facts)


def test_asking_for_a_node_reads_the_module_whole_into_the_same_objects(project: Path) -> None:
    facts = _skeleton(project, "models.py")
    forward = facts.functions["Net.forward"]
    split, view = forward.calls
    loop = forward.loops[0]
    node = view.node  # reads it whole
    assert type(facts) is ModuleFacts
    assert (type(forward), type(split), type(view), type(loop)) == (Scope, CallSite, CallSite, Loop)
    assert facts.functions["Net.forward"] is forward and forward.calls[1] is view
    assert view.loop is loop and loop.scope is forward
    # The nodes are one tree's: each object's node lies in its function's, which lies in the module.
    assert forward.node in nodes_of(facts.tree)
    inside = nodes_of(forward.node)
    assert node in inside and split.node in inside and loop.node in inside
    assert forward.assignments["x"][0] is node
    assert facts.classes["Net"] in facts.tree.body
    assert facts.class_attrs["Net"]["layer"][0].func.value == "make"


def test_reading_whole_leaves_no_second_copy_of_the_facts(project: Path) -> None:
    facts = _skeleton(project, "models.py")

    def scopes_alive() -> int:
        # By exact type: `isinstance` would read `__class__` of every object, deprecated ones too.
        return sum(1 for obj in gc.get_objects() if type(obj) in (Scope, LazyScope))

    enabled = gc.isenabled()
    gc.disable()  # as a run holds it (see ddplint.run.group.collector_paused)
    try:
        before = scopes_alive()
        assert facts.functions["Net.forward"].node is not None  # reads it whole
        # The facts read whole gave their nodes to the skeleton's objects and were freed
        # with their nodes' references, no cycle left for a collector that does not run.
        assert scopes_alive() == before
    finally:
        if enabled:
            gc.enable()


# Read as context: a training loop that hands its step on. Its flags (see Analysis.flags) are
# all a caller's simulation asks of it when it reaches no collective.
LOOP = """\
from torch.nn.parallel import DistributedDataParallel


def fit(step, data):
    for batch in data:
        each(step, batch)
        each(print, batch)


def each(step, batch):
    step(batch)
    hook(batch)
"""


def test_the_flags_of_a_skeletons_functions_read_no_node(project: Path) -> None:
    (project / "pkg" / "loop.py").write_text(LOOP)
    facts = _skeleton(project, "loop.py")
    fit = facts.functions["fit"]
    # Which calls pass a parameter on is kept without the nodes: `step`, not `print`.
    assert [(c.name, c.passes_param) for c in fit.calls] == [("each", True), ("each", False)]
    found = analysis.divergence(Project([facts]), Settings(root=project))
    # `fit` calls a parameter through `each`; `hook`, in a module that names a DDP wrapper, is
    # assigned nowhere, so it holds no wrapped model.
    assert found.flags(facts, fit) == (False, True, True)
    assert found.flags(facts, facts.functions["each"]) == (False, False, True)
    assert type(facts) is LazyModuleFacts


def _findings(project: Path, **options) -> list[tuple[str, str, int]]:
    context_modules._cache.clear()  # as a new process would, each run reads the context afresh
    result = run([str(project / "pkg" / "train.py")], Settings(root=project), RunOptions(**options))
    return [(Path(d.filename).name, d.code, d.location.row) for f in result.files for d in f.diagnostics]


def test_a_check_with_context_read_as_skeletons_finds_what_a_fresh_one_finds(project: Path) -> None:
    expected = [("train.py", "DDP005", 13)]
    assert _findings(project) == expected  # nothing kept: every module parsed
    assert _findings(project, cache=True, keep_trees=True) == expected  # keeps them
    train = project / "pkg" / "train.py"
    train.write_text(TRAIN + "# edited\n")
    assert _findings(project, cache=True, keep_trees=True) == expected
    read = {path.name: type(facts) for path, (_, facts) in context_modules._cache.items()}
    # `sync` reaches a collective: simulated, its module read whole. The model's methods reach
    # none (their results follow their inputs, whatever their defaults), and the zoo and the
    # package are only named: read by name only (nothing else calls into the training script,
    # so the zoo's own `synced` is not simulated for its sake).
    assert read == {
        "helpers.py": ModuleFacts,
        "models.py": LazyModuleFacts,
        "zoo.py": LazyModuleFacts,
        "__init__.py": LazyModuleFacts,
    }


def test_a_skeleton_whose_facts_no_longer_read_is_parsed_whole(project: Path) -> None:
    facts = _skeleton(project, "models.py")
    kept = TreeCache(project / "cache").file_for(facts.filename)
    data = kept.read_bytes()
    head = len(trees._MAGIC) + trees._KEY_BYTES
    size = int.from_bytes(data[head : head + trees._SKELETON_SIZE], "big")
    kept.write_bytes(data[: head + trees._SKELETON_SIZE + size] + zlib.compress(b"not a pickle"))
    facts = _kept_linter(project / "cache", project).load(facts.filename, context=True)
    assert type(facts) is LazyModuleFacts
    assert facts.functions["Net.forward"].calls[1].node.func.attr.value == "view"
    assert type(facts) is ModuleFacts


def test_a_foreign_skeleton_runs_no_code(project: Path) -> None:
    facts = _skeleton(project, "models.py")
    kept = TreeCache(project / "cache").file_for(facts.filename)
    data = kept.read_bytes()
    head = len(trees._MAGIC) + trees._KEY_BYTES
    payload = zlib.compress(pickle.dumps(HostilePayload(str(project / "made"))))
    kept.write_bytes(data[:head] + len(payload).to_bytes(trees._SKELETON_SIZE, "big") + payload)
    facts = _kept_linter(project / "cache", project).load(facts.filename, context=True)
    assert not (project / "made").exists()
    assert type(facts) is ModuleFacts  # parsed, since neither part reads
    assert list(facts.functions) == ["Net.__init__", "Net.forward", "make", "unwrap"]
