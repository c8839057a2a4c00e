"""A module's text may be freed once it is loaded: asked for again, it is the text that was read."""

from __future__ import annotations

import pickle
import re
import shutil
from pathlib import Path

import pytest
from fixture_harness import FIXTURES

from ddplint.config import Settings
from ddplint.engine.checker import Linter
from ddplint.report.full import render_full
from ddplint.run.runner import RunOptions, run
from ddplint.syntax.source import Source

TEXT = (
    "# café\nimport torch.distributed as dist\n\n\ndef f(rank):\n    if rank == 0:\n        dist.barrier()\n"
)


def _forgotten(tmp_path: Path) -> tuple[Path, Source]:
    path = tmp_path / "m.py"
    path.write_text(TEXT, encoding="utf-8")
    facts = Linter(Settings(root=tmp_path)).load(str(path))
    facts.source.forget_text(facts.tree)
    assert "text" not in vars(facts.source)
    return path, facts.source


def test_a_forgotten_text_is_read_back_from_its_file(tmp_path: Path) -> None:
    _, source = _forgotten(tmp_path)
    assert source.text == TEXT
    assert vars(source)["text"] == TEXT  # read once, then kept
    assert "_forgotten" not in vars(source)


@pytest.mark.parametrize("change", ["edited", "removed", "undecodable"])
def test_a_forgotten_text_whose_file_changed_is_printed_from_its_tree(tmp_path: Path, change: str) -> None:
    path, source = _forgotten(tmp_path)
    if change == "edited":
        path.write_text(TEXT.replace("rank == 0", "rank == 1"), encoding="utf-8")
    elif change == "removed":
        path.unlink()
    else:
        path.write_bytes(b"x = '\xff'\n")
    assert source.text == TEXT


def test_a_forgotten_text_is_pickled_with_the_text_and_without_the_tree(tmp_path: Path) -> None:
    path, source = _forgotten(tmp_path)
    blob = pickle.dumps(source)
    path.unlink()  # the copy must not need the file
    copy = pickle.loads(blob)
    assert copy.text == TEXT
    assert "_forgotten" not in vars(copy) and b"libcst" not in blob


def _full_report(folder: Path, jobs: int) -> tuple[str, list]:
    result = run([str(folder)], Settings(root=folder), RunOptions(jobs=jobs, context_budget=0))
    return render_full(result.diagnostics), result.files


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_reports_the_same_snippets_with_the_texts_of_its_modules_freed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    folder = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, folder)
    freed, files = _full_report(folder, jobs)
    diagnostics = [d for f in files for d in f.diagnostics]
    # Most modules that report nothing never need their text again (some have it read for
    # positions; those whose lines the messages of another module's findings quote need it).
    quoted = {d.filename for d in diagnostics} | {
        name for d in diagnostics for name in re.findall(r"([\w.]+\.py):\d+", " ".join([d.message, *d.notes]))
    }
    silent = [
        f.facts
        for f in files
        if f.facts is not None and not f.diagnostics and f.facts.path.name not in quoted
    ]
    freed_texts = [facts for facts in silent if "text" not in vars(facts.source)]
    assert len(freed_texts) > 0.8 * len(silent) >= 8  # with workers: the group checked here
    monkeypatch.setattr(Source, "forget_text", lambda self, tree: None)
    kept, _ = _full_report(folder, jobs)
    assert kept.count("DDP0") > 100  # with snippets of the code
    assert freed == kept
