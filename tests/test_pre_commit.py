"""The pre-commit hook, installed and run by the real pre-commit from a snapshot of this repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from surfaces import REPO, TWO

pytestmark = pytest.mark.slow

GIT_ENV = {
    "GIT_AUTHOR_NAME": "ddplint tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "ddplint tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple[Path, str]:
    """This repository as it is now (uncommitted work included), committed in a fresh git repo."""
    snapshot = tmp_path_factory.mktemp("hook-repo")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / name)
    git(snapshot, "init", "-q")
    git(snapshot, "add", "-A")
    git(snapshot, "commit", "-q", "-m", "snapshot")
    return snapshot, git(snapshot, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with a bad script, the same script in an excluded folder, and a clean one."""
    bad = TWO.read_text(encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.ddplint]\nextend-exclude = ["vendored/"]\n')
    (tmp_path / "vendored").mkdir()
    (tmp_path / "train.py").write_text(bad, encoding="utf-8")
    (tmp_path / "vendored" / "train.py").write_text(bad, encoding="utf-8")
    (tmp_path / "clean.py").write_text("print('hello')\n", encoding="utf-8")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    return tmp_path


def pre_commit(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_try_repo_reports_findings_and_honours_excludes(hook_repo, pre_commit_home, project: Path) -> None:
    repo, rev = hook_repo
    result = pre_commit(
        project, pre_commit_home, "try-repo", str(repo), "ddplint", "--ref", rev, "--all-files"
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "train.py:7:43: DDP001" in output
    assert "train.py:6:15: DDP002" in output
    # The excluded copy is passed to the hook by name, and --force-exclude skips it.
    assert "vendored" not in output


def test_fixing_through_args(hook_repo, pre_commit_home, project: Path) -> None:
    repo, rev = hook_repo
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: ddplint\n        args: [--fix]\n",
        encoding="utf-8",
    )
    git(project, "add", "-A")
    first = pre_commit(project, pre_commit_home, "run", "--all-files")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    fixed = (project / "train.py").read_text(encoding="utf-8")
    assert "shuffle=True, sampler=sampler" not in fixed
    assert "        sampler.set_epoch(epoch)\n" in fixed
    assert (project / "vendored" / "train.py").read_text(encoding="utf-8") == TWO.read_text(encoding="utf-8")
    git(project, "add", "-A")
    second = pre_commit(project, pre_commit_home, "run", "--all-files")
    assert second.returncode == 0, second.stdout + second.stderr
