"""An editor's checks of one document take the flags of the check before where they still hold,
and find what a fresh check finds (see ddplint.run.carry)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from ddplint.run.buffer import check_buffer
from ddplint.run.carry import Carry
from ddplint.settings import Settings
from ddplint.syntax.reparse import DocumentParser

HELPERS = """\
import torch.distributed as dist


def sync(x):
    dist.all_reduce(x)


def log(x):
    print(x)


def save(checkpointer, x):
    checkpointer.save_state(x)
"""

TRAIN = """\
import torch.distributed as dist

from helpers import log, save, sync


def step(x, rank, ckpt):
    if rank == 0:
        sync(x)
    if rank == 0:
        log(x)
    if rank == 0:
        save(ckpt, x)
"""

# A class of the document named like `save`'s receiver: that call is now guessed to run its
# method, which reaches a collective. Nothing in `helpers.py` changed.
CHECKPOINTER = """

class DistCheckpointer:
    def save_state(self, x):
        dist.barrier()
"""


def findings(path: Path, text: str, carry: Carry | None) -> list[tuple[str, int]]:
    found = check_buffer(str(path), text, Settings(root=path.parent), carry=carry).diagnostics
    return [(d.code, d.location.row) for d in found]


def flags_by_name(carry: Carry) -> dict[tuple[str, str], tuple[bool, bool, bool]]:
    names = {id(s): (Path(f.filename).name, s.name) for f in carry._modules.values() for s in f.scopes}
    return {names[key]: flags for key, (flags, _) in carry._flags.items() if key in names}


def test_flags_carried_between_checks_are_those_a_fresh_check_computes(tmp_path: Path) -> None:
    helpers, train = tmp_path / "helpers.py", tmp_path / "train.py"
    helpers.write_text(HELPERS)
    train.write_text(TRAIN)
    carry = Carry()

    def same_as_fresh(text: str) -> list[tuple[str, int]]:
        carried = findings(train, text, carry)
        fresh_carry = Carry()
        assert carried == findings(train, text, fresh_carry)
        fresh = flags_by_name(fresh_carry)
        assert fresh and {name: flags_by_name(carry)[name] for name in fresh} == fresh
        return carried

    assert same_as_fresh(TRAIN) == [("DDP005", 8)]
    # A comment added: the helpers' flags are taken, the document's computed again.
    brought = []
    real_bring = Carry.bring
    Carry.bring = lambda self, project, settings: brought.append(real_bring(self, project, settings))
    try:
        assert same_as_fresh(TRAIN + "# the end\n") == [("DDP005", 8)]
        assert brought[0] == 3  # those of the functions of `helpers.py` it calls: none reaches the document
        brought.clear()
        # `log` now reaches a collective: its module changed, its flags are computed again.
        helpers.write_text(HELPERS.replace("    print(x)", "    dist.barrier()\n    print(x)"))
        os.utime(helpers, ns=(1, 1))  # another time: read again, whatever the clock's resolution
        assert same_as_fresh(TRAIN) == [("DDP005", 8), ("DDP005", 10)]
        assert brought[0] == 0  # every flag was read from `helpers.py` or the document
        brought.clear()
        # The document shows the project a new class: the helpers' calls may resolve otherwise.
        assert same_as_fresh(TRAIN + CHECKPOINTER) == [("DDP005", 8), ("DDP005", 10), ("DDP005", 12)]
        assert brought[0] == 0
    finally:
        Carry.bring = real_bring


def test_nothing_is_carried_under_other_settings_or_into_another_project(tmp_path: Path) -> None:
    helpers, train = tmp_path / "helpers.py", tmp_path / "train.py"
    helpers.write_text(
        HELPERS.replace("    print(x)", "    work(x)").replace("\n\n\n", "\nfrom extra import work\n\n\n", 1)
    )
    carry = Carry()
    assert findings(train, TRAIN, carry) == [("DDP005", 8)]
    # The same modules, under settings that name what `log` calls a collective.
    settings = Settings(root=tmp_path, collectives=["extra.work"])
    found = check_buffer(str(train), TRAIN, settings, carry=carry).diagnostics
    assert [(d.code, d.location.row) for d in found] == [("DDP005", 8), ("DDP005", 10)]
    assert findings(train, TRAIN, carry) == [("DDP005", 8)]
    # The module `log` calls into appears.
    (tmp_path / "extra.py").write_text(
        "import torch.distributed as dist\n\n\ndef work(x):\n    dist.barrier()\n"
    )
    assert findings(train, TRAIN, carry) == findings(train, TRAIN, None) == [("DDP005", 8), ("DDP005", 10)]
    # And goes again.
    (tmp_path / "extra.py").unlink()
    assert findings(train, TRAIN, carry) == findings(train, TRAIN, None) == [("DDP005", 8)]


def test_calls_into_the_document_resolve_to_its_new_version(tmp_path: Path) -> None:
    """`helpers.py` calls back into the document: its flags and that call are worked out again."""
    helpers, train = tmp_path / "helpers.py", tmp_path / "train.py"
    helpers.write_text("from train import hook\n\n\ndef log(x):\n    hook(x)\n")
    quiet = (
        "import torch.distributed as dist\n\nfrom helpers import log\n\n\n"
        "def step(x, rank):\n    if rank == 0:\n        log(x)\n\n\n"
        "def hook(x):\n    print(x)\n"
    )
    carry = Carry()
    assert findings(train, quiet, carry) == []
    loud = quiet.replace("    print(x)\n", "    dist.barrier()\n")
    assert findings(train, loud, carry) == findings(train, loud, None) == [("DDP005", 8)]
    assert findings(train, quiet + "\n", carry) == []


def run_check(path: Path, brought: list[int] | None = None) -> list[tuple[str, int]]:
    """`ddplint check FILE` as a new process runs it (no module kept in memory from before)."""
    import ddplint.engine.context_modules as context_modules
    import ddplint.run.runner as runner

    context_modules._cache.clear()
    real = runner.bring_kept
    if brought is not None:
        runner.bring_kept = lambda *args: brought.append(real(*args)) or brought[-1]
    try:
        result = runner.run([str(path)], Settings(root=path.parent), runner.RunOptions(cache=True))
    finally:
        runner.bring_kept = real
    return [(d.code, d.location.row) for f in result.files for d in f.diagnostics]


def test_a_run_over_the_same_file_takes_the_flags_the_last_one_kept(tmp_path: Path, monkeypatch) -> None:
    """pre-commit's and flake8's case: each run a new process, the modules around the file read
    back from the cache, the flags of their functions read back too where they still hold."""
    monkeypatch.chdir(tmp_path)
    helpers, train = tmp_path / "helpers.py", tmp_path / "train.py"
    helpers.write_text(HELPERS)
    train.write_text(TRAIN)
    assert run_check(train) == [("DDP005", 8)]  # makes the cache: keeps nothing yet
    assert run_check(train) == [("DDP005", 8)]  # unchanged: its findings from the cache
    train.write_text(TRAIN + "# an edit\n")
    assert run_check(train) == [("DDP005", 8)]  # keeps the trees, and the flags beside them
    kept = list((tmp_path / ".ddplint_cache").glob("trees-*/flags-*.pickle"))
    assert len(kept) == 1
    brought: list[int] = []
    train.write_text(TRAIN + "# another\n")
    assert run_check(train, brought) == [("DDP005", 8)]
    assert brought == [3]  # those of the functions of `helpers.py` it calls
    # `log` reaches a collective now: nothing read from `helpers.py` is taken, only the flags of
    # the unchanged `train.py`'s own module code.
    helpers.write_text(HELPERS.replace("    print(x)", "    dist.barrier()\n    print(x)"))
    brought.clear()
    assert run_check(train, brought) == [("DDP005", 8), ("DDP005", 10)]
    assert brought == [1]
    # The document shows the project a class `save`'s receiver is guessed to be.
    train.write_text(TRAIN + CHECKPOINTER)
    brought.clear()
    assert run_check(train, brought) == [("DDP005", 8), ("DDP005", 10), ("DDP005", 12)]
    assert brought == [0]
    # A damaged file, or one that would run code, is worked out again, and runs nothing.
    marker = tmp_path / "ran"

    class Hostile:
        def __reduce__(self):
            return (os.makedirs, (str(marker),))

    for damaged in (b"not a pickle", pickle.dumps(Settings()), pickle.dumps(Hostile())):
        kept[0].write_bytes(damaged)
        train.write_text(train.read_text() + "# more\n")
        brought.clear()
        assert run_check(train, brought) == [("DDP005", 8), ("DDP005", 10), ("DDP005", 12)]
        assert brought == [0] and not marker.exists()
    # Plain data of the right shape naming a function by a place no run writes.
    form, files, unloaded, settings_key, modules, flags = pickle.loads(kept[0].read_bytes())
    (name, _), value = next((key, value) for key, value in flags.items() if key[0].endswith("helpers.py"))
    flags[(name, -1)] = value
    kept[0].write_bytes(pickle.dumps((form, files, unloaded, settings_key, modules, flags)))
    train.write_text(train.read_text() + "# more\n")
    brought.clear()
    assert run_check(train, brought) == [("DDP005", 8), ("DDP005", 10), ("DDP005", 12)]
    assert brought == [0]


def replays(monkeypatch) -> list[bool]:
    """Whether each summary an earlier check offered was taken, in the order asked."""
    from ddplint.analysis.divergence.analysis import Analysis

    taken: list[bool] = []
    real = Analysis._replayed

    def replayed(self, key, context):
        offered = key in self._carried
        found = real(self, key, context)
        if offered:
            taken.append(found is not None)
        return found

    monkeypatch.setattr(Analysis, "_replayed", replayed)
    return taken


WRAPPED_HELPERS = """\
def update(loss):
    loss.backward()
