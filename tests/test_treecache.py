"""Parsed modules kept in the cache are read back instead of parsed, equal, and only when the
text is the same; a damaged or foreign file costs a parse and runs nothing."""

from __future__ import annotations

import os
import pickle
import zlib
from pathlib import Path

import pytest

from ddplint.config import Settings
from ddplint.engine.checker import Linter
from ddplint.run.cache import trees
from ddplint.run.cache.trees import TreeCache
from ddplint.syntax.reading import LoadError

FIXTURES = Path(__file__).parent / "fixtures"
TRAIN = FIXTURES / "DDP005" / "bad_barrier_on_rank_zero.py"


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files each test's linters parse (rather than read back)."""
    names: list[str] = []
    real = Linter.facts_for

    def counting(self, source, module_name=None, **options):
        names.append(source.filename)
        return real(self, source, module_name, **options)

    monkeypatch.setattr(Linter, "facts_for", counting)
    return names


def _linter(folder: Path) -> Linter:
    linter = Linter(Settings(root=FIXTURES))
    linter.trees = TreeCache(folder)
    return linter


def _findings(linter: Linter, facts) -> list[tuple]:
    linter.project.add(facts)
    return [(d.code, d.location, d.message, d.fix) for d in linter.check(facts)]


def test_a_kept_module_is_read_back_instead_of_parsed(tmp_path: Path, parsed: list[str]) -> None:
    first = _linter(tmp_path).load(str(TRAIN))
    assert parsed == [str(TRAIN)]
    assert [p.name for p in tmp_path.iterdir()] == [TreeCache(tmp_path).file_for(str(TRAIN)).name]

    again = _linter(tmp_path).load(str(TRAIN))
    assert parsed == [str(TRAIN)]  # not parsed again
    assert again.tree.deep_equals(first.tree)
    assert sorted(again.functions) == sorted(first.functions)
    found = _findings(_linter(tmp_path), again)
    assert [code for code, *_ in found] == ["DDP005"]
    assert found == _findings(Linter(Settings(root=FIXTURES)), first)


def test_every_fixture_gives_the_same_findings_read_back(tmp_path: Path) -> None:
    read_back = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        try:
            fresh = Linter(Settings(root=FIXTURES)).load(str(path))
        except LoadError:
            continue  # the fixtures of unparsable input
        _linter(tmp_path).load(str(path))
        kept = _linter(tmp_path).trees.load(fresh.source, fresh.module_name)
        assert kept is not None, path
        assert kept.module_name == fresh.module_name
        read_back += 1
        assert _findings(Linter(Settings(root=FIXTURES)), kept) == _findings(
            Linter(Settings(root=FIXTURES)), fresh
        ), path
    assert read_back > 150


def test_a_changed_module_is_parsed_again_and_replaces_its_tree(tmp_path: Path, parsed: list[str]) -> None:
    module = tmp_path / "src" / "helper.py"
    module.parent.mkdir()
    module.write_text("def f():\n    return 1\n")
    cache = tmp_path / "cache"
    _linter(cache).load(str(module))
    module.write_text("def f():\n    return 2\n\n\ndef g():\n    pass\n")
    facts = _linter(cache).load(str(module))
    assert parsed == [str(module), str(module)]
    assert sorted(facts.functions) == ["f", "g"]
    assert len(list(cache.iterdir())) == 1
    assert sorted(_linter(cache).load(str(module)).functions) == ["f", "g"]
    assert len(parsed) == 2


