"""Worker processes change how fast findings come, never which or in what order."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inline_pool import InlinePool

from ddplint.config import Settings
from ddplint.run import prefilter, shared_load, workers
from ddplint.run.runner import RunOptions, run

FIXTURES = Path(__file__).parent / "fixtures"


def _report(folder: Path, jobs: int, *, cache: bool = False) -> list[tuple]:
    options = RunOptions(jobs=jobs, cache=cache, context_budget=0)
    result = run([str(folder)], Settings(root=folder), options)
    return [
        (d.filename, d.location, d.end_location, d.code, d.message, d.fix, d.notes)
        for d in result.diagnostics
    ]


def test_workers_report_what_one_process_reports_in_the_same_order(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    folder = tmp_path / "fixtures"
    files = sorted(folder.rglob("*.py"))
    selection = prefilter.select(files, None, graph=True)
    groups = workers.groups_of(files, selection.modules, selection.graph.components())
    assert len(groups) > 2, "the fixtures are many independent programs"
    single = _report(folder, 1)
    assert single
    assert _report(folder, 2) == single
    assert _report(folder, 3, cache=True) == single  # cold, filling the cache from workers
    assert _report(folder, 2, cache=True) == single  # warm


def test_a_package_that_imports_itself_stays_in_one_group(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .a import f\n")
    (tmp_path / "pkg" / "a.py").write_text("def f(): pass\n")
    (tmp_path / "pkg" / "b.py").write_text("from pkg import f\n")
    (tmp_path / "script.py").write_text("import os\n")
    files = sorted(tmp_path.rglob("*.py"))
    selection = prefilter.select(files, None, graph=True)
    groups = workers.groups_of(files, selection.modules, selection.graph.components())
    assert sorted(sorted(p.name for p in g) for g in groups) == [
        ["__init__.py", "a.py", "b.py"],
        ["script.py"],
    ]


def test_groups_are_checked_here_when_no_worker_can_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    folder = tmp_path / "fixtures"
    single = _report(folder, 1)

    def refuse(*args, **kwargs):
        raise OSError("no semaphores here")

    import concurrent.futures

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", refuse)
    assert _report(folder, 2) == single


def test_no_worker_outlives_the_command(tmp_path: Path) -> None:
    # The command ends its process at once; a worker left waiting for work would hold the
    # output pipe open, and this would time out.
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    ddplint = str(Path(sys.executable).with_name("ddplint"))
    expected = len(_report(tmp_path / "fixtures", 1))
    for _ in range(3):
        argv = [ddplint, "check", "--no-cache", "--jobs", "2", "--output-format", "concise", "fixtures"]
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 1
        assert done.stdout.count(": DDP") == expected


def _wait_for(event) -> None:
    event.wait(60)


def test_a_run_leaves_the_callers_own_child_processes_alone(tmp_path: Path) -> None:
    import multiprocessing

    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    release = multiprocessing.Event()
    child = multiprocessing.Process(target=_wait_for, args=(release,))
    child.start()
    try:
        assert _report(tmp_path / "fixtures", 2)
        assert child.is_alive()  # not waited for: it is not one of ddplint's workers
    finally:
        release.set()
        child.join(10)


def test_the_other_groups_are_queued_behind_the_largest_groups_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker helps load the largest group first, then checks the others while this
    # process checks that one.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from pkg import m0\n")
    for index in range(8):
        body = "import torch.distributed as dist\nfrom pkg import m0\n\n\n"
        body += f"def f{index}(x):\n    dist.all_reduce(x)\n" * (index + 1)
        (tmp_path / "pkg" / f"m{index}.py").write_text(body)
    for index in range(3):
        script = "import torch.distributed as dist\n\nif dist.get_rank() == 0:\n    dist.barrier()\n"
        (tmp_path / f"script{index}.py").write_text(script)
    single = _report(tmp_path, 1)
    assert {d[3] for d in single} == {"DDP005"}
    pool = InlinePool()
    monkeypatch.setattr(shared_load, "MIN_FILES", 4)
    monkeypatch.setattr(workers, "start_pool", lambda workers: pool)
    assert _report(tmp_path, 2) == single
    loading = pool.tasks.count("_load_elsewhere")
    assert loading and pool.tasks == ["_load_elsewhere"] * loading + ["_work"] * 3
