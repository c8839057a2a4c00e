"""The corpus sweep: ddplint over the whole standard library and the installed torch package.

Zero internal errors; then `--fix --unsafe-fixes` on a copy: every changed file parses and a
second pass changes nothing. The counts are printed (`pytest -m slow -s tests/test_corpus_sweep.py`).

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


def _sweep(paths: list[str]) -> dict:
    """Check the originals; fix a copy twice. Runs in a worker process."""
    start = time.monotonic()
    originals, copies = [p.split("\0")[0] for p in paths], [p.split("\0")[1] for p in paths]
    settings = Settings(root=Path(originals[0]).parent)
    checked = run(originals, settings)
    summary = {
        "files": checked.checked,
        "codes": Counter(d.code for d in checked.diagnostics),
        "internal": [f"{d.filename}: {d.detail}" for d in checked.diagnostics if d.code == INTERNAL_ERROR],
        "fixed": 0,
        "changed": 0,
        "problems": [],
    }
    fix_settings = Settings(root=Path(copies[0]).parent)
    options = RunOptions(fix=True, unsafe_fixes=True)
    first = run(copies, fix_settings, options)
    summary["fixed"] = first.fixed
    summary["fixed_codes"] = Counter()
    for file in first.files:
        summary["fixed_codes"].update(file.fixed_codes)
    summary["internal"] += [
        f"{d.filename}: {d.detail}" for d in first.diagnostics if d.code == INTERNAL_ERROR
    ]
    summary["problems"] += [
        f"{d.filename}: {d.message}" for d in first.diagnostics if "fix produced" in d.message
    ]
    changed = {f.filename: Path(f.filename).read_bytes() for f in first.files if f.fixed_count}
    summary["changed"] = len(changed)
    for filename, data in changed.items():
        try:
            cst.parse_module(Source.from_bytes(filename, data).text)
        except Exception as exc:  # reported below, with the file
            summary["problems"].append(f"{filename}: fixed file does not parse: {exc}")
    second = run(copies, fix_settings, options)
    summary["internal"] += [
        f"{d.filename}: {d.detail}" for d in second.diagnostics if d.code == INTERNAL_ERROR
    ]
    if second.fixed:
        summary["problems"].append(f"second pass fixed {second.fixed} more findings in {paths[0]}")
    for filename, data in changed.items():
        if Path(filename).read_bytes() != data:
            summary["problems"].append(f"{filename}: changed again by the second pass")
    summary["seconds"] = time.monotonic() - start
    return summary


def test_corpus_sweep(tmp_path: Path) -> None:
    start = time.monotonic()
    jobs: list[list[str]] = []
    for index, root in enumerate(_roots()):
        copy = tmp_path / f"corpus{index}" / root.name
        _copy_python_files(root, copy)
        for part in _parts(root):
            jobs.append([f"{part}\0{copy / part.name}"])
        loose = _loose_modules(root)
        if loose:
            jobs.append([f"{p}\0{copy / p.name}" for p in loose])
    # Biggest parts first, so that the workers finish together.
    jobs.sort(key=lambda job: -sum(1 for p in job for _ in Path(p.split("\0")[0]).rglob("*.py")))
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
