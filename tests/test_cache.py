"""`.ddplint_cache/`: cached runs report exactly what uncached runs report, even after a helper changes."""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path

import pytest

from ddplint.config import Settings
from ddplint.diagnostics import Location
from ddplint.run.cache.findings import CACHE_DIR
from ddplint.run.runner import RunOptions, run

FIXTURES = Path(__file__).parent / "fixtures"

HELPER_SILENT = """\
    def reduce_mean(t):
        return t
    """
HELPER_REDUCING = """\
    import torch.distributed as dist

    def reduce_mean(t):
        dist.all_reduce(t)
        return t / dist.get_world_size()
    """
PROJECT = {
    "pkg/__init__.py": "",
    "pkg/metrics.py": HELPER_SILENT,
    "pkg/evaluate.py": """\
        from .metrics import reduce_mean

        def accuracy(logits, y):
            return reduce_mean((logits.argmax(1) == y).float().mean())
        """,
    "train.py": """\
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        from pkg.evaluate import accuracy

        def step(logits, y):
            if dist.get_rank() == 0:
                print("acc", accuracy(logits, y).item())

        sampler = DistributedSampler(range(10))
        loader = DataLoader(range(10), sampler=sampler, shuffle=True)
        """,
    "notes.py": "import json\n",
    "broken.py": "def f(:\n    pass\n",
}


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _findings(folder: Path, *, cache: bool) -> list[tuple]:
    options = RunOptions(cache=cache, context_budget=0)
    result = run([str(folder)], Settings(root=folder), options)
    return [
        (
            Path(d.filename).relative_to(folder).as_posix(),
            d.location,
            d.end_location,
            d.code,
            d.message,
            d.fix,
        )
        for d in result.diagnostics
    ]


def test_cached_runs_match_uncached_runs_before_and_after_a_helper_changes(tmp_path: Path) -> None:
    _write(tmp_path, PROJECT)
    cold = _findings(tmp_path, cache=True)
    assert cold == _findings(tmp_path, cache=False)
    assert ("train.py", "DDP001") in {(f, code) for f, _, _, code, _, _ in cold}
    assert "DDP005" not in {code for _, _, _, code, _, _ in cold}
    assert ("broken.py", "E999") in {(f, code) for f, _, _, code, _, _ in cold}

    warm = _findings(tmp_path, cache=True)
    assert warm == cold

    # train.py is untouched; the helper two imports away now all-reduces.
    _write(tmp_path, {"pkg/metrics.py": HELPER_REDUCING})
    after = _findings(tmp_path, cache=True)
    assert after == _findings(tmp_path, cache=False)
    assert ("train.py", "DDP005") in {(f, code) for f, _, _, code, _, _ in after}
    assert _findings(tmp_path, cache=True) == after


def test_a_warm_run_parses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, PROJECT)
    _findings(tmp_path, cache=True)
    from ddplint.engine.checker import Linter

    def refuse(self, filename, data=None):
        raise AssertionError(f"parsed {filename}")

    monkeypatch.setattr(Linter, "load", refuse)
    assert _findings(tmp_path, cache=True)


def _parsed(monkeypatch: pytest.MonkeyPatch, folder: Path) -> list[str]:
    """The files the runs from now on parse (rather than read back from the cache)."""
    from ddplint.engine import context_modules
    from ddplint.engine.checker import Linter

    parsed: list[str] = []
    real = Linter.facts_for

    def counting(self, source, module_name=None, **options):
        parsed.append(Path(source.filename).relative_to(folder).as_posix())
        return real(self, source, module_name, **options)

    monkeypatch.setattr(Linter, "facts_for", counting)
    context_modules._cache.clear()  # as in a new process: no module read yet
    return parsed


def test_after_an_edit_only_the_edited_module_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, PROJECT)
    _findings(tmp_path, cache=True)  # the first run keeps no trees
    _write(tmp_path, {"pkg/metrics.py": HELPER_SILENT + "# edited\n"})
    _findings(tmp_path, cache=True)  # the next ones keep what they parse

    parsed = _parsed(monkeypatch, tmp_path)
    _write(tmp_path, {"pkg/metrics.py": HELPER_REDUCING})
    after = _findings(tmp_path, cache=True)
    # Its whole group is checked again, from the trees kept of the others.
    assert parsed == ["pkg/metrics.py"]
    assert after == _findings(tmp_path, cache=False)
    assert ("train.py", "DDP005") in {(f, code) for f, _, _, code, _, _ in after}


