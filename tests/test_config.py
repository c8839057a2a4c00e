"""`[tool.ddplint]` in the nearest pyproject.toml, read by the console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DDPLINT = str(Path(sys.executable).with_name("ddplint"))

# DDP002 on line 5, DDP001 on line 6.
BAD = """\
from torch.utils.data import DataLoader, DistributedSampler


def main(ds):
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size=2, shuffle=True, sampler=sampler)
    for epoch in range(3):
        for batch in loader:
            batch.sum().backward()
"""


def findings(root: Path, *args: str, cwd: Path | None = None) -> tuple[int, list[tuple[str, int, str]]]:
    done = subprocess.run(
        [DDPLINT, "check", "-q", "--output-format", "concise", *args],
        cwd=cwd or root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in done.stderr
    out = []
    for line in done.stdout.splitlines():
        filename, row, _column, rest = line.split(":", 3)
        out.append((Path(filename).as_posix(), int(row), rest.split()[0]))
    return done.returncode, out


def layout(root: Path, config: str) -> Path:
    (root / "pyproject.toml").write_text(f'[project]\nname = "demo"\n\n[tool.ddplint]\n{config}', "utf-8")
    for name in ("train.py", "scripts/launch.py", "generated/loader.py"):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(BAD, encoding="utf-8")
    return root


def test_no_config_checks_everything(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(BAD, encoding="utf-8")
    assert findings(tmp_path, ".") == (1, [("train.py", 5, "DDP002"), ("train.py", 6, "DDP001")])


def test_select(tmp_path: Path) -> None:
    layout(tmp_path, 'select = ["DDP001"]\n')
    code, found = findings(tmp_path, "train.py")
    assert (code, found) == (1, [("train.py", 6, "DDP001")])


def test_ignore_by_prefix(tmp_path: Path) -> None:
    layout(tmp_path, 'ignore = ["DDP00"]\n')
    assert findings(tmp_path, ".") == (0, [])


def test_command_line_overrides_select(tmp_path: Path) -> None:
    layout(tmp_path, 'select = ["DDP001"]\n')
    assert findings(tmp_path, "--select", "DDP002", "train.py") == (1, [("train.py", 5, "DDP002")])


def test_exclude_and_per_file_ignores(tmp_path: Path) -> None:
    layout(tmp_path, 'exclude = ["generated"]\n\n[tool.ddplint.per-file-ignores]\n"scripts/*" = ["DDP002"]\n')
    code, found = findings(tmp_path, ".")
    assert code == 1
    assert found == [
        ("scripts/launch.py", 6, "DDP001"),
        ("train.py", 5, "DDP002"),
        ("train.py", 6, "DDP001"),
    ]


def test_excluded_file_named_explicitly(tmp_path: Path) -> None:
    layout(tmp_path, 'exclude = ["generated"]\n')
    # Named on the command line it is checked, as ruff does, unless --force-exclude.
    assert findings(tmp_path, "generated/loader.py")[1] == [
        ("generated/loader.py", 5, "DDP002"),
        ("generated/loader.py", 6, "DDP001"),
    ]
    assert findings(tmp_path, "--force-exclude", "generated/loader.py") == (0, [])


def test_nearest_pyproject_wins(tmp_path: Path) -> None:
    layout(tmp_path, 'ignore = ["DDP001"]\n')
    inner = tmp_path / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[tool.ddplint]\nignore = ["DDP002"]\n', "utf-8")
    (inner / "model.py").write_text(BAD, encoding="utf-8")
    assert findings(tmp_path, "pkg") == (1, [("pkg/model.py", 6, "DDP001")])
    assert findings(tmp_path, "train.py") == (1, [("train.py", 5, "DDP002")])


def test_pyproject_without_table_is_skipped(tmp_path: Path) -> None:
    layout(tmp_path, 'ignore = ["DDP001"]\n')
    inner = tmp_path / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "inner"\n', "utf-8")
    (inner / "model.py").write_text(BAD, encoding="utf-8")
    assert findings(tmp_path, "pkg/model.py") == (1, [("pkg/model.py", 5, "DDP002")])


def test_found_from_a_subfolder(tmp_path: Path) -> None:
    layout(tmp_path, 'select = ["DDP002"]\n')
    assert findings(tmp_path, "launch.py", cwd=tmp_path / "scripts") == (1, [("launch.py", 5, "DDP002")])


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ('selekt = ["DDP001"]\n', "selekt"),
        ('select = "DDP001"\n', "select"),
        ("ignore = [1]\n", "ignore"),
        ('exclude = "build"\n', "exclude"),
        ('per-file-ignores = ["tests/*"]\n', "per-file-ignores"),
        ('[tool.ddplint.per-file-ignores]\n"tests/*" = "DDP001"\n', "per-file-ignores"),
        ('select = ["DDP9"]\n', "select"),
    ],
)
def test_bad_config_exits_2_naming_the_key(tmp_path: Path, config: str, named: str) -> None:
    layout(tmp_path, config)
    done = subprocess.run([DDPLINT, "check", "."], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert f"`{named}`" in done.stderr
    assert "pyproject.toml" in done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr


def test_invalid_toml_exits_2(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ddplint\nselect = [", "utf-8")
    (tmp_path / "train.py").write_text(BAD, encoding="utf-8")
    done = subprocess.run([DDPLINT, "check", "."], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "pyproject.toml" in done.stderr
    assert "not valid TOML" in done.stderr
