"""The README's snippets for each surface are real: they parse, name real things, and run."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from surfaces import EXAMPLE, EXAMPLE_FINDINGS, REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_setup_commands_stay_at_the_top() -> None:
    assert blocks("bash")[:2] == [
        "pip install -e . && ddplint check examples/\n",
        "pip install -e '.[test]' torch==2.13.0 && python -m pytest\n",
    ]


def test_pre_commit_snippet_names_the_hook() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    [hook] = hooks
    assert hook["entry"] == "ddplint check --force-exclude"
    assert (hook["language"], hook["require_serial"]) == ("python", True)
    assert hook["types_or"] == ["python", "jupyter"]
    configs = [yaml.safe_load(b) for b in blocks("yaml") if "repos:" in b]
    assert [c["repos"][0]["hooks"][0]["id"] for c in configs] == [hook["id"]]


def test_actions_snippets_use_real_options() -> None:
    steps = [yaml.safe_load(b) for b in blocks("yaml") if "repos:" not in b and "script:" not in b]
    commands = [s["run"] for b in steps for s in (b if isinstance(b, list) else b["steps"]) if "run" in s]
    assert "ddplint check --output-format github ." in commands
    assert "ddplint check --exit-zero --output-format sarif . > ddplint.sarif" in commands


def test_gitlab_job_uploads_the_report_it_writes(tmp_path: Path) -> None:
    [config] = [yaml.safe_load(b) for b in blocks("yaml") if "script:" in b]
    [job] = config.values()
    report = job["artifacts"]["reports"]["codequality"]
    command = job["script"][-1]
    assert command == f"ddplint check --exit-zero --output-format gitlab . > {report}"
    # The command itself, run on the example, writes a report GitLab can read.
    shutil.copy(EXAMPLE, tmp_path / "train.py")
    args = command.split(" > ")[0].split()[1:]
    done = subprocess.run([sys.executable, "-m", "ddplint", *args], cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    issues = json.loads(done.stdout)
    found = [(i["location"]["lines"]["begin"], i["check_name"], i["location"]["path"]) for i in issues]
    assert found == [(row, code, "train.py") for row, _, code in EXAMPLE_FINDINGS]


def test_vs_code_settings_are_json() -> None:
    [settings] = [json.loads(b) for b in blocks("json")]
    assert settings["flake8.args"] == ["--extend-select=DDP"]


def test_python_api_snippet_runs(tmp_path: Path) -> None:
    [snippet] = [b for b in blocks("python") if "import ddplint" in b]
    shutil.copy(EXAMPLE, tmp_path / "train.py")
    (tmp_path / "src").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "src" / "train.py")
    done = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("DDP002 38 15 error ")
    assert "  fix: Remove `shuffle=True` (safe)" in done.stdout
