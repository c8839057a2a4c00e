"""Script folders: modules in folders without `__init__.py`, imported as Python finds them when the
script's folder is on `sys.path` (`from loading.loader import build_loaders` beside `main.py`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from surfaces import DATA

from ddplint.config import Settings
from ddplint.engine.checker import Linter
from ddplint.engine.context_modules import load_neighbours, namespace_files
from ddplint.model.locations import Aliases, aliases, import_start
from ddplint.model.project import Project
from ddplint.run import prefilter, workers
from ddplint.run.outline import outline
from ddplint.run.runner import RunOptions, run
from ddplint.syntax.source import Source


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    shutil.copytree(DATA / "script_folders", tmp_path / "script_folders")
    return tmp_path / "script_folders"


def _findings(folder: Path, jobs: int) -> list[tuple[str, int, str]]:
    result = run([str(folder)], Settings(root=folder), RunOptions(jobs=jobs, context_budget=0))
    return [(str(Path(d.filename).relative_to(folder)), d.location.row, d.code) for d in result.diagnostics]


def test_a_loader_built_in_a_script_folder_is_checked_with_the_caller_that_seeds_it(folders: Path) -> None:
    # `segment/main.py` seeds per local rank, `segment/loading/loader.py` builds the sampler:
    # found only if the import is resolved. `classify/` has a module under the same import
    # name, seeded alike on every rank: resolving the import there would be a false alarm.
    assert _findings(folders, 1) == [("segment/loading/loader.py", 8, "DDP010")]


def test_worker_processes_report_the_same(folders: Path) -> None:
    full = RunOptions(jobs=1, context_budget=0)
    single = run([str(folders)], Settings(root=folders), full).diagnostics
    parallel = run([str(folders)], Settings(root=folders), RunOptions(jobs=2, context_budget=0)).diagnostics
    assert [(d.filename, d.location, d.code, d.message, d.fix) for d in parallel] == [
        (d.filename, d.location, d.code, d.message, d.fix) for d in single
    ]


def test_a_script_and_the_folders_it_imports_are_one_group(tmp_path: Path) -> None:
    (tmp_path / "app/tools").mkdir(parents=True)
    (tmp_path / "app/main.py").write_text("from tools.helpers import setup\n\nsetup()\n")
    (tmp_path / "app/tools/helpers.py").write_text("def setup():\n    pass\n")
    (tmp_path / "app/tools/unused.py").write_text("def other():\n    pass\n")
    (tmp_path / "bench.py").write_text("import os\n")
    files = sorted(tmp_path.rglob("*.py"))
    selection = prefilter.select(files, None, graph=True)
    groups = workers.groups_of(files, selection.modules, selection.graph.components())
    assert sorted(sorted(str(p.relative_to(tmp_path)) for p in group) for group in groups) == [
        ["app/main.py", "app/tools/helpers.py"],
        ["app/tools/unused.py"],
        ["bench.py"],
    ]


def test_one_file_checked_alone_reads_the_modules_it_imports_from_its_folder(folders: Path) -> None:
    linter = Linter(Settings(root=folders))
    main = linter.load(str(folders / "segment/main.py"))
    linter.project.add(main)
    load_neighbours(linter, [main])
    assert sorted(str(Path(name).relative_to(folders)) for name in linter.project.files) == [
        "segment/common/launch.py",
        "segment/loading/loader.py",
        "segment/loading/volumes.py",
        "segment/main.py",
    ]


def test_an_alias_is_read_from_the_nearest_folder_above_the_importer(tmp_path: Path) -> None:
    near, far = tmp_path / "proj/app/data/load.py", tmp_path / "proj/data/load.py"
    index = Aliases([(near, "load", "near"), (far, "load", "far")])
    assert next(aliases(far, "load")) == ("data.load", str(tmp_path / "proj"))
    assert index.resolve(tmp_path / "proj/app/train.py", "train", "data.load") == "near"
    assert index.resolve(tmp_path / "proj/app/tools/run.py", "run", "data.load") == "near"
    assert index.resolve(tmp_path / "proj/train.py", "train", "data.load") == "far"
    assert index.resolve(tmp_path / "proj/other/train.py", "train", "data.load") == "far"
    assert index.resolve(tmp_path / "elsewhere/train.py", "train", "data.load") is None
    assert index.resolve(tmp_path / "proj/app/train.py", "train", "load") is None  # its own name
    # A module of a package imports from the folder above its outermost package.
    assert import_start(tmp_path / "proj/app/pkg/sub/mod.py", "pkg.sub.mod") == str(tmp_path / "proj/app")
    assert import_start(tmp_path / "proj/app/pkg/__init__.py", "pkg") == str(tmp_path / "proj/app")


def test_folders_an_import_cannot_spell_end_the_aliases(tmp_path: Path) -> None:
    path = tmp_path / "image-segmentation/pytorch/data_loading/loader.py"
    assert list(aliases(path, "loader")) == [
        ("data_loading.loader", str(tmp_path / "image-segmentation/pytorch")),
        ("pytorch.data_loading.loader", str(tmp_path / "image-segmentation")),
    ]


def test_a_module_named_by_packages_is_found_before_an_alias(tmp_path: Path) -> None:
    def facts(path: Path, name: str, text: str):
        return Linter().facts_for(Source.from_bytes(str(path), text.encode()), name)

    package = facts(tmp_path / "data/load.py", "data.load", "def build():\n    return 1\n")
    folder = facts(tmp_path / "app/data/load.py", "load", "def build():\n    return 2\n")
    train = facts(tmp_path / "app/train.py", "train", "from data.load import build\n\nbuild()\n")
    project = Project([package, folder, train])
    assert project.module("data.load", train) is package
    assert project.module("load", train) is folder
    without = Project([folder, train])
    assert without.module("data.load", train) is folder
    assert without.module("data.load") is None  # no importer: names only
    assert without.resolve_call(train, train.module_scope.calls[0]) == (folder, folder.functions["build"])


def test_a_file_alone_finds_folders_of_scripts_above_it_within_the_project(tmp_path: Path) -> None:
    for name in ("torch/__init__.py", "torch/distributed/__init__.py", "torch/distributed/helpers.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "proj/tools").mkdir(parents=True)
    (tmp_path / "proj/tools/misc.py").write_text("")
    (tmp_path / "proj/app/sub").mkdir(parents=True)
    start = tmp_path / "proj/app/sub"
    misc = tmp_path / "proj/tools/misc.py"
    assert namespace_files(start, "tools.misc.clip") == [misc]
    assert namespace_files(start, "tools.misc.clip", top=tmp_path / "proj") == [misc]
    assert namespace_files(start, "tools.misc.clip", top=tmp_path / "proj/app") == []
    # A package above the project (a checkout of torch in the home folder) is passed by.
    assert namespace_files(start, "torch.distributed.helpers.run") == []
    assert namespace_files(start, "tools") == []


def test_the_definition_pass_follows_names_into_folders_of_scripts(tmp_path: Path) -> None:
    main = tmp_path / "segment/main.py"
    loader = tmp_path / "segment/loading/loader.py"
    elsewhere = tmp_path / "classify/loading/loader.py"
    main_text = "from loading.loader import build\n\ndef run():\n    return build()\n"
    outlines = {
        "main": outline(main_text, str(main), "main", False, bool),
        "loader": outline("def build():\n    return 1\n", str(loader), "loader", False, bool),
    }
    modules = {main: "main", loader: "loader", elsewhere: "loader"}
    graph = prefilter.DefinitionGraph(
        outlines, Aliases((path, name, name) for path, name in modules.items()), {"main": [main]}
    )
    assert graph.edges[("main", "run")] == {("loader", "build")}
    assert prefilter.DefinitionGraph(outlines).edges[("main", "run")] == set()


def test_a_module_of_a_folder_of_scripts_checked_alone_is_seen_from_the_script_above(folders: Path) -> None:
    # What pre-commit does after an edit of the loader alone: its finding needs `main.py`, which
    # imports it by path. `classify/main.py` imports a module of the same name, not this one.
    loader = folders / "segment/loading/loader.py"
    linter = Linter(Settings(root=folders))
    facts = linter.load(str(loader))
    linter.project.add(facts)
    load_neighbours(linter, [facts])
    assert sorted(str(Path(name).relative_to(folders)) for name in linter.project.files) == [
        "segment/common/launch.py",  # what main.py imports
        "segment/loading/loader.py",
        "segment/loading/volumes.py",
        "segment/main.py",
    ]
    result = run([str(loader)], Settings(root=folders), RunOptions(jobs=1))
    assert [(d.location.row, d.code) for d in result.diagnostics] == [(8, "DDP010")]
    # Above the project's root nothing is read: the script is not found, nor the finding.
    alone = run([str(loader)], Settings(root=folders / "segment/loading"), RunOptions(jobs=1))
    assert alone.diagnostics == []
