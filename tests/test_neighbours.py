"""Checking some files of a project: the modules they import are read for context, within a budget."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from surfaces import DATA

from ddplint.config import Settings
from ddplint.engine.checker import Linter
from ddplint.engine.context_modules import import_root, load_neighbours, module_files
from ddplint.run.runner import RunOptions, run


def copy_package(tmp_path: Path) -> Path:
    shutil.copytree(DATA / "package", tmp_path / "package")
    return tmp_path / "package"


def test_import_root_and_module_files(tmp_path: Path) -> None:
    root = copy_package(tmp_path)
    assert import_root(root / "pkg" / "train.py") == root
    assert list(module_files(root, "pkg.helpers.start_epoch")) == [
        root / "pkg/helpers.py",
        root / "pkg/__init__.py",
    ]
    assert list(module_files(root, "torch.utils.data.DataLoader")) == []
    # With what the file system said kept, a name sharing a prefix asks it nothing more.
    known: dict = {}
    assert list(module_files(root, "pkg.helpers.start_epoch", known)) == [
        root / "pkg/helpers.py",
        root / "pkg/__init__.py",
    ]
    (root / "pkg/helpers.py").rename(root / "pkg/moved.py")
    assert list(module_files(root, "pkg.helpers.other", known)) == [
        root / "pkg/helpers.py",
        root / "pkg/__init__.py",
    ]
    assert list(module_files(root, "pkg.helpers.other")) == [root / "pkg/__init__.py"]


def test_module_files_look_only_into_folders_that_exist(tmp_path: Path, monkeypatch) -> None:
    root = copy_package(tmp_path)
    (root / "torch.py").write_text("")  # a module named like a package the project lacks
    looked: list[str] = []
    for check in ("isfile", "isdir"):
        real = getattr(os.path, check)
        monkeypatch.setattr(
            os.path, check, lambda path, real=real: looked.append(os.path.basename(path)) or real(path)
        )
    assert list(module_files(root, "torch.nn.functional.relu")) == [root / "torch.py"]
    assert looked == ["torch", "torch.py"]  # no `torch/nn/...`: there is no `torch/` folder
    looked.clear()
    assert list(module_files(root, "pkg.helpers.start_epoch")) == [
        root / "pkg/helpers.py",
        root / "pkg/__init__.py",
    ]
    # `pkg/helpers` is a file: no `pkg/helpers/__init__.py`, no `pkg/helpers/start_epoch.py`.
    assert looked == ["pkg", "helpers", "helpers.py", "__init__.py", "pkg.py"]


def test_one_file_of_a_package_sees_its_helpers(tmp_path: Path) -> None:
    root = copy_package(tmp_path)
    target = str(root / "pkg" / "train.py")
    assert run([target], Settings(root=root)).diagnostics == []
    alone = run([target], Settings(root=root), RunOptions(context_budget=0)).diagnostics
    assert [(d.location.row, d.code) for d in alone] == [(7, "DDP002")]


def test_loading_stops_at_the_module_limit(tmp_path: Path) -> None:
    root = copy_package(tmp_path)
    linter = Linter()
    facts = linter.load(str(root / "pkg" / "train.py"))
    linter.project.add(facts)
    assert load_neighbours(linter, [facts], max_modules=1) == 1
    assert load_neighbours(Linter(), [facts]) == 2  # pkg/helpers.py and pkg/__init__.py


def test_a_changed_module_is_read_again(tmp_path: Path) -> None:
    root = copy_package(tmp_path)
    target = str(root / "pkg" / "train.py")
    assert run([target], Settings(root=root)).diagnostics == []
    (root / "pkg" / "helpers.py").write_text("def start_epoch(sampler, epoch):\n    pass\n", encoding="utf-8")
    assert [d.code for d in run([target], Settings(root=root)).diagnostics] == ["DDP002"]


def test_the_package_modules_that_import_a_file_are_read_too_and_no_others(tmp_path: Path) -> None:
    # proj/data.py builds the loader; proj/train.py, which imports it, iterates it.
    shutil.copytree(DATA / "returned", tmp_path / "returned")
    # Unrelated modules stay out, even when they mention the module's name.
    (tmp_path / "returned" / "proj" / "unrelated.py").write_text("data = 1\n", encoding="utf-8")
    linter = Linter()
    facts = linter.load(str(tmp_path / "returned" / "proj" / "data.py"))
    linter.project.add(facts)
    assert load_neighbours(linter, [facts]) == 2
    assert sorted(linter.project.modules) == ["proj", "proj.data", "proj.train"]


def test_loose_scripts_bring_only_what_they_import(tmp_path: Path) -> None:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "train.py").write_text("import a\n", encoding="utf-8")
    linter = Linter()
    facts = linter.load(str(tmp_path / "train.py"))
    assert load_neighbours(linter, [facts]) == 1
    assert sorted(linter.project.modules) == ["a"]
