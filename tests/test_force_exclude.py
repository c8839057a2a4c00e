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
    main(["check", "--exit-zero", "--no-cache", "--output-format", "concise", "train.py"])
except SystemExit:
    pass
print("pathspec" in sys.modules)
"""


def test_files_named_without_force_exclude_match_no_pattern(tmp_path: Path) -> None:
    # Importing the pattern matcher took a tenth of a second: pre-commit and editors name files.
    import subprocess
    import sys

    root = tmp_path / "p"
    root.mkdir()
    (root / "train.py").write_bytes(EXAMPLE.read_bytes())
    command = [sys.executable, "-c", NAMED_FILES_RUN]
    named = subprocess.run(command, cwd=root, capture_output=True, text=True, check=True).stdout
    assert "DDP" in named and named.splitlines()[-1] == "False"
    walked = subprocess.run(
        [*command[:2], NAMED_FILES_RUN.replace('"train.py"', '"."')],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert walked.splitlines()[-1] == "True"
