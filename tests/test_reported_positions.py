"""A run drops the positions of each module it has reported (an entry per node of the module):
the findings are those of a run that keeps them, messages naming lines of modules reported
earlier included."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddplint.config import Settings
from ddplint.model.facts import ModuleFacts
from ddplint.run.runner import RunOptions, run

# `train.py` is reported after `pkg/metrics.py`, and its message names a line of it.
PROJECT = {
    "pkg/__init__.py": "",
    "pkg/metrics.py": """\
        import torch.distributed as dist

        def reduce_mean(t):
            dist.all_reduce(t)
            return t / dist.get_world_size()

        def log_rank_zero(t):
            if dist.get_rank() == 0:
                dist.barrier()
        """,
    "train.py": """\
        import torch.distributed as dist

        from pkg.metrics import reduce_mean

        def step(loss):
            if dist.get_rank() == 0:
                print(reduce_mean(loss).item())
        """,
}


def _run(folder: Path, jobs: int) -> tuple[list[tuple], list[ModuleFacts]]:
    result = run([str(folder)], Settings(root=folder), RunOptions(cache=False, context_budget=0, jobs=jobs))
    found = [(Path(d.filename).name, d.location, d.code, d.message) for d in result.diagnostics]
    return found, [file.facts for file in result.files if file.facts is not None]


@pytest.mark.parametrize("jobs", [1, 2])
def test_findings_are_those_of_a_run_keeping_positions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    for name, text in PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    found, reported = _run(tmp_path, jobs)
    assert sorted(code for _, _, code, _ in found) == ["DDP005", "DDP005"]
    assert any("metrics.py:4" in message for name, _, _, message in found if name == "train.py")
    assert all("spans" not in facts.__dict__ for facts in reported)
    monkeypatch.setattr(ModuleFacts, "forget_positions", lambda self: None)
    kept, _ = _run(tmp_path, jobs)
    assert found == kept
