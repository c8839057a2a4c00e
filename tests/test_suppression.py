"""Suppression: noqa on a line or a statement's first line, file-level noqa, per-file-ignores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from surfaces import DATA, REPO, TWO, run

from ddplint import lint_source
from ddplint.config import Settings

SHUFFLED = "from torch.utils.data import DataLoader\n\nDataLoader(d, shuffle=True, sampler=s)\n"


def found(diagnostics) -> list[tuple[int, str]]:
    return [(d.location.row, d.code) for d in diagnostics]


def test_line_and_statement_noqa() -> None:
    text = (DATA / "suppressed.py").read_text(encoding="utf-8")
    diagnostics = lint_source(text, filename="suppressed.py")
    assert [(d.location.row, d.noqa_row, d.code) for d in diagnostics] == [
        (8, 8, "DDP001"),  # its noqa comment names DDP002 only
        (18, 16, "DDP001"),  # the multi-line statement has no noqa on its first line
    ]


def test_noqa_row_in_json_names_the_statement_first_line() -> None:
    result = run(["check", "--output-format", "json", "tests/data/suppressed.py"], cwd=REPO)
    assert [(f["location"]["row"], f["noqa_row"]) for f in json.loads(result.stdout)] == [(8, 8), (18, 16)]


@pytest.mark.parametrize(
    ("comment", "expected"),
    [
        ("# ddplint: noqa", []),
        ("# ddplint: noqa: DDP001", [(8, "DDP002")]),
        ("# ddplint: noqa: DDP001,DDP005", [(8, "DDP002")]),
        ("#ddplint:noqa:DDP002", [(9, "DDP001")]),
        ("# ddplint: noqa: DDP00", []),
        ("# ddplint: noqa: DDP005", [(8, "DDP002"), (9, "DDP001")]),
    ],
)
def test_file_level_noqa_on_its_own_line(comment: str, expected: list) -> None:
    text = f"{comment}\n\n" + TWO.read_text(encoding="utf-8")
    assert found(lint_source(text, filename="train.py")) == expected


def test_file_level_noqa_after_code_is_not_file_level() -> None:
    text = "x = 1  # ddplint: noqa\n" + SHUFFLED
    assert found(lint_source(text, filename="a.py")) == [(4, "DDP001")]


def test_noqa_words_after_the_codes_are_an_explanation() -> None:
    text = SHUFFLED.replace("sampler=s)", "sampler=s)  # noqa: DDP002 Dan said so")
    assert found(lint_source(text, filename="a.py")) == [(3, "DDP001")]


@pytest.mark.parametrize(
    ("pattern", "path", "ignored"),
    [
        ("tests/*", "tests/unit/test_a.py", True),
        ("**/test_*.py", "test_a.py", True),
        ("**/test_*.py", "src/deep/test_a.py", True),
        ("scripts/", "scripts/train.py", True),
        ("__init__.py", "pkg/__init__.py", True),
        ("*.py", "any/where.py", True),
        ("tests/*", "src/tests_helper.py", False),
        ("scripts/", "src/train.py", False),
    ],
)
def test_per_file_ignores_globs(tmp_path: Path, pattern: str, path: str, ignored: bool) -> None:
    settings = Settings(root=tmp_path, per_file_ignores={pattern: ["DDP001"]})
    target = tmp_path / path
    diagnostics = lint_source(SHUFFLED, filename=str(target), config=settings)
    assert found(diagnostics) == ([] if ignored else [(3, "DDP001")])


def test_per_file_ignores_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ddplint]\nper-file-ignores = { "legacy/**" = ["DDP001"] }\n', encoding="utf-8"
    )
    for folder in ("legacy/old", "new"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "a.py").write_text(SHUFFLED, encoding="utf-8")
    result = run(["check", "--output-format", "concise", "."], cwd=tmp_path)
    assert result.stdout.decode().splitlines()[0].startswith("new/a.py:3:15: DDP001")
    assert "legacy" not in result.stdout.decode()