def test_context_read_around_a_few_files_is_kept_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What pre-commit runs: the changed files only; the modules around them are context."""
    _write(tmp_path, {**PROJECT, "pkg/metrics.py": HELPER_REDUCING})
    settings, options = Settings(root=tmp_path), RunOptions(cache=True)
    train = tmp_path / "train.py"
    first = [(d.code, d.location) for d in run([str(train)], settings, options).diagnostics]
    assert ("DDP005", Location(8, 22)) in first  # found through pkg/evaluate.py and pkg/metrics.py
    for edit in ("# edited\n", "# edited again\n"):
        parsed = _parsed(monkeypatch, tmp_path)
        train.write_text(textwrap.dedent(PROJECT["train.py"]) + edit, encoding="utf-8")
        again = [(d.code, d.location) for d in run([str(train)], settings, options).diagnostics]
        assert again == first
    assert parsed == ["train.py"]  # the second time, the context was read back


def test_runs_with_other_settings_share_the_kept_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, PROJECT)
    _findings(tmp_path, cache=True)
    _write(tmp_path, {"pkg/metrics.py": HELPER_REDUCING})
    _findings(tmp_path, cache=True)  # keeps the group of pkg/metrics.py
    parsed = _parsed(monkeypatch, tmp_path)
    settings = Settings(root=tmp_path, ignore=["DDP001"])
    result = run([str(tmp_path)], settings, RunOptions(cache=True, context_budget=0))
    assert {d.code for d in result.diagnostics} == {"DDP005", "E999"}
    assert parsed == ["broken.py"]  # a file that does not parse is never kept


def test_a_run_that_found_no_cache_keeps_no_trees(tmp_path: Path) -> None:
    _write(tmp_path, PROJECT)
    settings = Settings(root=tmp_path)
    run([str(tmp_path)], settings, RunOptions(cache=True, context_budget=0))
    assert not list((tmp_path / CACHE_DIR).glob("trees-*"))
    _write(tmp_path, {"pkg/metrics.py": HELPER_REDUCING})
    run([str(tmp_path)], settings, RunOptions(cache=True, context_budget=0, keep_trees=False))
    assert not list((tmp_path / CACHE_DIR).glob("trees-*"))
    _write(tmp_path, {"pkg/metrics.py": HELPER_SILENT})
    run([str(tmp_path)], settings, RunOptions(cache=True, context_budget=0))
    assert len(list((tmp_path / CACHE_DIR).glob("trees-*/*.pickle.z"))) == 4  # the group of pkg/metrics.py
    assert (
        len(list((tmp_path / CACHE_DIR).glob("trees-*/flags-*.pickle"))) == 1
    )  # and its flags (see run.carry)


def test_a_cache_folder_that_cannot_be_looked_into_is_run_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, PROJECT)
    uncached = _findings(tmp_path, cache=False)
    real_is_dir = Path.is_dir

    def refused(self):
        if CACHE_DIR in self.parts:
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_dir(self)

    monkeypatch.setattr(Path, "is_dir", refused)
    assert _findings(tmp_path, cache=True) == uncached


def test_a_buffer_reads_the_kept_context_and_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What flake8 in an editor and the language server run: one unsaved buffer in its project."""
    from ddplint.run.buffer import check_buffer

    _write(tmp_path, {**PROJECT, "pkg/metrics.py": HELPER_REDUCING})
    settings = Settings(root=tmp_path)
    text = textwrap.dedent(PROJECT["train.py"]) + "# not saved yet\n"
    # No cache in the project: nothing is written into it.
    first = check_buffer(str(tmp_path / "train.py"), text, settings).diagnostics
    assert not (tmp_path / CACHE_DIR).exists()
    assert ("DDP005", Location(8, 22)) in [(d.code, d.location) for d in first]
    _findings(tmp_path, cache=True)
    _write(tmp_path, {"pkg/evaluate.py": textwrap.dedent(PROJECT["pkg/evaluate.py"]) + "# edited\n"})
    _findings(tmp_path, cache=True)  # keeps the group of pkg/evaluate.py
    kept = sorted(p.name for p in (tmp_path / CACHE_DIR).glob("trees-*/*"))
    parsed = _parsed(monkeypatch, tmp_path)
    again = check_buffer(str(tmp_path / "train.py"), text, settings).diagnostics
    assert parsed == ["train.py"]  # the buffer only
    assert [(d.code, d.location) for d in again] == [(d.code, d.location) for d in first]
    assert sorted(p.name for p in (tmp_path / CACHE_DIR).glob("trees-*/*")) == kept


