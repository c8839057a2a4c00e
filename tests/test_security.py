"""ddplint reads code as text: it never imports or runs it, config is data, and a walk stays
inside the folders it was given."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from robust_support import GOOD, ddplint, good_finding

import ddplint as package

PAYLOAD = """\
import pathlib
pathlib.Path({marker!r}).write_text("ran")
"""


def _plant(folder: Path, marker: Path) -> None:
    """Every way a Python tool might end up running a project's code."""
    payload = PAYLOAD.format(marker=str(marker))
    (folder / "pkg").mkdir()
    for name in ("pkg/__init__.py", "pkg/__main__.py", "setup.py", "conftest.py", "sitecustomize.py"):
        (folder / name).write_text(payload)
    (folder / "pkg" / "train.py").write_text(payload + "from . import helpers\nimport pkg.helpers\n" + GOOD)
    (folder / "pkg" / "helpers.py").write_text(payload)
    (folder / "pyproject.toml").write_text("[tool.ddplint]\n")


@pytest.mark.parametrize("extra", [[], ["--fix", "--unsafe-fixes"], ["--diff"]])
def test_analysed_code_is_never_run(tmp_path: Path, extra: list[str]) -> None:
    marker = tmp_path / "marker"
    project = tmp_path / "project"
    project.mkdir()
    _plant(project, marker)
    done = subprocess.run(
        [sys.executable, "-m", "ddplint", "check", "--output-format", "concise", *extra, "."],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    assert not marker.exists(), "ddplint ran code it was analysing"


def test_ddplint_does_not_import_torch_or_the_analysed_modules(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _plant(project, tmp_path / "marker")
    script = (
        "import sys\n"
        "from ddplint.run.runner import run\n"
        "from ddplint.config import Settings\n"
        "run(['.'], Settings())\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'pkg', 'helpers', 'setup'))\n"
        "print(bad)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=project, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert not (tmp_path / "marker").exists()


def test_config_values_are_data(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    code = f"__import__('pathlib').Path({str(marker)!r}).write_text('ran')"
    (tmp_path / "pyproject.toml").write_text(
        "[tool.ddplint]\n"
        f'collectives = ["{code}"]\n'
        f'rank-predicates = ["{code}"]\n'
        f'exclude = ["{code}"]\n'
        f'per-file-ignores = {{ "x.py" = ["DDP001"] }}\n'
    )
    (tmp_path / "good.py").write_text(GOOD)
    outcome = ddplint(tmp_path, ".")
    assert outcome.exit_code == 1
    assert outcome.lines[0].startswith(good_finding())
    assert not marker.exists()
    (tmp_path / "pyproject.toml").write_text(f'[tool.ddplint]\nselect = ["{code}"]\n')
    outcome = ddplint(tmp_path, ".")
    assert outcome.exit_code == 2
    assert "invalid value" in outcome.stderr
    assert not marker.exists()


def test_ddplint_source_has_no_dynamic_code_execution() -> None:
    """No eval/exec/compile-to-run, no dynamic import anywhere in the package."""
    builtins = {"eval", "exec", "__import__"}  # called by bare name
    functions = {"import_module", "run_path", "run_module", "exec_module"}  # importlib, runpy
    found = []
    for path in Path(package.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if (isinstance(func, ast.Name) and name in builtins) or name in functions:
                    found.append(f"{path.name}:{node.lineno}: {name}")
                if isinstance(func, ast.Name) and name == "compile":  # the builtin, not re.compile
                    # Only the AST-only depth check may call compile: flag 0x400 (PyCF_ONLY_AST).
                    flags = node.args[3] if len(node.args) > 3 else None
                    if not (isinstance(flags, ast.Constant) and flags.value == 0x400):
                        found.append(f"{path.name}:{node.lineno}: compile without PyCF_ONLY_AST")
    assert found == []


def test_walk_does_not_follow_symlinks_out_of_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(GOOD)
    root = tmp_path / "root"
    root.mkdir()
    (root / "good.py").write_text(GOOD)
    (root / "linked_dir").symlink_to(outside, target_is_directory=True)
    (root / "linked_file.py").symlink_to(outside / "secret.py")
    (root / "sub").mkdir()
    (root / "sub" / "inside_link.py").symlink_to(root / "good.py")  # same file, inside: once
    outcome = ddplint(tmp_path, "root")
    assert len(outcome.lines) == 1
    assert outcome.lines[0].startswith(good_finding("root/good.py"))
    # --fix must not write outside the root either.
    ddplint(tmp_path, "--fix", "root")
    assert (outside / "secret.py").read_text() == GOOD


def test_symlink_named_explicitly_is_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(GOOD)
    root = tmp_path / "root"
    root.mkdir()
    (root / "linked_file.py").symlink_to(outside / "secret.py")
    outcome = ddplint(root, "linked_file.py")
    assert len(outcome.lines) == 1 and outcome.lines[0].startswith(good_finding("linked_file.py"))
