"""The corpus sweep: ddplint over the whole standard library and the installed torch package.

On a copy, `--fix --unsafe-fixes` twice: zero internal errors, every changed file parses, and
the second pass changes nothing. The counts are printed (`pytest -m slow -s tests/test_corpus_sweep.py`).

The corpus is split by top-level folder and swept on every core; each part is one project.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import libcst as cst
import pytest

from ddplint.config import DEFAULT_EXCLUDES, Settings
from ddplint.diagnostics import INTERNAL_ERROR
from ddplint.runner import RunOptions, run
from ddplint.source import Source

pytestmark = pytest.mark.slow


def _roots() -> list[Path]:
    roots = [Path(sysconfig.get_paths()["stdlib"])]
    torch_dir = _torch_dir()
    if torch_dir is not None:
        roots.append(torch_dir)
    return roots


def _torch_dir() -> Path | None:
    # Found without importing torch (slow, and not what a linter test should need).
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _skipped(name: str) -> bool:
    return name in DEFAULT_EXCLUDES or name == "__pycache__"


def _copy_python_files(root: Path, target: Path) -> None:
    def ignore(folder: str, names: list[str]) -> list[str]:
        here = Path(folder)
        return [n for n in names if _skipped(n) or (not n.endswith(".py") and not (here / n).is_dir())]

    shutil.copytree(root, target, symlinks=True, ignore=ignore)


def _parts(root: Path) -> list[Path]:
    """Top-level folders, and the root itself for its loose modules (walked without them)."""
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and not _skipped(p.name))


def _loose_modules(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.suffix == ".py" and p.is_file())


def _internal(result) -> list[str]:
    return [f"{d.filename}: {d.detail}" for d in result.diagnostics if d.code == INTERNAL_ERROR]


def _sweep(paths: list[str]) -> dict:
    """Fix a copy twice (`--fix --unsafe-fixes`). Runs in a worker process.

    The first pass is also the check: its findings are those left plus those fixed."""
    start = time.monotonic()
    copies = [Path(p) for p in paths]
    settings = Settings(root=copies[0].parent)
    options = RunOptions(fix=True, unsafe_fixes=True)
    before = {p: p.read_bytes() for c in copies for p in ([c] if c.is_file() else c.rglob("*.py"))}
    first = run([str(p) for p in copies], settings, options)
    codes: Counter = Counter(d.code for d in first.diagnostics)
    fixed_codes: Counter = Counter()
    for file in first.files:
        fixed_codes.update(file.fixed_codes)
    codes.update(fixed_codes)
    problems = [f"{d.filename}: {d.message}" for d in first.diagnostics if "fix produced" in d.message]
    changed = {}
    for path, old in before.items():
        if not path.is_symlink() and path.read_bytes() != old:
            changed[path] = path.read_bytes()
    for path, data in changed.items():
        try:
            cst.parse_module(Source.from_bytes(str(path), data).text)
        except Exception as exc:  # reported below, with the file
            problems.append(f"{path}: fixed file does not parse: {exc}")
    second = run([str(p) for p in copies], settings, options)
    if second.fixed:
        problems.append(f"second pass fixed {second.fixed} more findings under {copies[0]}")
    for path, old in before.items():
        if not path.is_symlink() and path.read_bytes() != changed.get(path, old):
            problems.append(f"{path}: changed by the second pass")
    return {
        "files": first.checked,
        "codes": codes,
        "fixed_codes": fixed_codes,
        "fixed": first.fixed,
        "changed": len(changed),
        "internal": _internal(first) + _internal(second),
        "problems": problems,
        "seconds": time.monotonic() - start,
    }


def test_corpus_sweep(tmp_path: Path) -> None:
    start = time.monotonic()
    jobs: list[list[str]] = []
    for index, root in enumerate(_roots()):
        copy = tmp_path / f"corpus{index}" / root.name
        _copy_python_files(root, copy)
        for part in _parts(root):
            jobs.append([str(copy / part.name)])
        loose = _loose_modules(root)
        if loose:
            jobs.append([str(copy / p.name) for p in loose])
    # Biggest parts first, so that the workers finish together.
    jobs.sort(key=lambda job: -sum(1 for p in job for _ in Path(p).rglob("*.py")))
    with ProcessPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        summaries = list(pool.map(_sweep, jobs))
    codes: Counter = Counter()
    fixed_codes: Counter = Counter()
    for s in summaries:
        codes.update(s["codes"])
        fixed_codes.update(s["fixed_codes"])
    files = sum(s["files"] for s in summaries)
    internal = [m for s in summaries for m in s["internal"]]
    problems = [m for s in summaries for m in s["problems"]]
    fixed = sum(s["fixed"] for s in summaries)
    changed = sum(s["changed"] for s in summaries)
    elapsed = time.monotonic() - start
    print(
        f"\ncorpus sweep: {files} files in {', '.join(str(r) for r in _roots())}; "
        f"findings by code: {dict(sorted(codes.items()))}; "
        f"--fix --unsafe-fixes: {fixed} fixes ({dict(sorted(fixed_codes.items()))}) in {changed} files; "
        f"{elapsed:.0f} s"
    )
    assert files > 3000
    assert internal == []
    assert problems == []
