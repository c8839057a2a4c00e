"""Reading fixtures: `# error: CODE` markers give the exact findings expected on that line."""

from __future__ import annotations

import re
from pathlib import Path

from ddplint.config import Settings
from ddplint.run.runner import RunOptions, run

FIXTURES = Path(__file__).parent / "fixtures"
MARKER = re.compile(r"#\s*error:\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)")


def fixture_cases() -> list[Path]:
    """Every fixture: a single `.py` file, or a folder that forms one multi-module project."""
    cases: list[Path] = []
    for rule_dir in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        for entry in sorted(rule_dir.iterdir()):
            is_project = entry.is_dir() and not entry.name.startswith(("_", "."))
            is_module = entry.suffix == ".py" and not entry.name.endswith(".fixed.py")
            if is_project or is_module:
                cases.append(entry)
    return cases


def case_files(case: Path) -> list[Path]:
    if case.is_dir():
        return sorted(p for p in case.rglob("*.py") if not p.name.endswith(".fixed.py"))
    return [case]


def expected_findings(case: Path) -> set[tuple[str, int, str]]:
    """(file name relative to the case, line, code) for every marker."""
    found = set()
    for path in case_files(case):
        name = path.relative_to(case).as_posix() if case.is_dir() else path.name
        for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = MARKER.search(line)
            if match:
                for code in re.split(r"\s*,\s*", match.group("codes")):
                    found.add((name, row, code))
    return found


def _name_in_case(case: Path, filename: str) -> str:
    path = Path(filename)
    return path.relative_to(case).as_posix() if case.is_dir() else path.name


def actual_findings(case: Path, settings: Settings | None = None) -> set[tuple[str, int, str]]:
    result = run([str(case)], settings or Settings(root=case.parent))
    return {(_name_in_case(case, d.filename), d.location.row, d.code) for d in result.diagnostics}


def snapshot_path(case: Path) -> Path:
    """Where a case's concise output is pinned: `_snapshots/<case>.txt` beside it."""
    return case.parent / "_snapshots" / f"{case.stem if case.is_file() else case.name}.txt"


def concise_output(case: Path) -> str:
    """`file:row:col: CODE message` a finding, files named relative to the case, as ruff's
    snapshots pin a rule's wording and columns."""
    result = run([str(case)], Settings(root=case.parent))
    return "".join(
        f"{_name_in_case(case, d.filename)}:{d.location.row}:{d.location.column}: {d.code} {d.message}\n"
        for d in sorted(result.diagnostics, key=lambda d: d.sort_key())
    )


def fix_copy(source_case: Path, workdir: Path, *, unsafe: bool = True) -> Path:
    """Copy a case into `workdir`, run --fix on the copy, return the copy."""
    import shutil

    workdir.mkdir(parents=True, exist_ok=True)
    target = workdir / source_case.name
    if source_case.is_dir():
        shutil.copytree(source_case, target, ignore=shutil.ignore_patterns("*.fixed.py"))
    else:
        shutil.copy2(source_case, target)
    run([str(target)], Settings(root=workdir), RunOptions(fix=True, unsafe_fixes=unsafe))
    return target
