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
from ddplint.model.skeleton import LazyModuleFacts
from ddplint.run.cache import trees
from ddplint.run.cache.trees import TreeCache
from ddplint.syntax.reading import LoadError

FIXTURES = Path(__file__).parent / "fixtures"
TRAIN = FIXTURES / "DDP005" / "bad_barrier_on_rank_zero.py"
# What a kept file holds after its head when it keeps no skeleton (see test_skeleton.py).
NO_SKELETON = (0).to_bytes(trees._SKELETON_SIZE, "big")


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
    """Read back whole, and as a skeleton read whole by the check (see test_skeleton.py)."""
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
        skeleton = _linter(tmp_path).load(str(path), context=True)
        assert type(skeleton) is LazyModuleFacts, path
        read_back += 1
        expected = _findings(Linter(Settings(root=FIXTURES)), fresh)
        assert _findings(Linter(Settings(root=FIXTURES)), kept) == expected, path
        assert _findings(Linter(Settings(root=FIXTURES)), skeleton) == expected, path
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
        "not a pickle": data[:head] + NO_SKELETON + zlib.compress(b"not a pickle"),
    }[damage]
    kept.write_bytes(damaged)
    facts = _linter(tmp_path).load(str(TRAIN))
    assert parsed == [str(TRAIN), str(TRAIN)]
    assert facts.tree.deep_equals(first.tree)


class HostilePayload:
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
    kept.write_bytes(head + NO_SKELETON + zlib.compress(pickle.dumps(HostilePayload(str(target)))))
    facts = _linter(tmp_path).load(str(TRAIN))
    assert not target.exists()
    assert parsed == [str(TRAIN), str(TRAIN)]
    assert facts.tree.deep_equals(first.tree)


def _plant(tmp_path: Path, hostile: object) -> None:
    """A kept file for TRAIN, with the right key, holding `hostile` pickled."""
    kept = TreeCache(tmp_path).file_for(str(TRAIN))
    head = kept.read_bytes()[: len(trees._MAGIC) + trees._KEY_BYTES]
    kept.write_bytes(head + NO_SKELETON + zlib.compress(pickle.dumps(hostile)))


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
    start = len(data) - len(trees._whole_part(data))  # after the head and the skeleton
    # A whole tree, then padding (unpickling would stop before it): too large to be inflated.
    padding = b"\0" * (64 * len(TRAIN.read_text()) + (2 << 20))
    kept.write_bytes(data[:start] + zlib.compress(zlib.decompress(data[start:]) + padding))
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


# A module large enough to be parsed in pieces: a finding, then many small functions, one of
# them longer than a piece (cut between the statements of its body).
_FILLER = "".join(f"\n\ndef helper_{i}(x):\n    y = x + {i}\n    return y * 2\n" for i in range(300))
_LONG = "\n\ndef long_one(x):\n" + "".join(f"    x = x + {i}\n" for i in range(400)) + "    return x\n"
EDITED = TRAIN.read_text(encoding="utf-8") + _LONG + _FILLER


@pytest.fixture
def libcst_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts handed to libcst's parser by a parse in pieces."""
    from ddplint.syntax import pieces

    seen: list[str] = []
    real = pieces.cst.parse_module

    def recording(text: str):
        seen.append(text)
        return real(text)

    monkeypatch.setattr(pieces.cst, "parse_module", recording)
    return seen


def _edit(path: Path, text: str, tmp_path: Path):
    """`path` given `text`, then loaded as a run with the cache of `tmp_path / "trees"` loads it;
    with the findings and the facts of a run without the cache."""
    path.write_text(text, encoding="utf-8")
    linter = _linter(tmp_path / "trees")
    facts = linter.load(str(path))
    fresh = Linter(Settings(root=FIXTURES)).load(str(path))
    assert facts.tree.deep_equals(fresh.tree) and facts.tree.code == text
    assert sorted(facts.functions) == sorted(fresh.functions)
    assert _findings(linter, facts) == _findings(Linter(Settings(root=FIXTURES)), fresh)
    return facts


def test_an_edited_module_is_parsed_from_its_kept_pieces(tmp_path: Path, libcst_parses: list[str]) -> None:
    path = tmp_path / "train.py"
    _edit(path, EDITED, tmp_path)  # a first run: kept whole
    _edit(path, EDITED + "# saved\n", tmp_path)  # the first edit: parsed in pieces, kept so
    libcst_parses.clear()
    edited = EDITED.replace("return y * 2", "return y * 3", 1) + "# saved\n"
    facts = _edit(path, edited, tmp_path)
    # The one function that changed, besides the whole parse of the run without the cache.
    assert libcst_parses[:-1] == [
        "class _:\n    pass\n\n\ndef helper_0(x):\n    y = x + 0\n    return y * 3\n"
    ]
    assert [code for code, *_ in _findings(Linter(Settings(root=FIXTURES)), facts)] == ["DDP005"]
    libcst_parses.clear()
    # Inside the function longer than a piece: one statement of its body.
    _edit(path, edited.replace("    x = x + 7\n", "    x = x - 7\n"), tmp_path)
    assert libcst_parses[:-1] == ["class _:\n    pass\nclass _:\n    x = x - 7\n"]


