"""The flake8 plugin does nothing for a file flake8 reports none of ddplint's codes for: flake8's
own options decide (`select`, `ignore`, their `extend-` forms, `per-file-ignores`, the plugins'
default selection), read from its command line, its configuration and its Python API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from surfaces import FLAKE8_THEN_MODULES, PLUGIN_ONLY, TWO, TWO_FINDINGS, positions


def flake8_in_child(tmp_path: Path, *args: str) -> tuple[list, list[str]]:
    argv = [sys.executable, "-c", FLAKE8_THEN_MODULES, "--isolated", *args]
    result = subprocess.run(argv, cwd=tmp_path, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    return positions(result.stdout.decode()), json.loads(result.stderr.decode().splitlines()[-1])


def test_the_rule_codes_are_the_registry_s() -> None:
    from ddplint._meta import RULE_CODES
    from ddplint.rules import ALL_RULES

    assert tuple(rule.code for rule in ALL_RULES) == RULE_CODES


def test_flake8_without_ddplint_codes_loads_no_analysis(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_bytes(TWO.read_bytes())
    found, loaded = flake8_in_child(tmp_path, "--select", "E", "train.py")
    assert [code for *_, code in found] == ["E501"]
    assert loaded == PLUGIN_ONLY
    # The same run with ddplint's codes on: the analysis is loaded, and reports.
    found, loaded = flake8_in_child(tmp_path, "--select", "DDP", "train.py")
    assert [(row, col, code) for _, row, col, code in found] == TWO_FINDINGS
    assert {"ddplint.integrations.flake8_findings", "ddplint.run.buffer", "libcst"} <= set(loaded)


@pytest.fixture
def decide(monkeypatch, tmp_path: Path):
    """flake8's options parsed as its command line does (in `tmp_path`, no paths given: no run
    ahead); then, for a file name, whether the plugin looks for ddplint's findings there."""
    from flake8.options.parse_args import parse_args

    from ddplint.integrations import flake8_plugin

    for name in ("options", "selection", "context_budget", "honour_noqa"):
        monkeypatch.setattr(flake8_plugin.Plugin, name, getattr(flake8_plugin.Plugin, name))
    monkeypatch.chdir(tmp_path)

    def decided(args: list[str], filename: str) -> bool:
        parse_args(args)
        return flake8_plugin.Plugin.selection.for_file(filename)

    return decided


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], True),  # flake8 selects every plugin's codes by default
        (["--select", "E,F,W"], False),
        (["--select", "E", "--extend-select", "DDP002"], True),
        (["--extend-select", "DDP"], True),
        (["--ignore", "E501"], True),  # replaces flake8's default ignore list only
        (["--ignore", "DDP"], False),
        (["--ignore", "DDP001"], True),
        (["--extend-ignore", "DDP"], False),
        (["--extend-ignore", "DDP00,DDP01"], False),  # every code, by two prefixes
        (["--extend-ignore", "DDP00"], True),  # DDP010 is still reported
        (["--select", "DDP", "--ignore", "DDP0"], False),  # the longer prefix wins
        (["--select", "DDP0", "--ignore", "DDP"], True),
        (["--select", "E", "--extend-select", "DDP", "--extend-ignore", "DDP"], False),
    ],
)
def test_select_and_ignore_decide(decide, args: list[str], expected: bool) -> None:
    assert decide(["--isolated", *args], "train.py") is expected


def test_per_file_ignores_decide_per_file(decide) -> None:
    args = ["--isolated", "--per-file-ignores", "tests/*:DDP vendor/theirs.py:DDP001"]
    assert decide(args, "./tests/test_train.py") is False
    assert decide(args, "./vendor/theirs.py") is True  # the other codes still
    assert decide(args, "./train.py") is True
    assert decide([*args, "--extend-ignore", "DDP00,DDP01"], "./train.py") is False


def test_flake8_configuration_decides(decide, tmp_path: Path) -> None:
    (tmp_path / ".flake8").write_text("[flake8]\nselect = E,W\n", encoding="utf-8")
    assert decide([], "train.py") is False
    (tmp_path / ".flake8").write_text("[flake8]\nselect = E,W\nextend-select = DDP\n", encoding="utf-8")
    assert decide([], "train.py") is True
    (tmp_path / ".flake8").write_text("[flake8]\nper-file-ignores = train.py:DDP\n", encoding="utf-8")
    assert decide([], "train.py") is False
    assert decide([], "eval.py") is True


def test_another_flake8_is_asked_nothing_and_checked_in_full(decide, monkeypatch) -> None:
    # A flake8 without the style guides asked here: ddplint looks, flake8 drops what it ignores.
    import flake8.style_guide

    monkeypatch.delattr(flake8.style_guide, "StyleGuideManager")
    assert decide(["--isolated", "--select", "E"], "train.py") is True


@pytest.fixture
def looked_at(monkeypatch) -> list[str]:
    """The files the plugin looked for findings in."""
    from ddplint.integrations import flake8_findings

    asked: list[str] = []
    real = flake8_findings.findings
    monkeypatch.setattr(
        flake8_findings,
        "findings",
        lambda filename, *rest, **named: asked.append(filename) or real(filename, *rest, **named),
    )
    return asked


def test_flake8_python_api_options_decide(tmp_path: Path, monkeypatch, looked_at) -> None:
    # flake8's Python API sets its options after the plugins have read them.
    from flake8.api import legacy

    from ddplint.integrations import flake8_findings, flake8_plugin

    for name in ("options", "selection", "context_budget", "honour_noqa"):
        monkeypatch.setattr(flake8_plugin.Plugin, name, getattr(flake8_plugin.Plugin, name))
    flake8_findings._whole_run.cache_clear()
    (tmp_path / "train.py").write_bytes(TWO.read_bytes())
    monkeypatch.chdir(tmp_path)
    report = legacy.get_style_guide(select=["E"]).check_files(["train.py"])
    assert report.get_statistics("DDP") == []
    assert looked_at == []
    report = legacy.get_style_guide(select=["DDP"]).check_files(["train.py"])
    reported = sorted(line.split()[1] for line in report.get_statistics("DDP"))
    assert reported == sorted(code for _, _, code in TWO_FINDINGS)
    assert looked_at == ["train.py"]
    flake8_findings._whole_run.cache_clear()


def test_per_file_ignores_keep_a_file_out_of_the_run(tmp_path: Path, monkeypatch) -> None:
    from flake8.options.parse_args import parse_args

    from ddplint.integrations import flake8_findings, flake8_plugin
    from ddplint.run import runner

    for name in ("options", "selection", "context_budget", "honour_noqa"):
        monkeypatch.setattr(flake8_plugin.Plugin, name, getattr(flake8_plugin.Plugin, name))
    for cache in (flake8_findings._whole_run, flake8_findings._expanded, flake8_findings._reporting):
        cache.cache_clear()
    runs: list = []
    real = runner.run
    monkeypatch.setattr(runner, "run", lambda paths, *rest: runs.append(paths) or real(paths, *rest))
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "theirs.py").write_bytes(TWO.read_bytes())
    (tmp_path / "two.py").write_bytes(TWO.read_bytes())
    monkeypatch.chdir(tmp_path)
    parse_args(["--isolated", "--per-file-ignores", "vendor/*:DDP", "."])
    assert runs == [["./two.py"]]
    assert (
        list(flake8_plugin.Plugin(None, "./vendor/theirs.py", TWO.read_text().splitlines(True)).run()) == []
    )
    for cache in (flake8_findings._whole_run, flake8_findings._expanded, flake8_findings._reporting):
        cache.cache_clear()
