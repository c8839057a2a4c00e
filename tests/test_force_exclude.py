"""`--force-exclude`: configured excludes apply to paths given by name (as pre-commit passes them)."""

from __future__ import annotations

from pathlib import Path

from surfaces import EXAMPLE, positions, run


def make_project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.ddplint]\nextend-exclude = ["vendored/", "gen_*.py"]\n')
    (root / "vendored" / "deep").mkdir(parents=True)
    for name in ("train.py", "gen_model.py", "vendored/deep/train.py"):
        (root / name).write_bytes(EXAMPLE.read_bytes())
    return root


def checked_files(result) -> set[str]:
    return {p[0] for p in positions(result.stdout.decode())}


def test_explicit_paths_are_kept_without_force_exclude(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p")
    result = run(
        ["check", "--output-format", "concise", "train.py", "gen_model.py", "vendored/deep/train.py"],
        cwd=root,
    )
    assert checked_files(result) == {"train.py", "gen_model.py", "vendored/deep/train.py"}


def test_force_exclude_drops_excluded_explicit_paths(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p")
    args = ["check", "--force-exclude", "--output-format", "concise"]
    result = run([*args, "train.py", "gen_model.py", "vendored/deep/train.py"], cwd=root)
    assert checked_files(result) == {"train.py"}
    absolute = run([*args, str(root / "train.py"), str(root / "vendored/deep/train.py")], cwd=root)
    assert checked_files(absolute) == {str(root / "train.py")}
    inside = run([*args, "deep/train.py"], cwd=root / "vendored")
    assert (inside.returncode, checked_files(inside)) == (0, set())


def test_folders_above_the_project_do_not_exclude_it(tmp_path: Path) -> None:
    # `build` is a default exclude; a checkout living under a folder of that name is still checked.
    root = make_project(tmp_path / "build" / "project")
    result = run(["check", "--force-exclude", "--output-format", "concise", str(root / "train.py")], cwd=root)
    assert checked_files(result) == {str(root / "train.py")}


NAMED_FILES_RUN = """
import sys
from ddplint.integrations.cli import main

try:
    main(["check", "--exit-zero", "--no-cache", "--output-format", "concise", sys.argv[1]])
except SystemExit:
    pass
print(*(name in sys.modules for name in ("pathspec", "multiprocessing")))
"""


def _imported_by_a_run(tmp_path: Path, target: str) -> tuple[str, list[str]]:
    """What `ddplint check TARGET` printed in a project of one file, and whether it imported
    the pattern library and multiprocessing."""
    import subprocess
    import sys

    root = tmp_path / "p"
    root.mkdir(exist_ok=True)
    (root / "train.py").write_bytes(EXAMPLE.read_bytes())
    command = [sys.executable, "-c", NAMED_FILES_RUN, target]
    out = subprocess.run(command, cwd=root, capture_output=True, text=True, check=True).stdout
    return out, out.splitlines()[-1].split()


def test_files_named_without_force_exclude_match_no_pattern(tmp_path: Path) -> None:
    # Importing the pattern matcher took a tenth of a second: pre-commit and editors name files.
    named, imported = _imported_by_a_run(tmp_path, "train.py")
    assert "DDP" in named and imported[0] == "False"
    assert _imported_by_a_run(tmp_path, ".")[1][0] == "True"  # a folder walked: excludes apply


def test_a_run_without_workers_imports_no_multiprocessing(tmp_path: Path) -> None:
    # A tenth of ddplint's own imports; a run on one file starts no worker.
    assert _imported_by_a_run(tmp_path, "train.py")[1][1] == "False"