def test_a_run_without_the_cache_may_read_the_kept_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """flake8's run over its files: no findings cache, the kept trees read, nothing written."""
    _write(tmp_path, PROJECT)
    settings, options = Settings(root=tmp_path), RunOptions(context_budget=0, read_trees=True)
    uncached = _findings(tmp_path, cache=False)
    run([str(tmp_path)], settings, options)
    assert not (tmp_path / CACHE_DIR).exists()
    _findings(tmp_path, cache=True)
    _write(tmp_path, {"pkg/evaluate.py": textwrap.dedent(PROJECT["pkg/evaluate.py"]) + "# edited\n"})
    _findings(tmp_path, cache=True)  # keeps the group of pkg/evaluate.py
    kept = sorted(p.name for p in (tmp_path / CACHE_DIR).glob("*/*"))
    parsed = _parsed(monkeypatch, tmp_path)
    found = run([str(tmp_path)], settings, options).diagnostics
    assert parsed == ["broken.py"]  # a file that does not parse is never kept
    assert [(d.code, d.location) for d in found] == [(f[3], f[1]) for f in uncached]
    assert sorted(p.name for p in (tmp_path / CACHE_DIR).glob("*/*")) == kept


def test_flakes_run_reads_the_kept_trees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ddplint.integrations import flake8_findings

    _write(tmp_path, PROJECT)
    monkeypatch.chdir(tmp_path)  # flake8 in the project, as `ddplint check` was
    _findings(tmp_path, cache=True)
    _write(tmp_path, {"pkg/evaluate.py": textwrap.dedent(PROJECT["pkg/evaluate.py"]) + "# edited\n"})
    _findings(tmp_path, cache=True)  # keeps the group of pkg/evaluate.py
    parsed = _parsed(monkeypatch, tmp_path)
    flake8_findings._whole_run.cache_clear()
    flake8_findings._analysis_settings.cache_clear()
    found = flake8_findings._whole_run((str(tmp_path),), str(tmp_path), 0.0, True)
    flake8_findings._whole_run.cache_clear()
    assert set(parsed) <= {"broken.py"}  # (it may be checked in a worker: then not seen here)
    assert "DDP001" in {d.code for d in found[str((tmp_path / "train.py").resolve())]}


WARM_COMMAND = """
import sys
from pathlib import Path
from ddplint.integrations import cli  # the command's own modules, as `ddplint check` loads them
from ddplint.config import Settings
from ddplint.run.runner import RunOptions, run

folder = Path(sys.argv[1])
result = run([str(folder)], Settings(root=folder), RunOptions(cache=True, context_budget=0))
print(len(result.diagnostics), "libcst" in sys.modules)
"""


def test_a_warm_run_never_imports_libcst(tmp_path: Path) -> None:
    # Importing libcst was most of a warm run: a run that parses nothing does without it.
    import subprocess
    import sys

    _write(tmp_path, PROJECT)
    command = [sys.executable, "-c", WARM_COMMAND, str(tmp_path)]
    cold = subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()
    warm = subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()
    assert cold[1] == "True" and int(cold[0]) > 0
    assert warm == [cold[0], "False"]


def test_a_warm_run_selects_nothing_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Files the prefilter skipped are stored as having no findings: nothing is outlined again.
    _write(tmp_path, PROJECT)
    cold = _findings(tmp_path, cache=True)
    from ddplint.run import prefilter

    def refuse(*args, **kwargs):
        raise AssertionError("selected again")

    monkeypatch.setattr(prefilter, "outline", refuse)
    monkeypatch.setattr(prefilter, "refine", refuse)
    assert _findings(tmp_path, cache=True) == cold


def test_the_cache_folder_is_tagged_ignored_and_holds_whole_entries(tmp_path: Path) -> None:
    _write(tmp_path, PROJECT)
    _findings(tmp_path, cache=True)
    _write(tmp_path, {"pkg/metrics.py": HELPER_REDUCING})
    _findings(tmp_path, cache=True)
    root = tmp_path / CACHE_DIR
    assert (root / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (root / ".gitignore").read_text() == "*\n"
    findings = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith("trees-")]
    assert len(findings) == 1
    entries = list(findings[0].iterdir())
    assert entries and all(p.suffix == ".json" for p in entries)
    for entry in entries:
        json.loads(entry.read_text(encoding="utf-8"))
    # The second run kept the modules it parsed: the group of pkg/metrics.py.
    (trees,) = root.glob("trees-*")
    assert len(list(trees.glob("*.pickle.z"))) == 4
    # Beside them, the flags its analysis settled (see ddplint.run.carry), and nothing half-written.
    assert sorted(p.suffix for p in trees.iterdir()) == [".pickle", ".z", ".z", ".z", ".z"]


