"""Every fixture: exactly the marked findings, and its `.fixed.py` snapshot after --fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fixture_harness import (
    FIXTURES,
    actual_findings,
    case_files,
    concise_output,
    expected_findings,
    fix_copy,
    fixture_cases,
    snapshot_path,
)

CASES = fixture_cases()


def _id(case: Path) -> str:
    return case.relative_to(FIXTURES).as_posix()


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_findings_match_markers(case: Path) -> None:
    assert actual_findings(case) == expected_findings(case)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_concise_output_matches_snapshot(case: Path) -> None:
    """Messages and columns, pinned per case; a case with no finding has no snapshot.
    `DDPLINT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_fixtures.py` writes them anew."""
    output = concise_output(case)
    snapshot = snapshot_path(case)
    if os.environ.get("DDPLINT_UPDATE_SNAPSHOTS") == "1":
        if output:
            snapshot.parent.mkdir(exist_ok=True)
            snapshot.write_text(output, encoding="utf-8")
        else:
            snapshot.unlink(missing_ok=True)
    if not output:
        assert not snapshot.exists(), f"{snapshot.name} pins findings the case no longer has"
    else:
        assert snapshot.exists(), f"no snapshot {snapshot.name}: run with DDPLINT_UPDATE_SNAPSHOTS=1"
        assert output == snapshot.read_text(encoding="utf-8")


def test_every_snapshot_belongs_to_a_case() -> None:
    pinned = {snapshot_path(case) for case in CASES}
    assert sorted(p for p in FIXTURES.glob("*/_snapshots/*.txt") if p not in pinned) == []


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_fix_matches_snapshot(case: Path, tmp_path: Path) -> None:
    fixed = fix_copy(case, tmp_path)
    for original in case_files(case):
        relative = original.relative_to(case) if case.is_dir() else Path(original.name)
        result = (fixed / relative if case.is_dir() else fixed).read_text(encoding="utf-8")
        snapshot = original.with_name(original.stem + ".fixed.py")
        if snapshot.exists():
            assert result == snapshot.read_text(encoding="utf-8")
        else:
            assert result == original.read_text(encoding="utf-8"), (
                f"--fix changed {relative} but there is no snapshot {snapshot.name}"
            )


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_fix_is_idempotent(case: Path, tmp_path: Path) -> None:
    first = fix_copy(case, tmp_path / "one")
    before = {p: p.read_text(encoding="utf-8") for p in case_files(first)}
    second = fix_copy(first, tmp_path / "two")
    after = {p: p.read_text(encoding="utf-8") for p in case_files(second)}
    assert list(before.values()) == list(after.values())


def test_every_rule_has_bad_and_clean_fixtures() -> None:
    from ddplint.rules import ALL_RULES

    for rule in ALL_RULES:
        cases = [c for c in CASES if c.parent.name == rule.code]
        bad = [c for c in cases if any(code == rule.code for _, _, code in expected_findings(c))]
        clean = [c for c in cases if not expected_findings(c)]
        assert len(bad) >= 8, f"{rule.code}: {len(bad)} bad fixtures"
        assert len(clean) >= 8, f"{rule.code}: {len(clean)} clean fixtures"
