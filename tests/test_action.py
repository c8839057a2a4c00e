"""The GitHub Action (`action.yml`): its inputs, and that its steps install and run ddplint as meant."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from surfaces import EXAMPLE, EXAMPLE_FINDINGS, REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
_INPUT = re.compile(r"\$\{\{\s*inputs\.(\w+)\s*\}\}")
_ACTION_PATH = re.compile(r"\$\{\{\s*github\.action_path\s*\}\}")


def step(name: str) -> dict:
    [found] = [s for s in ACTION["runs"]["steps"] if s["name"] == name]
    return found


def run_step(name: str, inputs: dict[str, str], cwd: Path, path: str) -> subprocess.CompletedProcess[str]:
    """Run a step's script with bash as the runner would: its `env` with the inputs filled in."""
    spec = step(name)
    assert spec["shell"] == "bash"
    values = {key: value["default"] for key, value in ACTION["inputs"].items()} | inputs
    env = dict(os.environ, PATH=path)
    for key, value in spec.get("env", {}).items():
        value = _ACTION_PATH.sub("/actions/ddplint", value)
        env[key] = _INPUT.sub(lambda m: values[m.group(1)], value)
    return subprocess.run(["bash", "-c", spec["run"]], cwd=cwd, env=env, capture_output=True, text=True)


def test_inputs_and_their_defaults() -> None:
    assert ACTION["runs"]["using"] == "composite"
    defaults = {key: value["default"] for key, value in ACTION["inputs"].items()}
    assert defaults == {"version": "", "args": "check", "src": "."}
    assert not any(value["required"] for value in ACTION["inputs"].values())


def test_the_run_step_annotates_the_pull_request(tmp_path: Path) -> None:
    assert "--output-format github" in step("Run ddplint")["run"]
    shutil.copy(EXAMPLE, tmp_path / "train.py")
    (tmp_path / "clean.py").write_text("x = 1\n", encoding="utf-8")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    done = run_step("Run ddplint", {"src": "train.py clean.py", "args": "check --no-cache"}, tmp_path, path)
    assert done.returncode == 1, done.stderr
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    expected = [f"::error file=train.py,line={row},col={col}," for row, col, _ in EXAMPLE_FINDINGS]
    assert [line[: len(e)] for line, e in zip(annotations, expected)] == expected
    assert len(annotations) == len(EXAMPLE_FINDINGS)


def test_the_inputs_are_words_never_shell_code(tmp_path: Path) -> None:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    done = run_step("Run ddplint", {"src": "$(touch pwned)", "args": "check --no-cache"}, tmp_path, path)
    assert not (tmp_path / "pwned").exists()
    assert done.returncode == 2
    assert done.stderr == "ddplint: error: no such file or directory: $(touch, pwned)\n"


def _fake_python(tmp_path: Path) -> str:
    """A `python` that prints its arguments: what the install step would run."""
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "python"
    fake.write_text('#!/bin/sh\necho "$@"\n', encoding="utf-8")
    fake.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def test_install_takes_the_action_checkout_unless_a_version_is_given(tmp_path: Path) -> None:
    path = _fake_python(tmp_path)
    done = run_step("Install ddplint", {}, tmp_path, path)
    assert done.stdout == "-m pip install /actions/ddplint\n"
    done = run_step("Install ddplint", {"version": "0.1.0"}, tmp_path, path)
    assert done.stdout == "-m pip install ddplint==0.1.0\n"


def test_readme_snippet_names_real_inputs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    steps = [s for b in re.findall(r"```yaml\n(.*?)```", readme, flags=re.DOTALL) for s in yaml.safe_load(b)]
    uses = [s for s in steps if isinstance(s, dict) and s.get("uses", "").startswith("ddplint/ddplint@")]
    assert len(uses) == 1
    assert set(uses[0]["with"]) <= set(ACTION["inputs"])
