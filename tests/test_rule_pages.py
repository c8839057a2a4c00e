"""Every rule has a page with ruff's sections, and the page's examples do what they say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import ddplint
from ddplint.rules import ALL_RULES
from ddplint.rules.pages import page_sections, rule_page

SECTIONS = ["What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References"]
CODES = [rule.code for rule in ALL_RULES]
DDPLINT = str(Path(sys.executable).with_name("ddplint"))


def sections_of(code: str) -> dict[str, str]:
    assert rule_page(code) is not None, f"rules/{code}.md is missing"
    return page_sections(code)


def python_blocks(body: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", body, flags=re.DOTALL)


@pytest.mark.parametrize("code", CODES)
def test_page_has_title_and_sections_in_order(code: str) -> None:
    rule = next(r for r in ALL_RULES if r.code == code)
    page = rule_page(code)
    assert page is not None, f"rules/{code}.md is missing"
    assert page.splitlines()[0] == f"# {code} {rule.name}"
    headings = [line[3:].strip() for line in page.splitlines() if line.startswith("## ")]
    assert headings == SECTIONS
    sections = sections_of(code)
    for name in SECTIONS:
        assert sections[name], f"{code}: section `{name}` is empty"


@pytest.mark.parametrize("code", CODES)
def test_references_link_to_pytorch_docs(code: str) -> None:
    links = re.findall(r"\((https://[^)]+)\)", sections_of(code)["References"])
    assert any(link.startswith("https://pytorch.org/") for link in links)


@pytest.mark.parametrize("code", CODES)
def test_example_is_reported(code: str) -> None:
    blocks = python_blocks(sections_of(code)["Example"])
    assert blocks, f"{code}: the Example section has no python block"
    for block in blocks:
        codes = [d.code for d in ddplint.lint_source(block, filename="example.py")]
        assert code in codes


@pytest.mark.parametrize("code", CODES)
def test_use_instead_is_clean(code: str) -> None:
    blocks = python_blocks(sections_of(code)["Use instead"])
    assert blocks, f"{code}: the Use instead section has no python block"
    for block in blocks:
        assert ddplint.lint_source(block, filename="use_instead.py") == []


@pytest.mark.parametrize("code", CODES)
def test_rule_command_prints_the_page(code: str) -> None:
    assert rule_page(code) is not None, f"rules/{code}.md is missing"
    done = subprocess.run([DDPLINT, "rule", code.lower()], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == rule_page(code)


def test_rule_all_lists_every_rule() -> None:
    done = subprocess.run([DDPLINT, "rule", "--all"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [[r.code, r.name] for r in ALL_RULES]


def test_unknown_rule_exits_2() -> None:
    done = subprocess.run([DDPLINT, "rule", "DDP999"], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "DDP999" in done.stderr


def test_wheel_ships_the_rule_pages(tmp_path: Path) -> None:
    """Installed from a wheel (no source tree beside it), `ddplint rule` still finds each page."""
    import zipfile

    from hatchling.builders.wheel import WheelBuilder

    root = Path(__file__).resolve().parents[1]
    wheel = next(iter(WheelBuilder(str(root)).build(directory=str(tmp_path / "dist"), versions=["standard"])))
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    launcher = (
        "import sys; sys.path.insert(0, sys.argv.pop(1)); import ddplint, ddplint.integrations.cli; "
        "assert ddplint.__file__.startswith(sys.path[0]), ddplint.__file__; "
        "sys.argv[0] = 'ddplint'; ddplint.integrations.cli.main()"
    )
    pages = sorted((root / "rules").glob("DDP*.md"))
    assert pages
    for page in pages:
        done = subprocess.run(
            [sys.executable, "-c", launcher, str(site), "rule", page.stem],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == page.read_text(encoding="utf-8")
