"""The Python API: `ddplint.lint_source` and `ddplint.lint_paths`."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from surfaces import EXAMPLE, EXAMPLE_FINDINGS, TWO

import ddplint
from ddplint.config import ConfigError, Settings
from ddplint.diagnostics import Applicability, Location, Range


def test_lint_source_returns_diagnostics_with_code_range_severity_and_fix() -> None:
    diagnostics = ddplint.lint_source(EXAMPLE.read_text(encoding="utf-8"), filename="train.py")
    assert [(d.code, d.range.start.row, d.range.start.column) for d in diagnostics] == [
        (code, row, col) for row, col, code in EXAMPLE_FINDINGS
    ]
    ddp001 = diagnostics[1]
    assert ddp001.range == Range(Location(39, 48), Location(39, 60))
    assert ddp001.severity == "error"
    assert ddp001.filename == "train.py"
    assert ddp001.message.startswith("`DataLoader` is given `shuffle=True`")
    assert ddp001.fix is not None
    assert ddp001.fix.applicability is Applicability.SAFE
    assert ddp001.fix.message == "Remove `shuffle=True`"


def test_lint_source_never_reads_the_file(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("x = 1\n", encoding="utf-8")
    diagnostics = ddplint.lint_source(
        EXAMPLE.read_text(encoding="utf-8"), filename=str(tmp_path / "train.py")
    )
    assert [(d.location.row, d.code) for d in diagnostics] == [
        (row, code) for row, _, code in EXAMPLE_FINDINGS
    ]


def test_lint_source_keeps_text_with_a_coding_cookie() -> None:
    # The text is already decoded: the cookie must not decode it a second time.
    text = "# -*- coding: latin-1 -*-\nfrom torch.utils.data import DataLoader\n"
    text += "DataLoader(d, shuffle=True, sampler=s)  # é\n"
    [d] = ddplint.lint_source(text, filename="a.py")
    assert (d.code, d.location.row) == ("DDP001", 3)
    assert d.source.line_text(3).endswith("# é")


def test_lint_source_reports_syntax_errors() -> None:
    [d] = ddplint.lint_source("def f(:\n", filename="bad.py")
    assert (d.code, d.location.row) == ("E999", 1)


def test_config_as_settings_or_file(tmp_path: Path) -> None:
    text = TWO.read_text(encoding="utf-8")
    assert [d.code for d in ddplint.lint_source(text, "t.py", Settings(ignore=["DDP001"]))] == ["DDP002"]
    toml = tmp_path / "pyproject.toml"
    toml.write_text('[tool.ddplint]\nselect = ["DDP001"]\n', encoding="utf-8")
    assert [d.code for d in ddplint.lint_source(text, "t.py", config=toml)] == ["DDP001"]
    toml.write_text('[tool.ddplint]\nunknown = ["x"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown"):
        ddplint.lint_source(text, "t.py", config=str(toml))


def test_lint_paths_finds_the_nearest_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ddplint]\nignore = ["DDP002"]\n', encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_bytes(TWO.read_bytes())
    found = ddplint.lint_paths([tmp_path / "src"])
    assert [(Path(d.filename).name, d.location.row, d.code) for d in found] == [("train.py", 7, "DDP001")]
    everything = ddplint.lint_paths([tmp_path / "src"], config=Settings())
    assert [d.code for d in everything] == ["DDP002", "DDP001"]
    # Nothing was written.
    assert (tmp_path / "src" / "train.py").read_bytes() == TWO.read_bytes()


def test_a_linted_source_leaves_no_project_alive() -> None:
    """Editors and flake8 lint file after file in one process: nothing may outlive a check."""
    from ddplint.model.project import Project

    def alive() -> int:
        gc.collect()
        # By exact type: `isinstance` reads `__class__`, which some objects of a process that
        # imported torch answer with a deprecation warning.
        return sum(type(o) is Project for o in gc.get_objects())

    before = alive()
    source = (Path(__file__).parent / "fixtures" / "DDP006" / "set_device_get_rank.py").read_text(
        encoding="utf-8"
    )
    for _ in range(3):
        assert [d.code for d in ddplint.lint_source(source, filename="train.py")] == ["DDP006"]
    assert alive() == before
