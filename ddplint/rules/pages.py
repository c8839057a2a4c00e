"""Rule pages (`rules/DDPxxx.md`): shipped in the wheel, read from the source tree when editable."""

from __future__ import annotations

from pathlib import Path


def _folders() -> list[Path]:
    package = Path(__file__).resolve().parents[1]  # ddplint/, beside the source tree's rules/
    return [package / "_rule_pages", package.parent / "rules"]


def rule_page(code: str) -> str | None:
    for folder in _folders():
        path = folder / f"{code}.md"
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return None


def page_sections(code: str) -> dict[str, str]:
    """`## Heading` → body text, for SARIF help and rule listings."""
    text = rule_page(code) or ""
    sections: dict[str, str] = {}
    current = "title"
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("## "):
            sections[current] = "\n".join(lines).strip()
            current, lines = line[3:].strip(), []
        else:
            lines.append(line)
    sections[current] = "\n".join(lines).strip()
    return sections
