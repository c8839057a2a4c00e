"""A bug of ours is reported as an internal error for that file; the run goes on; exit 2."""

from __future__ import annotations

from pathlib import Path

from robust_support import GOOD, GOOD_FIXED, ddplint, good_finding

from ddplint.model import facts as facts_module
from ddplint.rules import RULES_BY_CODE


def _explode(self, ctx) -> None:
    if ctx.facts.filename.endswith("bad.py"):
        raise ValueError("boom in a rule")
    type(self).real_check(self, ctx)


def _break_rule(monkeypatch, code: str) -> None:
    rule = RULES_BY_CODE[code]
    monkeypatch.setattr(type(rule), "real_check", type(rule).check, raising=False)
    monkeypatch.setattr(type(rule), "check", _explode)


def test_rule_crash_is_reported_and_the_run_continues(tmp_path: Path, monkeypatch) -> None:
    _break_rule(monkeypatch, "DDP001")
    (tmp_path / "bad.py").write_text(GOOD)
    (tmp_path / "good.py").write_text(GOOD)
    outcome = ddplint(tmp_path, ".")
    assert outcome.lines[0] == (
        "bad.py:1:1: E900 internal error in ddplint while checking bad.py (rule DDP001) — please report"
    )
    assert outcome.lines[1].startswith(good_finding())
    assert len(outcome.lines) == 2
    assert outcome.exit_code == 2
    assert "Traceback" not in outcome.stderr


def test_verbose_shows_the_traceback(tmp_path: Path, monkeypatch) -> None:
    _break_rule(monkeypatch, "DDP001")
    (tmp_path / "bad.py").write_text(GOOD)
    outcome = ddplint(tmp_path, "--verbose", ".")
    assert outcome.exit_code == 2
    assert "Traceback (most recent call last):" in outcome.stderr
    assert "ValueError: boom in a rule" in outcome.stderr
    assert "_explode" in outcome.stderr


def test_internal_error_wins_over_exit_zero_and_json(tmp_path: Path, monkeypatch) -> None:
    _break_rule(monkeypatch, "DDP001")
    (tmp_path / "bad.py").write_text(GOOD)
    outcome = ddplint(tmp_path, "--exit-zero", ".")
    assert outcome.exit_code == 2
    outcome = ddplint(tmp_path, "--output-format", "json", ".")
    assert outcome.exit_code == 2
    assert '"code": "E900"' in outcome.stdout


def test_crash_while_reading_a_module(tmp_path: Path, monkeypatch) -> None:
    real_init = facts_module.ModuleFacts.__init__

    def init(self, source, *args, **kwargs):
        if source.filename.endswith("bad.py"):
            raise RuntimeError("boom in the facts")
        real_init(self, source, *args, **kwargs)

    monkeypatch.setattr(facts_module.ModuleFacts, "__init__", init)
    (tmp_path / "bad.py").write_text(GOOD)
    (tmp_path / "good.py").write_text(GOOD)
    outcome = ddplint(tmp_path, "--verbose", ".")
    assert outcome.lines[0] == (
        "bad.py:1:1: E900 internal error in ddplint while checking bad.py (reading the module) "
        "— please report"
    )
    assert outcome.lines[1].startswith(good_finding())
    assert outcome.exit_code == 2
    assert "RuntimeError: boom in the facts" in outcome.stderr


def test_crash_while_fixing_leaves_the_file_and_fixes_the_others(tmp_path: Path, monkeypatch) -> None:
    from ddplint.run import group

    real = group.fix_module

    def fix_module(linter, facts, **kwargs):
        if facts.filename.endswith("bad.py"):
            raise KeyError("boom in the fixer")
        return real(linter, facts, **kwargs)

    monkeypatch.setattr(group, "fix_module", fix_module)
    (tmp_path / "bad.py").write_text(GOOD)
    (tmp_path / "good.py").write_text(GOOD)
    outcome = ddplint(tmp_path, "--fix", ".")
    assert outcome.lines == [
        "bad.py:1:1: E900 internal error in ddplint while checking bad.py (fixing) — please report"
    ]
    assert outcome.exit_code == 2
    assert (tmp_path / "bad.py").read_text() == GOOD
    assert (tmp_path / "good.py").read_text() == GOOD_FIXED
