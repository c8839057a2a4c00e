"""The corpus sweep: ddplint over real code from the standard library and the installed torch package.

On a copy, `--fix --unsafe-fixes` twice: zero internal errors, every changed file parses, and
the second pass changes nothing. The counts are printed (`pytest -m slow -s tests/test_corpus_sweep.py`).

What is swept: in full, the parts of torch that distributed training runs through and torch's
own distributed tests (the code the rules are about: `torch/distributed` alone is some 360
modules, among them `optim/zero_redundancy_optimizer.py`, which once crashed the analysis);
of everything else in torch and the standard library, a fixed sample of one module in
`SAMPLE_EVERY`, chosen by a hash of its path, so every run sweeps the same files.
`DDPLINT_CORPUS_SWEEP=full` sweeps every module of both.

The corpus is split by top-level folder and swept on every core; each part is one project.
"""

from __future__ import annotations

import os
import re
import shutil
import sysconfig
import time
import zlib
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import libcst as cst
import pytest

from ddplint.config import DEFAULT_EXCLUDES, Settings
from ddplint.diagnostics import INTERNAL_ERROR
from ddplint.run.runner import RunOptions, run
from ddplint.syntax.source import Source

pytestmark = pytest.mark.slow

FULL = os.environ.get("DDPLINT_CORPUS_SWEEP", "") == "full"
SAMPLE_EVERY = 5
# Swept in full (paths relative to the torch package): distributed training and data loading,
# and the tests and test helpers torch writes for them.
WHOLE_IN_TORCH = re.compile(
    r"^(distributed|nn/parallel|optim|multiprocessing|utils/data|testing/_internal/distributed)/"
    r"|^testing/_internal/common_(distributed|dist_composable|fsdp)\.py$"
)
# The module that once crashed the analysis: it must stay in the sweep.
MUST_SWEEP = "distributed/optim/zero_redundancy_optimizer.py"


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


def _modules(folder: Path) -> list[Path]:
    """The modules a run given `folder` checks (excluded folders and symbolic links left out)."""
    found = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not _skipped(d) and not Path(here, d).is_symlink())
        found.extend(Path(here, f) for f in sorted(files) if f.endswith(".py"))
    return [p for p in found if p.is_file() and not p.is_symlink()]


def _swept(relative: str, *, torch: bool) -> bool:
    if FULL or (torch and WHOLE_IN_TORCH.search(relative)):
        return True
    return zlib.crc32(relative.encode()) % SAMPLE_EVERY == 0


def _jobs(root: Path, copy: Path, *, torch: bool) -> list[list[str]]:
    """One job per part of `root`: the modules of the part that are swept, named in `copy`."""
    jobs = []
    for part in _parts(root):
        modules = [p.relative_to(root).as_posix() for p in _modules(part)]
        chosen = [m for m in modules if _swept(m, torch=torch)]
        if chosen == modules:
            jobs.append([str(copy / part.name)])  # the whole folder, as a project is given
        elif chosen:
            jobs.append([str(copy / m) for m in chosen])
    loose = [p.name for p in _loose_modules(root) if _swept(p.name, torch=torch)]
    if loose:
        jobs.append([str(copy / name) for name in loose])
    return jobs


def _size(paths: list[str]) -> int:
    """Bytes of Python in `paths`: how long a part takes, roughly."""
    files = [f for p in map(Path, paths) for f in ([p] if p.is_file() else p.rglob("*.py"))]
    return sum(f.stat().st_size for f in files if f.is_file())


def _internal(result) -> list[str]:
    return [f"{d.filename}: {d.detail}" for d in result.diagnostics if d.code == INTERNAL_ERROR]


def _sweep(job: tuple[str, list[str]]) -> dict:
    """Fix a copy twice (`--fix --unsafe-fixes`). Runs in a worker process.

    The first pass is also the check: its findings are those left plus those fixed. The second
    pass runs where the first one changed a file: where it changed nothing, the second pass
    would read the same bytes with the same settings as the first."""
    start = time.monotonic()
    root, paths = job
    copies = [Path(p) for p in paths]
    settings = Settings(root=Path(root))
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
    internal = _internal(first)
    second_passes = 0
    if changed or first.fixed:
        second = run([str(p) for p in copies], settings, options)
        second_passes = 1
        internal += _internal(second)
        if second.fixed:
            problems.append(f"second pass fixed {second.fixed} more findings under {root}")
        for path, old in before.items():
            if not path.is_symlink() and path.read_bytes() != changed.get(path, old):
                problems.append(f"{path}: changed by the second pass")
    return {
        "files": first.checked,
        "checked": {str(f.filename) for f in first.files},
        "codes": codes,
        "fixed_codes": fixed_codes,
        "fixed": first.fixed,
        "changed": len(changed),
        "second_passes": second_passes,
        "internal": internal,
        "problems": problems,
        "seconds": time.monotonic() - start,
    }


def test_corpus_sweep(tmp_path: Path) -> None:
    start = time.monotonic()
    jobs: list[tuple[str, list[str]]] = []
    torch_copy = None
    for index, root in enumerate(_roots()):
        copy = tmp_path / f"corpus{index}" / root.name
        _copy_python_files(root, copy)
        torch = root == _torch_dir()
        if torch:
            torch_copy = copy
        jobs.extend((str(copy), paths) for paths in _jobs(root, copy, torch=torch))
    # Biggest parts first, so that the workers finish together.
    jobs.sort(key=lambda job: -_size(job[1]))
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
        f"\ncorpus sweep ({'every module' if FULL else f'sample of 1 in {SAMPLE_EVERY}'}): "
        f"{files} files in {', '.join(str(r) for r in _roots())}; "
        f"findings by code: {dict(sorted(codes.items()))}; "
        f"--fix --unsafe-fixes: {fixed} fixes ({dict(sorted(fixed_codes.items()))}) in {changed} files; "
        f"second pass over {sum(s['second_passes'] for s in summaries)} of {len(summaries)} parts; "
        f"{elapsed:.0f} s"
    )
    assert files > (3000 if FULL else 1000)
    if torch_copy is not None:
        checked = {c for s in summaries for c in s["checked"]}
        assert str(torch_copy / MUST_SWEEP) in checked
    assert internal == []
    assert problems == []
    # The copy (some 150 MB) is removed once the sweep has passed, within the test rather than
    # by pytest's clean-up at the end of the session; a failed sweep leaves it for inspection.
    for copy in tmp_path.glob("corpus*"):
        shutil.rmtree(copy)
