"""Proof by execution: each bad script really fails on 2 gloo ranks the way its rule says, and
its fixed version (by `ddplint check --fix --unsafe-fixes`, or by hand where the rule has no
automatic fix) really completes with every rank agreeing.

Where the automatic fix is run, the hand-fixed variant makes the same repair (the two differ in
docstrings, names and how a flag tensor is built) and is not run again, unless the case says it
repairs the script otherwise; the rule must stay silent on every hand-fixed variant.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from cases import CASES, SCRIPTS, Case
from harness import run_ranks
from proof import applicable, autofix, codes, findings, prove_autofix

from ddplint.rules import RULES_BY_CODE

pytestmark = [
    pytest.mark.e2e,
    # One run at a time: two runs side by side would share the cores between four ranks.
    pytest.mark.xdist_group("e2e"),
    pytest.mark.skipif(
        importlib.util.find_spec("torch") is None,
        reason="torch is not installed: the 2-rank runs need it (pip install torch==2.13.0)",
    ),
]


def needs_rule(code: str):
    return pytest.mark.skipif(code not in RULES_BY_CODE, reason=f"rule {code} not implemented yet")


def by_id(case: Case) -> str:
    return case.id


def with_rule(cases: list[Case], *, misses_fail: bool = False) -> list:
    params = []
    for case in cases:
        marks = [needs_rule(case.code)]
        if misses_fail and case.known_miss:
            marks.append(pytest.mark.xfail(strict=True, raises=AssertionError, reason=case.known_miss))
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


@pytest.mark.parametrize("case", CASES, ids=by_id)
def test_bad_script_fails_as_the_rule_says(case: Case) -> None:
    outcome = case.run(case.path)
    case.check_bad(outcome)


def hand_fix_is_run(case: Case) -> bool:
    return case.own_hand_fix or not (case.autofix_is_run and case.code in RULES_BY_CODE)


@pytest.mark.parametrize("case", [c for c in CASES if hand_fix_is_run(c)], ids=by_id)
def test_hand_fixed_script_completes(case: Case) -> None:
    outcome = case.run(case.handfixed)
    case.check_fixed(outcome)


@pytest.mark.parametrize("case", with_rule(CASES))
def test_rule_is_silent_on_the_hand_fixed_script(case: Case) -> None:
    assert case.code not in codes(case.handfixed)


@pytest.mark.parametrize("case", with_rule(CASES, misses_fail=True))
def test_autofixed_script_completes(case: Case, tmp_path: Path) -> None:
    found = [f for f in findings(case.path) if f["code"] == case.code]
    assert found, f"{case.code} does not report {case.script}"
    if not case.autofix and not all(applicable(f) for f in found):
        pytest.skip(f"{case.code} offers no automatic fix here; the hand-fixed variant is the proof")
    prove_autofix(case, tmp_path)


@pytest.mark.parametrize("case", [c for c in CASES if c.hash_seeds], ids=by_id)
def test_one_hash_seed_for_every_rank_keeps_the_ranks_in_step(case: Case) -> None:
    """The control for the scripts whose ranks hash strings differently: with one PYTHONHASHSEED
    on every rank, the unchanged script completes with the ranks agreeing, so the seeds, not
    anything else in the script, are what breaks it."""
    same = (case.hash_seeds[0],) * len(case.hash_seeds)
    outcome = run_ranks(case.path, hash_seeds=same)
    outcome.assert_completed_agreeing()


def test_silently_wrong_all_reduce_is_caught_as_disagreement() -> None:
    """Two all-reduces of one-element tensors in swapped order: no error, no hang, wrong values."""
    outcome = run_ranks(SCRIPTS / "swapped_all_reduces.py")
    assert outcome.status == "disagreed", outcome.summary
    assert all(r.ended_cleanly for r in outcome.ranks), outcome.summary
    with pytest.raises(AssertionError):
        outcome.assert_completed_agreeing()


# The proof must be able to fail: a fix that is only half applied, or not applied at all, runs
# into the same assertion the suite makes about every fixed script.

SKIP_BAD_BATCH = next(c for c in CASES if c.script == "ddp004_skip_bad_batch.py")


def test_half_applied_agree_first_fix_is_caught(tmp_path: Path) -> None:
    """The agree-first rewrite without its `all_reduce`: each rank branches on its own flag.

    The whole rewrite completes: it is what `--fix --unsafe-fixes` makes of the script, run by
    `test_autofixed_script_completes[ddp004_skip_bad_batch]`."""
    text = SKIP_BAD_BATCH.handfixed.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    kept = [line for line in lines if "dist.all_reduce(flag" not in line]
    assert len(kept) == len(lines) - 1
    half = tmp_path / SKIP_BAD_BATCH.script
    half.write_text("".join(kept), encoding="utf-8")
    outcome = run_ranks(half)
    assert outcome.diverged, outcome.summary
    with pytest.raises(AssertionError):
        SKIP_BAD_BATCH.check_fixed(outcome)


@needs_rule("DDP004")
def test_disabled_fix_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With DDP004's fix switched off, the autofix proof fails, and so does the unchanged run."""
    from ddplint.rules.base import Context

    report = Context.report

    def report_without_ddp004_fix(self, node, message, **kwargs):
        if self.rule is not None and self.rule.code == "DDP004":
            kwargs["fix"] = None
        return report(self, node, message, **kwargs)

    monkeypatch.setattr(Context, "report", report_without_ddp004_fix)
    with pytest.raises(AssertionError):
        autofix(SKIP_BAD_BATCH, tmp_path / "lint")
    unchanged = tmp_path / "lint" / SKIP_BAD_BATCH.script
    assert unchanged.read_text(encoding="utf-8") == SKIP_BAD_BATCH.path.read_text(encoding="utf-8")
    outcome = run_ranks(unchanged)
    with pytest.raises(AssertionError):
        SKIP_BAD_BATCH.check_fixed(outcome)
