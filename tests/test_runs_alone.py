"""A script no other module can call into is reported from its own functions alone: its
findings are those a check of the whole project reports for it, and the functions of the
modules around it that it never calls are not simulated."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddplint.config import Settings
from ddplint.engine.checker import Linter
from ddplint.model.project import Project
from ddplint.run.runner import RunOptions, run
from ddplint.syntax.source import Source

TRAIN = """\
    import torch.distributed as dist

    def main(t):
        if dist.get_rank() == 0:
            dist.all_reduce(t)
    """


def _alone(**others: str) -> bool:
    """Whether `train` runs alone beside the `others` modules (name → code)."""
    linter = Linter()
    train = linter.facts_for(Source("train.py", textwrap.dedent(TRAIN)), "train")
    modules = [
        linter.facts_for(Source(f"{name}.py", textwrap.dedent(code)), name) for name, code in others.items()
    ]
    return Project([train, *modules]).runs_alone(train)


def test_a_script_nothing_names_runs_alone() -> None:
    assert _alone(helpers="import torch\n\ndef train_step(model):\n    model.train()\n")


@pytest.mark.parametrize(
    "code",
    [
        "import train\n",  # imported
        "from train import main\n",
        "from pkg.train import main\n",  # known by a longer name in a package
        "def run(t):\n    train.main(t)\n",  # called through its name, import or not
    ],
)
def test_a_script_another_module_names_does_not(code: str) -> None:
    assert not _alone(runner=code)


def test_a_module_that_defines_a_class_does_not() -> None:
    # A call elsewhere may find its methods by the class's name (`self.trainer.fit()`).
    linter = Linter()
    code = TRAIN + "\n    class Trainer:\n        def fit(self):\n            pass\n"
    train = linter.facts_for(Source("train.py", textwrap.dedent(code)), "train")
    assert not Project([train]).runs_alone(train)


# Its own finding, in a function the script imports and never calls.
EVALUATION = """\
import torch.distributed as dist


def evaluate(t):
    if dist.get_rank() == 0:
        dist.barrier()
"""

SCRIPT = """\
import torch.distributed as dist

from evaluation import evaluate


def main(t):
    if dist.get_rank() == 0:
        dist.all_reduce(t)
"""


def test_findings_of_a_script_alone_are_those_of_the_whole_project(tmp_path: Path) -> None:
    (tmp_path / "evaluation.py").write_text(EVALUATION)
    (tmp_path / "train.py").write_text(SCRIPT)
    settings = Settings(root=tmp_path)
    whole = run([str(tmp_path)], settings, RunOptions())
    found = {(Path(d.filename).name, d.code, d.location.row) for d in whole.diagnostics}
    assert found == {("evaluation.py", "DDP005", 6), ("train.py", "DDP005", 8)}
    alone = run([str(tmp_path / "train.py")], settings, RunOptions())
    assert [(Path(d.filename).name, d.code, d.location.row) for d in alone.diagnostics] == [
        ("train.py", "DDP005", 8)
    ]


def test_the_callers_of_a_function_of_a_script_alone_are_its_own_calls() -> None:
    from ddplint.analysis.origins import Origins, _untraced
    from ddplint.model.project import index_calls

    linter = Linter()
    script = (
        "import torch\nimport torch.distributed as dist\n\nfrom helpers import setup as other\n\n"
        "def setup(rank):\n    torch.cuda.set_device(rank)\n\n"
        "def main():\n    setup(dist.get_rank())\n    other(0)\n    setup(0)\n"
    )
    train = linter.facts_for(Source("train.py", script), "train")
    helpers = linter.facts_for(
        Source("helpers.py", "def setup(x):\n    pass\n\ndef run():\n    setup(1)\n"), "helpers"
    )
    project = Project([train, helpers])
    origins = Origins(project)
    setup = train.functions["setup"]
    found = origins.callers(setup)
    assert origins._callers is None  # the project's calls were not indexed
    assert found == index_calls(project, project.files.values(), skip=_untraced)[id(setup)]
    assert [(module.filename, call.node.args[0].value.__class__.__name__) for module, call in found] == [
        ("train.py", "Call"),
        ("train.py", "Integer"),
    ]