"""

WRAPPED_TRAIN = """\
from torch.nn.parallel import DistributedDataParallel

from helpers import update


def step(model, loss, rank):
    if rank == 0:
        update(loss)
"""


def test_summaries_of_unchanged_modules_are_replayed_and_taken_only_when_every_answer_holds(
    tmp_path: Path, monkeypatch
) -> None:
    helpers, train = tmp_path / "helpers.py", tmp_path / "train.py"
    helpers.write_text(WRAPPED_HELPERS)
    taken = replays(monkeypatch)
    carry = Carry()
    assert findings(train, WRAPPED_TRAIN, carry) == findings(train, WRAPPED_TRAIN, None) == []
    assert taken == []
    # A comment: `update`'s summaries asked nothing whose answer changed.
    edited = WRAPPED_TRAIN + "# an edit\n"
    assert findings(train, edited, carry) == []
    assert taken and all(taken)
    taken.clear()
    # The model is wrapped now: `backward()` all-reduces. `update` did not change, nor does the
    # document show the project anything new, but its summary asked whether its program wraps
    # a model: the answer differs, so it is simulated again.
    wrapped = edited.replace(
        "    if rank == 0:", "    model = DistributedDataParallel(model)\n    if rank == 0:"
    )
    assert findings(train, wrapped, carry) == findings(train, wrapped, None) == [("DDP005", 9)]
    assert taken and not any(taken)
    taken.clear()
    assert findings(train, wrapped + "# again\n", carry) == [("DDP005", 9)]
    assert taken and all(taken)


def test_a_summary_bound_to_values_from_the_document_is_replayed_only_with_the_same_values(
    tmp_path: Path, monkeypatch
) -> None:
    """`sync(x, rank)` as rank 0 is simulated with `rank` bound to the document's rank value,
    whose origin (a node of the document) changes with every edit."""
    helpers, train = tmp_path / "helpers.py", tmp_path / "train.py"
    helpers.write_text(
        "import torch.distributed as dist\n\n\n"
        "def sync(x, rank):\n    if rank == 0:\n        dist.barrier()\n"
    )
    text = (
        "import torch.distributed as dist\n\nfrom helpers import sync\n\n\n"
        "def step(x):\n    sync(x, dist.get_rank())\n"
    )
    taken = replays(monkeypatch)
    carry = Carry()
    assert findings(train, text, carry) == findings(train, text, None) == []  # reported in helpers.py
    assert findings(train, text + "# an edit\n", carry) == []
    # Bound to the document's rank (as rank 0 and as another rank): simulated again. (`sync` on
    # its own, its parameter bound to nothing, is not simulated: nothing else calls into the
    # document, whose findings are those its own functions see.)
    assert taken == [False, False]


def test_a_message_names_the_line_a_value_comes_from_after_lines_were_added_above_it(tmp_path: Path) -> None:
    """The edited document keeps the nodes of the statements an edit left alone (parsed in
    pieces): `loader`'s node is the same, one line lower. A summary of `log_and_pass` bound to
    the value it comes from, and returning it, must not bring back the line it had before."""
    helpers, train = tmp_path / "helpers.py", tmp_path / "train.py"
    helpers.write_text(
        "import torch.distributed as dist\n\n\n"
        "def log_and_pass(value, loss):\n    dist.all_reduce(loss)\n    return value\n"
    )
    filler = "".join(f"    x{i} = {i}\n" for i in range(1200))  # large enough to be parsed in pieces
    text = (
        "import torch.distributed as dist\n\nfrom helpers import log_and_pass\n\n\n"
        "def train(loader, model):\n" + filler + "    for batch in loader:\n        loss = model(batch)\n"
        "        v = log_and_pass(loss.item(), loss)\n        if v > 10:\n            continue\n"
        "        dist.barrier()\n"
    )
    parser, carry = DocumentParser(), Carry()

    def messages(version: str, **kept) -> list[tuple[int, str]]:
        found = check_buffer(str(train), version, Settings(root=tmp_path), **kept).diagnostics
        return [(d.location.row, d.message) for d in found]

    assert messages(text, parser=parser, carry=carry) == messages(text)
    shifted = text.replace("def train(loader, model):\n", "def train(loader, model):\n    # a comment\n")
    found = messages(shifted, parser=parser, carry=carry)
    assert found == messages(shifted)
    assert [(row, "items of `loader` (train.py:1208)" in message) for row, message in found] == [(1212, True)]
