"""Modules loaded by a worker and sent back pickled are checked exactly as modules loaded here."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import pytest
from inline_pool import InlinePool

from ddplint.config import Settings
from ddplint.engine.checker import Linter
from ddplint.run import shared_load
from ddplint.run.runner import RunOptions, run
from ddplint.syntax import pickling
from ddplint.syntax.reading import LoadError

FIXTURES = Path(__file__).parent / "fixtures"


def _checked(loaded: list) -> list[tuple]:
    linter = Linter(Settings(root=FIXTURES))
    for facts in loaded:
        linter.project.add(facts)
    return [
        (d.filename, d.location, d.end_location, d.code, d.message, d.fix, d.notes)
        for facts in loaded
        for d in linter.check(facts)
    ]


def test_facts_sent_back_by_a_worker_give_the_same_findings(tmp_path: Path) -> None:
    settings = Settings(root=FIXTURES)
    here, received = [], []
    for index, path in enumerate(sorted(FIXTURES.rglob("*.py"))):
        facts = Linter(settings).load(str(path))
        # Through a file, and through the pool's pipe when no folder could be made.
        folder = str(tmp_path) if index % 2 else None
        kind, payload = shared_load._load_elsewhere(settings, str(path), folder)
        assert kind == ("file" if folder else "facts")
        blob = shared_load._read_once(payload) if folder else payload
        here.append(facts)
        received.append(pickling.loads(blob))
    assert list(tmp_path.iterdir()) == []  # each file is removed once read
    findings = _checked(here)
    assert len(findings) > 100
    assert _checked(received) == findings


def test_a_syntax_error_found_by_a_worker_is_reported_as_here(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n    pass\n")
    settings = Settings(root=tmp_path)
    kind, payload = shared_load._load_elsewhere(settings, str(path), str(tmp_path))
    assert kind == "error"
    with pytest.raises(LoadError) as here:
        Linter(settings).load(str(path))
    assert payload == here.value.diagnostic


def test_the_share_a_worker_loads_is_balanced_by_size(tmp_path: Path) -> None:
    sizes = [1000, 800, 600, 400, 200] + [100] * 60
    paths = []
    for index, size in enumerate(sizes):
        path = tmp_path / f"m{index}.py"
        path.write_text("x = 1\n" * (size // 6))
        paths.append(path)
    shared, own = shared_load._shared_out(paths)
    assert shared and own and sorted(shared + own) == sorted(paths)
    assert own == sorted(own, key=lambda p: -p.stat().st_size)  # largest first
    cost = {p: p.stat().st_size for p in paths}
    # This process also checks the whole group once it is loaded.
    here = (
        sum(cost[p] for p in paths if p not in shared)
        + shared_load.RECEIVE_COST * sum(cost[p] for p in shared)
        + shared_load.CHECK_COST * sum(cost.values())
    )
    elsewhere = shared_load.WORKER_COST * sum(cost[p] for p in shared)
    # Largest first: the last, smallest modules even out what the others left.
    assert abs(here - elsewhere) <= min(cost.values()) * shared_load.WORKER_COST


def test_modules_kept_parsed_are_read_here_and_the_rest_shared(tmp_path: Path) -> None:
    paths = []
    for index, size in enumerate([1000, 800, 600, 400, 200, 100]):
        path = tmp_path / f"m{index}.py"
        path.write_text("x = 1\n" * (size // 6))
        paths.append(path)
    stored = {paths[0], paths[3]}
    shared, own = shared_load._shared_out(paths, stored, storing=True)
    assert stored <= set(own)
    assert shared and sorted(shared + own) == sorted(paths)


def test_a_module_a_worker_has_loaded_is_received_before_this_process_loads_its_next(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    paths = []
    for index, size in enumerate([1000, 800, 600, 400, 200, 100]):
        path = tmp_path / f"m{index}.py"
        path.write_text("x = 1\n" * (size // 6))
        paths.append(path)
    shared, own = shared_load._shared_out(paths)
    assert len(shared) >= 2 and len(own) >= 2
    events: list[tuple[str, Path]] = []
    load_here, received = shared_load._load_here, shared_load._received

    def here(linter, path, skeleton=False):
        events.append(("here", path))
        return load_here(linter, path, skeleton)

    def receive(linter, path, future):
        events.append(("received", path))
        return received(linter, path, future)

    monkeypatch.setattr(shared_load, "_load_here", here)
    monkeypatch.setattr(shared_load, "_received", receive)
    linter = Linter(Settings(root=tmp_path))
    loaded = shared_load._load_shared(linter, paths, InlinePool(), str(tmp_path), set(), lambda: None)
    assert [path for path, _ in loaded] == paths
    assert events == [("here", own[0])] + [("received", p) for p in shared] + [("here", p) for p in own[1:]]


def test_a_worker_keeps_what_it_parses(tmp_path: Path) -> None:
    from ddplint.run.cache.trees import TreeCache

    path = FIXTURES / "DDP005" / "bad_barrier_on_rank_zero.py"
    settings = Settings(root=FIXTURES)
    kind, _ = shared_load._load_elsewhere(settings, str(path), None, str(tmp_path))
    assert kind == "facts"
    here = Linter(settings).load(str(path))
    kept = TreeCache(tmp_path).load(here.source, here.module_name)
    assert kept is not None and kept.tree.deep_equals(here.tree)
    assert _checked([kept]) == _checked([here])


def _torch_part() -> Path | None:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "distributed" / "algorithms"


def test_one_large_group_gives_the_same_findings_with_a_worker_helping(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = _torch_part()
    if folder is None or not folder.is_dir():
        pytest.skip("torch is not installed")
    monkeypatch.setattr(shared_load, "MIN_FILES", 4)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the pickles are handed over

    def report(jobs: int) -> list[tuple]:
        result = run([str(folder)], Settings(), RunOptions(jobs=jobs, context_budget=0))
        return [(d.filename, d.location, d.code, d.message) for d in result.diagnostics]

    assert report(2) == report(1)
    assert list(tmp_path.iterdir()) == []