def test_a_damaged_entry_is_computed_again(tmp_path: Path) -> None:
    _write(tmp_path, PROJECT)
    cold = _findings(tmp_path, cache=True)
    for entry in (tmp_path / CACHE_DIR).glob("*/*.json"):
        entry.write_text("{not json", encoding="utf-8")
    assert _findings(tmp_path, cache=True) == cold


def test_other_settings_do_not_share_entries(tmp_path: Path) -> None:
    _write(tmp_path, PROJECT)
    _findings(tmp_path, cache=True)
    settings = Settings(root=tmp_path, ignore=["DDP001"])
    result = run([str(tmp_path)], settings, RunOptions(cache=True, context_budget=0))
    assert "DDP001" not in {d.code for d in result.diagnostics}


def test_other_ddplint_code_does_not_share_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ddplint.run.cache.findings

    _write(tmp_path, PROJECT)
    _findings(tmp_path, cache=True)
    first = {p.name for p in (tmp_path / CACHE_DIR).iterdir() if p.is_dir()}
    # The same version number over other code: an install from a checkout between releases.
    monkeypatch.setattr(ddplint.run.cache.findings, "code_key", lambda: "other code")
    _findings(tmp_path, cache=True)
    second = {p.name for p in (tmp_path / CACHE_DIR).iterdir() if p.is_dir()}
    assert len(first) == 1
    # Findings, and the trees kept by this second run: neither is shared with the other code.
    new = sorted(second - first)
    assert len(new) == 2 and new[1].startswith("trees-0.1.0-other code")
    # Back to the first code: its trees replace the other code's, never to be read again.
    monkeypatch.undo()
    _write(tmp_path, {"pkg/metrics.py": HELPER_REDUCING})
    _findings(tmp_path, cache=True)
    (trees,) = (tmp_path / CACHE_DIR).glob("trees-*")
    assert not trees.name.startswith("trees-0.1.0-other code")
    assert len(list(trees.glob("*.pickle.z"))) == 4


def test_fixtures_give_the_same_findings_cold_and_warm(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    folder = tmp_path / "fixtures"
    uncached = _findings(folder, cache=False)
    assert uncached
    assert _findings(folder, cache=True) == uncached
    assert _findings(folder, cache=True) == uncached


DAY = 24 * 3600


def _aged(path: Path, seconds: float) -> None:
    when = time.time() - seconds
    os.utime(path, (when, when))


def test_a_new_findings_folder_removes_those_unused_for_a_week(tmp_path: Path) -> None:
    _write(tmp_path, PROJECT)
    _findings(tmp_path, cache=True)
    root = tmp_path / CACHE_DIR
    (current,) = [f for f in root.iterdir() if f.is_dir()]
    stale = root / "0.0.9-0123456789abcdef"
    recent = root / "0.1.0-fedcba9876543210"
    trees = root / "trees-0.0.9-0123456789abcdef"
    for folder in (stale, recent, trees):
        folder.mkdir()
        (folder / "entry.json").write_text("{}", encoding="utf-8")
    left_behind, writing = recent / ".tmp-killed", recent / ".tmp-writing"
    for temporary in (left_behind, writing):
        temporary.write_text("", encoding="utf-8")
    _aged(left_behind, 2 * 3600)  # a run killed while writing it
    for folder in (stale, trees):
        _aged(folder, 8 * DAY)
    _aged(recent, 6 * DAY)
    _aged(current, 8 * DAY)

    run([str(tmp_path)], Settings(root=tmp_path, select=["DDP005"]), RunOptions(cache=True, context_budget=0))

    assert not stale.exists() and not current.exists()
    assert recent.is_dir() and trees.is_dir()  # used this week; trees go with their version
    assert not left_behind.exists() and writing.exists()
    assert len([f for f in root.iterdir() if f.is_dir()]) == 3  # recent, trees and the new one


def test_a_run_that_only_reads_its_folder_marks_it_used(tmp_path: Path) -> None:
    _write(tmp_path, PROJECT)
    _findings(tmp_path, cache=True)
    (folder,) = [f for f in (tmp_path / CACHE_DIR).iterdir() if f.is_dir()]
    _aged(folder, 8 * DAY)
    _findings(tmp_path, cache=True)  # warm: writes nothing
    assert time.time() - folder.stat().st_mtime < DAY