def test_only_the_first_few_modules_kept_whole_start_pieces(tmp_path: Path) -> None:
    # A run after switching branches meets many changed modules: most are parsed whole.
    from ddplint.syntax.source import Source

    cache = TreeCache(tmp_path)
    given = []
    for number in range(trees.FRESH_PARSERS + 3):
        name = str(tmp_path / f"m{number}.py")
        facts = Linter(Settings(root=tmp_path)).facts_for(Source(name, EDITED))
        cache.store(facts)
        given.append(cache.parser_for_edit(Source(name, EDITED + "# edited\n")))
    assert [parser is not None for parser in given] == [True] * trees.FRESH_PARSERS + [False] * 3
    assert cache.parser_for_edit(Source(str(tmp_path / "new.py"), EDITED)) is None  # nothing kept
    # A run that keeps nothing (flake8's) reuses pieces kept, and starts none.
    reader = TreeCache(tmp_path, keep=False)
    assert reader.parser_for_edit(Source(str(tmp_path / "m0.py"), EDITED + "#\n")) is None


def test_a_run_that_keeps_nothing_reuses_the_pieces_kept(tmp_path: Path, libcst_parses: list[str]) -> None:
    # flake8's run reads the trees `ddplint check` keeps: an edit since is parsed in pieces.
    path = tmp_path / "train.py"
    _edit(path, EDITED, tmp_path)
    _edit(path, EDITED + "# saved\n", tmp_path)
    path.write_text(EDITED + "# saved twice\n", encoding="utf-8")
    libcst_parses.clear()
    linter = Linter(Settings(root=FIXTURES))
    linter.trees = TreeCache(tmp_path / "trees", keep=False)
    facts = linter.load(str(path))
    assert facts.tree.code == EDITED + "# saved twice\n"
    assert len(libcst_parses) == 1 and libcst_parses[0].endswith("# saved twice\n")


def test_pieces_kept_by_another_libcst_are_not_reused(
    tmp_path: Path, libcst_parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "train.py"
    _edit(path, EDITED, tmp_path)
    _edit(path, EDITED + "# saved\n", tmp_path)
    monkeypatch.setattr(trees, "_parser_key", lambda: "another libcst")
    libcst_parses.clear()
    _edit(path, EDITED + "# saved twice\n", tmp_path)
    assert len(libcst_parses) > 300  # every piece parsed again


def test_the_libcst_version_kept_trees_are_keyed_by_is_the_installed_one() -> None:
    from importlib.metadata import version

    trees._libcst_version.cache_clear()
    assert trees._libcst_version() == version("libcst")


@pytest.mark.parametrize("state", [None, (), ("a", "b", "c", "d"), ({1: 2}, [], [], None)])
def test_a_parser_state_of_another_shape_is_ignored(state) -> None:
    from ddplint.syntax.reparse import DocumentParser

    parser = DocumentParser()
    parser.resume(state)
    tree = parser.parse(EDITED)
    assert tree is not None and tree.code == EDITED and parser.reused == 0


def test_a_buffer_is_parsed_from_the_pieces_ddplint_check_kept(
    tmp_path: Path, libcst_parses: list[str]
) -> None:
    # An editor's buffer (`--stdin-filename`, the language server on opening a file).
    from ddplint.run.buffer import check_buffer
    from ddplint.run.runner import RunOptions, run
    from ddplint.syntax.reparse import DocumentParser

    path = tmp_path / "train.py"
    # The first run keeps no tree; after an edit one keeps it whole; after another, in pieces.
    for text in (EDITED, EDITED + "# edited\n", EDITED + "# saved\n"):
        path.write_text(text, encoding="utf-8")
        run([str(path)], Settings(root=tmp_path), RunOptions(cache=True, context_budget=0))
    buffer = EDITED + "# typed\n"
    expected = [
        (d.code, d.location) for d in check_buffer(str(path), buffer, Settings(root=tmp_path)).diagnostics
    ]
    assert [code for code, _ in expected] == ["DDP005"]
    for parser in (None, DocumentParser()):
        libcst_parses.clear()
        result = check_buffer(str(path), buffer, Settings(root=tmp_path), parser=parser)
        assert [(d.code, d.location) for d in result.diagnostics] == expected
        assert len(libcst_parses) == 1 and libcst_parses[0].endswith("# typed\n")
