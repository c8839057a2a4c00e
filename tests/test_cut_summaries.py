"""A function left unsimulated (a recursive call, a function too large) is read as library code
when it can reach no collective: a training script's findings then do not depend on whether the
package it imports is checked beside it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ddplint.analysis.divergence.analysis import Analysis
from ddplint.config import Settings
from ddplint.engine.checker import Linter
from ddplint.model.project import Project
from ddplint.run.runner import RunOptions, run
from ddplint.syntax.source import Source

# `from_pretrained` calls itself through `_connected` (a loader of connected pipelines) and
# returns what a rank-dependent default gives it: it is simulated, and its cycle is cut.
PIPELINES = """\
import os


class Pipeline:
    @classmethod
    def from_pretrained(cls, name, rank=int(os.environ.get("RANK", 0))):
        if name.endswith("/prior"):
            _connected(name)
        if not os.path.isdir(name):
            raise ValueError(name)
        return rank


def _connected(name):
    return Pipeline.from_pretrained(name + "/prior")
"""

TRAIN = """\
from accelerate import Accelerator

from pipelines import Pipeline


def validate(accelerator, name):
    pipeline = Pipeline.from_pretrained(name)
    return pipeline


def main(name):
    accelerator = Accelerator()
    for step in range(10):
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            validate(accelerator, name)
            accelerator.save_state(name)
"""


def _found(result) -> set[tuple[str, str, int]]:
    return {(Path(d.filename).name, d.code, d.location.row) for d in result.diagnostics}


def test_a_script_reports_the_same_with_or_without_the_package_it_imports(tmp_path: Path) -> None:
    (tmp_path / "pipelines.py").write_text(PIPELINES)
    (tmp_path / "train.py").write_text(TRAIN)
    settings = Settings(root=tmp_path)
    expected = {("train.py", "DDP005", 17)}
    assert _found(run([str(tmp_path / "train.py")], settings, RunOptions())) == expected
    assert _found(run([str(tmp_path)], settings, RunOptions())) == expected


GATHER = """\
import torch.distributed as dist


def gather(x, tries):
    dist.all_reduce(x)
    if tries:
        return gather(x, tries - 1)
    return x


def load(name, tries):
    if tries:
        return load(name, tries - 1)
    return name
"""


def test_a_cut_function_that_can_reach_a_collective_leaves_its_callers_incomplete() -> None:
    facts = Linter().facts_for(Source("train.py", textwrap.dedent(GATHER)), "train")
    analysis = Analysis(Project([facts]))
    # Its sequence is unknown: comparing what the ranks run around it would invent differences.
    assert not analysis.cut(facts, facts.functions["gather"]).complete
    assert analysis.cut(facts, facts.functions["load"]).complete