def test_a_module_read_back_is_named_as_this_run_names_it(
    tmp_path: Path, parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _linter(tmp_path).load(str(TRAIN))
    monkeypatch.chdir(TRAIN.parent)
    facts = _linter(tmp_path).load(TRAIN.name)
    assert parsed == [str(TRAIN)]
    assert facts.filename == TRAIN.name


@pytest.mark.parametrize("damage", ["truncated", "other format", "not a pickle"])
def test_a_damaged_tree_costs_a_parse(tmp_path: Path, parsed: list[str], damage: str) -> None:
    first = _linter(tmp_path).load(str(TRAIN))
    kept = TreeCache(tmp_path).file_for(str(TRAIN))
    data = kept.read_bytes()
    head = len(trees._MAGIC) + trees._KEY_BYTES
    damaged = {
        "truncated": data[: len(data) // 2],
        "other format": b"ddplint-tree-0\n" + data[len(trees._MAGIC) :],
        "not a pickle": data[:head] + zlib.compress(b"not a pickle"),
    }[damage]
    kept.write_bytes(damaged)
    facts = _linter(tmp_path).load(str(TRAIN))
    assert parsed == [str(TRAIN), str(TRAIN)]
    assert facts.tree.deep_equals(first.tree)


class _Payload:
    """Unpickled, this would make a folder: what a hostile cache file could try."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __reduce__(self):
        return (os.mkdir, (self.target,))


def test_a_foreign_tree_runs_no_code(tmp_path: Path, parsed: list[str]) -> None:
    first = _linter(tmp_path).load(str(TRAIN))
    kept = TreeCache(tmp_path).file_for(str(TRAIN))
    head = kept.read_bytes()[: len(trees._MAGIC) + trees._KEY_BYTES]
    target = tmp_path / "made"
    kept.write_bytes(head + zlib.compress(pickle.dumps(_Payload(str(target)))))
    facts = _linter(tmp_path).load(str(TRAIN))
    assert not target.exists()
    assert parsed == [str(TRAIN), str(TRAIN)]
    assert facts.tree.deep_equals(first.tree)


def _plant(tmp_path: Path, hostile: object) -> None:
    """A kept file for TRAIN, with the right key, holding `hostile` pickled."""
    kept = TreeCache(tmp_path).file_for(str(TRAIN))
    head = kept.read_bytes()[: len(trees._MAGIC) + trees._KEY_BYTES]
    kept.write_bytes(head + zlib.compress(pickle.dumps(hostile)))


class _Rewritten:
    """A shared object, rewritten by BUILD once unpickled."""

    def __init__(self, build, args, state) -> None:
        self.reduced = (build, args, state)

    def __reduce__(self):
        return self.reduced


def test_a_foreign_tree_changes_no_other_tree(tmp_path: Path, parsed: list[str]) -> None:
    from libcst import MaybeSentinel

    from ddplint.syntax import sharing

    _linter(tmp_path).load(str(TRAIN))
    other = FIXTURES / "DDP001" / "batch_sampler_with_shuffle.py"
    hostile = [
        _Rewritten(sharing.simple_whitespace, (" ",), {"value": "    # hostile\n\n"}),
        _Rewritten(MaybeSentinel, (MaybeSentinel.DEFAULT.value,), {"_name_": "HOSTILE"}),
    ]
    for rewritten in hostile:
        parsed.clear()
        _plant(tmp_path, rewritten)
        assert _linter(tmp_path).load(str(TRAIN)).tree.code == TRAIN.read_text()
        assert parsed == [str(TRAIN)]
        # The space every tree shares, and libcst's sentinel, are as they were.
        fresh = Linter(Settings(root=FIXTURES)).load(str(other))
        assert fresh.tree.code == other.read_text()
        assert MaybeSentinel.DEFAULT.name == "DEFAULT"


def test_a_tree_too_large_for_its_text_is_not_inflated(tmp_path: Path, parsed: list[str]) -> None:
    _linter(tmp_path).load(str(TRAIN))
    kept = TreeCache(tmp_path).file_for(str(TRAIN))
    data = kept.read_bytes()
    head = len(trees._MAGIC) + trees._KEY_BYTES
    # A whole tree, then padding (unpickling would stop before it): too large to be inflated.
    padding = b"\0" * (64 * len(TRAIN.read_text()) + (2 << 20))
    kept.write_bytes(data[:head] + zlib.compress(zlib.decompress(data[head:]) + padding))
    assert _linter(tmp_path).load(str(TRAIN)).functions
    assert parsed == [str(TRAIN), str(TRAIN)]


def test_facts_without_a_source_cost_a_parse(tmp_path: Path, parsed: list[str]) -> None:
    facts = _linter(tmp_path).load(str(TRAIN))
    facts.source = None
    _plant(tmp_path, facts)
    assert _linter(tmp_path).load(str(TRAIN)).filename == str(TRAIN)
    assert parsed == [str(TRAIN), str(TRAIN)]


def test_only_a_tree_kept_since_the_file_last_changed_counts_as_kept(tmp_path: Path) -> None:
    module = tmp_path / "helper.py"
    module.write_text("def f():\n    return 1\n")
    cache = TreeCache(tmp_path / "cache")
    assert not cache.has(str(module))
    _linter(tmp_path / "cache").load(str(module))
    assert cache.has(str(module))
    later = cache.file_for(str(module)).stat().st_mtime_ns + 10**9
    os.utime(module, ns=(later, later))  # edited since, or checked out from another branch
    assert not cache.has(str(module))


def test_a_cache_folder_that_cannot_be_read_costs_a_parse(
    tmp_path: Path, parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "trees"
    _linter(folder).load(str(TRAIN))
    real_stat = Path.stat

    def refused(self, *args, **kwargs):
        if "trees" in self.parts:
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", refused)
    assert not TreeCache(folder).has(str(TRAIN))
    assert _linter(folder).load(str(TRAIN)).functions
    assert len(parsed) == 1  # the file itself could still be opened


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("builtins", "getattr"),  # how a pickle reaches further than the names it may use
        ("builtins", "eval"),
        ("posix", "system"),
        ("libcst._parser.entrypoints", "parse_module"),  # a function of libcst, not a node
        ("ddplint.model.facts", "Path"),  # a class our module imports, not one of our facts
    ],
)
def test_a_kept_tree_may_name_only_nodes_and_facts(module: str, name: str) -> None:
    import io

    unpickler = trees._Restricted(io.BytesIO(b""))
    with pytest.raises(pickle.UnpicklingError):
        unpickler.find_class(module, name)
    assert unpickler.find_class("libcst._nodes.expression", "Name").__name__ == "Name"
    assert unpickler.find_class("ddplint.model.facts", "Scope").__name__ == "Scope"


def test_a_cache_that_cannot_be_written_costs_nothing_but_the_parse(
    tmp_path: Path, parsed: list[str]
) -> None:
    (tmp_path / "trees").write_text("a file where the folder would be")
    facts = _linter(tmp_path / "trees").load(str(TRAIN))
    assert facts.functions
    assert _linter(tmp_path / "trees").load(str(TRAIN)).functions.keys() == facts.functions.keys()
    assert len(parsed) == 2
