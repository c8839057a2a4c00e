"""ddplint's side of the proof: lint a copy of a script, fix it, and check what is left."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cases import Case
from click.testing import CliRunner
from harness import Outcome

from ddplint.integrations.cli import main as ddplint_main


def ddplint(*args: str) -> tuple[int, str]:
    """Run the `ddplint` command in this process (so a test can monkeypatch a rule's fix)."""
    result = CliRunner().invoke(ddplint_main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def findings(path: Path) -> list[dict]:
    """`ddplint check --output-format json PATH`, parsed."""
    code, out = ddplint("check", "--output-format", "json", str(path))
    assert code in (0, 1), f"ddplint failed on {path.name} (exit {code}): {out}"
    return json.loads(out)


def codes(path: Path) -> list[str]:
    return [f["code"] for f in findings(path)]


def applicable(finding: dict) -> bool:
    """`--fix --unsafe-fixes` applies this finding's fix (a display-only fix is advice, not an edit)."""
    fix = finding.get("fix")
    return bool(fix) and fix.get("applicability") in ("safe", "unsafe")


def copy_script(source: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    shutil.copyfile(source, target)
    return target


def autofix(case: Case, folder: Path) -> Path:
    """Copy the bad script, check the rule finds it, fix it with --unsafe-fixes, check it is gone."""
    copy = copy_script(case.path, folder)
    for helper in case.helpers:
        copy_script(case.path.with_name(helper), folder)
    before = copy.read_text(encoding="utf-8")
    found = [f for f in findings(copy) if f["code"] == case.code]
    assert found, f"{case.code} does not report {case.script}"
    if case.autofix:
        assert all(applicable(f) for f in found), f"{case.code} offers no fix for {case.script}: {found}"
    exit_code, out = ddplint("check", "--fix", "--unsafe-fixes", str(copy))
    assert exit_code in (0, 1), out
    left = [f for f in findings(copy) if f["code"] == case.code]
    assert not left, f"{case.code} still reports the fixed {case.script}: {[f['message'] for f in left]}"
    assert copy.read_text(encoding="utf-8") != before, f"--fix left {case.script} unchanged"
    return copy


def prove_autofix(case: Case, folder: Path) -> Outcome:
    """The whole proof for an automatic fix: the fixed copy completes with every rank agreeing."""
    fixed = autofix(case, folder)
    outcome = case.run(fixed)
    case.check_fixed(outcome)
    return outcome
