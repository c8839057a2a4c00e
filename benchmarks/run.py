"""Lint one real corpus with ddplint and the tools a user would otherwise run; print and save a table.

    python benchmarks/run.py                          # torch's distributed code, every tool, 3 runs
    python benchmarks/run.py --corpus torch-ddp       # a 112-file part of it: TorchFix is slow
    python benchmarks/run.py --corpus torch --corpus stdlib --tools ddplint,flake8,ruff
    python benchmarks/run.py --scaling                # ddplint on the corpus x1, x2, x4
    python benchmarks/run.py --corpus FOLDER --tools flake8-file --one-file train.py --runs 9
    python benchmarks/run.py --corpus FOLDER --tools ruff --edit --lsp --one-file train.py --runs 9

flake8-file: flake8 on one file of the corpus, as an editor runs it on every save, in three
set-ups measured in turn, run after run: flake8 alone (its own environment, without ddplint),
flake8 with ddplint installed beside it and `--select E,F,W,C90` (flake8's own codes: ddplint's
are off), and the same with flake8's default selection (ddplint's codes on), the project's
`.ddplint_cache/` warm and the file edited before each run, and the same answered by ddplint's
daemon (`--ddplint-daemon`, started and warmed by two runs first; its process is not flake8's,
so its memory is not in the row).

--edit: `ddplint check FILE` on one file of the corpus edited before each run, the project's cache
warm (pre-commit's case), in turn with `ruff check FILE`. --lsp: `ddplint server` driven over stdio
(see lsp_timing.py): the seconds from opening the file to its diagnostics, and from each change
(a line appended) to the diagnostics of that version.

Each comparison tool gets its own virtual environment under --venvs (built when missing: their pins
conflict, TorchFix needs libcst < 1.6). ddplint runs from the interpreter running this script.
Corpora are copied (`.py` files only) into a temporary folder first: some tools skip anything
under `site-packages`, and the copies make the scaling run possible.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from measure import run_measured

HERE = Path(__file__).parent
# ddplint-warm: nothing changed since the last run. ddplint-edit: one module changed (a comment
# appended to the corpus's largest module before each run), its import group checked again.
TOOLS = ("ddplint", "ddplint-warm", "ddplint-edit", "torchfix", "fixit", "flake8", "ruff", "flake8-file")
REPO = HERE.parent
# Packages installed into each tool's own environment. flake8-ddplint: flake8 with this tree's
# ddplint, installed as a user would (not editable), again at every run of this script.
PACKAGES = {
    "torchfix": ["torchfix"],
    "fixit": ["fixit"],
    "flake8": ["flake8"],
    "ruff": ["ruff"],
    "flake8-ddplint": ["flake8", str(REPO)],
}
# flake8's own codes, its default selection without plugins.
FLAKE8_OWN_CODES = "E,F,W,C90"


CORPORA = ("torch", "torch-dist", "torch-dist-flat", "torch-ddp", "stdlib")


def torch_folder() -> Path:
    spec = importlib.util.find_spec("torch")  # found, never imported
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed: pick another --corpus")
    return Path(next(iter(spec.submodule_search_locations)))


def corpus_roots(name: str) -> tuple[Path, list[Path]]:
    """The folder a corpus lives in, and the parts of it to lint (relative paths)."""
    if name == "torch":
        return torch_folder(), [Path()]
    if name in ("torch-dist-flat", "torch-dist"):
        # torch-dist-flat: the same files with every `__init__.py` left out, laid out as a
        # training repository of script folders is (see `copy_corpus`).
        parts = ["distributed", "utils/data", "nn/parallel"]
        return torch_folder(), [Path(p) for p in parts]
    if name == "torch-ddp":  # small enough for TorchFix and Fixit to run three times
        parts = ["utils/data", "nn/parallel", "distributed/algorithms", "distributed/fsdp"]
        return torch_folder(), [Path(p) for p in parts]
    if name == "stdlib":
        return Path(sysconfig.get_paths()["stdlib"]), [Path()]
    path = Path(name)
    if not path.is_dir():
        sys.exit(f"unknown corpus {name!r}: use {', '.join(CORPORA)} or a folder")
    return path, [Path()]


def copy_corpus(base: Path, parts: list[Path], dest: Path, *, packages: bool = True) -> int:
    """Copy the `.py` files of `parts` of `base` into `dest/<base name>`, keeping packages whole.

    The `__init__.py` of every package between `base` and a part comes along, so module names
    (and imports between the corpus's own modules) stay what they were. Without `packages`,
    no `__init__.py` is copied: every folder is a namespace package, and imports between the
    modules resolve only by path.
    """
    count = 0
    top = dest / base.name
    for part in parts:
        for depth in range(len(part.parts) if packages else 0):
            init = base.joinpath(*part.parts[:depth], "__init__.py")
            target = top.joinpath(*part.parts[:depth], "__init__.py")
            if init.is_file() and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(init, target)
                count += 1
        for folder, dirs, files in os.walk(base / part):
            dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "__pycache__"))
            for name in files:
                if name.endswith(".py") and (packages or name != "__init__.py"):
                    source = Path(folder) / name
                    target = top / source.relative_to(base)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, target)
                    count += 1
    return count


def git_commit(folder: Path) -> str | None:
    """The commit a corpus folder is checked out at; None outside a git checkout."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30
        )
    except OSError:
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def python_files(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*.py"))


@dataclass
class Row:
    corpus: str
    tool: str
    version: str
    files: int
    runs: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    peak_rss_mb: float = 0.0
    exit_codes: list[int] = field(default_factory=list)
    ratio: float | None = None  # median seconds / ddplint cold median seconds, same run

    def record(self, sample) -> None:
        """One measured run (see measure.run_measured)."""
        self.runs.append(round(sample.seconds, 3))
        self.cpu.append(round(sample.cpu_seconds, 3))
        self.exit_codes.append(sample.returncode)
        self.peak_rss_mb = max(self.peak_rss_mb, round(sample.peak_rss / 2**20, 1))

    @property
    def median(self) -> float:
        return statistics.median(self.runs) if self.runs else float("nan")

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu) if self.cpu else float("nan")

    @property
    def files_per_second(self) -> float:
        return self.files / self.median if self.runs else float("nan")


def ensure_venv(venvs: Path, tool: str) -> Path:
    """The tool's own environment, created and filled on first use."""
    env = venvs / tool
    binary = env / "bin" / tool.split("-")[0]
    if not binary.exists():
        print(f"building the {tool} environment in {env} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(env)], check=True)
        pip = [str(env / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, *PACKAGES[tool]], check=True)
    return env / "bin"


def ddplint_beside_flake8(venvs: Path) -> Path:
    """flake8's environment with this tree's ddplint installed in it, as it is now."""
    bin_dir = ensure_venv(venvs, "flake8-ddplint")
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall"]
    subprocess.run([*pip, str(REPO)], check=True)
    return bin_dir


def tool_version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    text = (out.stdout or out.stderr).strip()
    # "ruff 0.6.1", "fixit, version 2.1.0", "7.1.1 (mccabe: ...) CPython ...": keep the number.
    words = text.split()
    return next((w.strip(",") for w in words if w[:1].isdigit()), text[:20] or "?")


def compile_ddplint() -> None:
    """Write ddplint's bytecode, as pip does for the other tools when it installs them: an
    editable install has none, and with PYTHONDONTWRITEBYTECODE set every run would compile
    ddplint's sources again (0.1 s)."""
    spec = importlib.util.find_spec("ddplint")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            compileall.compile_dir(folder, quiet=1)


def ddplint_supports(option: str) -> bool:
    out = subprocess.run([sys.executable, "-m", "ddplint", "check", "--help"], capture_output=True, text=True)
    return option in out.stdout


def commands(tool: str, venvs: Path, files: list[str], jobs: int | None) -> list[str]:
    if tool.startswith("ddplint"):
        argv = [sys.executable, "-m", "ddplint", "check", "-q", "--exit-zero", "--output-format", "concise"]
        if jobs is not None:
            argv += ["--jobs", str(jobs)]
        if tool == "ddplint" and ddplint_supports("--no-cache"):
            argv.append("--no-cache")
        return argv + files
    bin_dir = ensure_venv(venvs, tool)
    if tool == "torchfix":
        return [str(bin_dir / "torchfix"), *files]
    if tool == "fixit":
        return [str(bin_dir / "fixit"), "lint", *files]
    if tool == "flake8":
        return [str(bin_dir / "flake8"), "--exit-zero", *files]
    return [
        str(bin_dir / "ruff"),
        "check",
        "--isolated",
        "--no-cache",
        "--select",
        "ALL",
        "--exit-zero",
        *files,
    ]


def version_of(tool: str, venvs: Path) -> str:
    if tool.startswith("ddplint"):
        return tool_version([sys.executable, "-m", "ddplint", "--version"])
    bin_dir = ensure_venv(venvs, tool)
    if tool == "fixit":
        return tool_version([str(bin_dir / "fixit"), "--version"])
    return tool_version([str(bin_dir / tool), "--version"])


def measure(tool: str, corpus: str, folder: Path, args) -> Row:
    files = python_files(folder)
    argv = commands(tool, args.venvs, files, args.jobs)
    row = Row(corpus, tool, version_of(tool, args.venvs), len(files))
    cache = folder / ".ddplint_cache"
    edited = max((Path(f) for f in files), key=lambda p: (p.stat().st_size, str(p)))
    if tool in ("ddplint-warm", "ddplint-edit"):
        run_measured(argv, cwd=folder)  # fill the cache
    if tool == "ddplint-edit":
        edit(edited)
        run_measured(argv, cwd=folder)  # the runs after the first keep the modules they parse
    for _ in range(args.runs):
        if tool == "ddplint":
            shutil.rmtree(cache, ignore_errors=True)
        if tool == "ddplint-edit":
            edit(edited)
        sample = run_measured(argv, cwd=folder)
        row.record(sample)
        print(f"  {corpus:<10} {tool:<13} {sample.seconds:8.2f} s", file=sys.stderr)
    return row


def one_file_of(project: Path, one_file: str | None) -> tuple[Path, str]:
    """The file given (relative to `project`), else the project's largest; with its relative name."""
    files = python_files(project)
    path = project / one_file if one_file else max(map(Path, files), key=lambda p: (p.stat().st_size, str(p)))
    return path, str(path.relative_to(project))


def measure_flake8_file(corpus: str, project: Path, one_file: str | None, args) -> list[Row]:
    """flake8 on one file of `project` (run in it, as an editor runs it on every save): alone,
    with ddplint beside it and its codes off, and with its codes on; one run of each in turn."""
    path, name = one_file_of(project, one_file)
    alone = ensure_venv(args.venvs, "flake8") / "flake8"
    beside = ddplint_beside_flake8(args.venvs)
    setups = {
        f"flake8 on {name}, without ddplint": [str(alone), "--exit-zero", name],
        "the same, ddplint installed, DDP off": [
            str(beside / "flake8"),
            "--exit-zero",
            "--select",
            FLAKE8_OWN_CODES,
            name,
        ],
        "the same, ddplint installed, DDP on": [str(beside / "flake8"), "--exit-zero", name],
        "the same, DDP on, `--ddplint-daemon`": [
            str(beside / "flake8"),
            "--exit-zero",
            "--ddplint-daemon",
            name,
        ],
    }
    # The project's cache as `ddplint check` leaves it after an edit: findings, and the modules
    # of the edited file's import group kept parsed (see ddplint.run.cache.trees).
    check = [str(beside / "ddplint"), "check", "-q", "--exit-zero", "."]
    run_measured(check, cwd=project)
    edit(path)
    run_measured(check, cwd=project)
    rows = [Row(corpus, setup, tool_version([argv[0], "--version"]), 1) for setup, argv in setups.items()]
    # The daemon started by a first run (which checks the file itself meanwhile) and warmed by a
    # second, as by an editor's first two saves; stopped at the end.
    daemon = setups["the same, DDP on, `--ddplint-daemon`"]
    run_measured(daemon, cwd=project)
    time.sleep(2)
    run_measured(daemon, cwd=project)
    try:
        # Saved again before each round: the file's own tree is never the one kept.
        return in_turn(rows, list(setups.values()), project, path, args.runs)
    finally:
        subprocess.run([str(beside / "ddplint"), "daemon", "--stop"], capture_output=True, timeout=60)


def in_turn(rows: list[Row], argvs: list[list[str]], project: Path, path: Path, runs: int) -> list[Row]:
    """Each command once in turn, `runs` rounds, `path` edited before each round; ratios to the first."""
    for _ in range(runs):
        edit(path)
        for row, argv in zip(rows, argvs):
            sample = run_measured(argv, cwd=project)
            row.record(sample)
            print(f"  {row.tool:<50} {sample.seconds:8.2f} s", file=sys.stderr)
    for row in rows:
        row.ratio = round(row.median / rows[0].median, 2)
    return rows


def measure_one_file(corpus: str, project: Path, one_file: str | None, args) -> list[Row]:
    """--edit and --lsp: the editor's and pre-commit's case, one file of `project`."""
    path, name = one_file_of(project, one_file)
    rows: list[Row] = []
    if args.edit:
        check = commands("ddplint-warm", args.venvs, [name], None)
        setups = {
            f"ddplint check {name}, edited, cache warm": check,
            f"ruff check {name}": commands("ruff", args.venvs, [name], None),
        }
        run_measured(commands("ddplint-warm", args.venvs, ["."], None), cwd=project)  # fill the cache
        # A fresh cache keeps no trees on its first run (a CI job's), and the first edit of a file
        # starts its pieces: two earlier commits' worth of checks, as pre-commit has made them.
        for _ in range(2):
            edit(path)
            run_measured(check, cwd=project)
        versions = [version_of("ddplint", args.venvs), version_of("ruff", args.venvs)]
        edit_rows = [Row(corpus, setup, version, 1) for setup, version in zip(setups, versions)]
        rows += in_turn(edit_rows, list(setups.values()), project, path, args.runs)
    if args.lsp:
        client = [
            sys.executable,
            str(HERE / "lsp_timing.py"),
            str(project),
            name,
            "--changes",
            str(args.runs),
        ]
        done = subprocess.run(client, capture_output=True, text=True, check=True)
        timing = json.loads(done.stdout)
        version = version_of("ddplint", args.venvs)
        opened = Row(corpus, f"ddplint server: open {name} → diagnostics", version, 1, runs=[timing["open"]])
        changed = Row(corpus, "ddplint server: change → diagnostics", version, 1, runs=timing["changes"])
        rows += [opened, changed]
    return rows


def edit(path: Path) -> None:
    """A change that leaves the module's findings alone."""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("# edited\n")


def scaling(corpus: str, source: Path, work: Path, args) -> list[Row]:
    """ddplint on 1, 2 and 4 copies of the corpus side by side."""
    rows = []
    for factor in (1, 2, 4):
        folder = work / f"x{factor}"
        for i in range(factor):
            shutil.copytree(source, folder / f"copy{i}")
        row = measure("ddplint", f"{corpus} x{factor}", folder, args)
        rows.append(row)
        shutil.rmtree(folder)
    base = rows[0].median
    for row in rows:
        row.ratio = round(row.median / base, 2)
    return rows


def markdown(
    rows: list[Row], scale_rows: list[Row], file_rows: list[Row], edit_rows: list[Row], meta: dict
) -> str:
    lines = [
        f"# ddplint benchmark — {meta['date']}",
        "",
        f"`{meta['command']}`",
        "",
        f"{meta['cpus']} CPUs, Python {meta['python']}, {meta['platform']}; load average before the "
        f"run {meta['load_before']}, after {meta['load_after']}. Median of {meta['runs']} runs; peak "
        "RSS summed over the whole process tree; CPU = user + system seconds of the tree (steadier "
        "than wall time on a shared machine).",
        "",
    ]
    for corpus in meta.get("corpora", []):
        commit = f" (git {corpus['commit'][:12]})" if corpus["commit"] else ""
        lines += [f"Corpus {corpus['corpus']}: {corpus['files']} Python files{commit}.", ""]
    if rows:
        lines += [
            "Ratio = median wall seconds / ddplint (cold) median wall seconds in this run.",
            "",
            "| corpus | tool | version | files | median s | CPU s | peak RSS MB | files/s | time / ddplint |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
    for r in rows:
        ratio = f"{r.ratio:.2f}" if r.ratio is not None else ""
        lines.append(
            f"| {r.corpus} | {r.tool} | {r.version} | {r.files} | {r.median:.2f} | {r.median_cpu:.1f} "
            f"| {r.peak_rss_mb:.0f} "
            f"| {r.files_per_second:.0f} | {ratio} |"
        )
    if scale_rows:
        lines += [
            "",
            "Scaling (ddplint cold; copies of the corpus side by side):",
            "",
            "| corpus | files | median s | CPU s | peak RSS MB | time / x1 time |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in scale_rows:
            lines.append(
                f"| {r.corpus} | {r.files} | {r.median:.2f} | {r.median_cpu:.1f} | {r.peak_rss_mb:.0f} "
                f"| {r.ratio:.2f} |"
            )
    if edit_rows:
        lines += [
            *([""] if rows or scale_rows else []),
            "One file edited (--edit: the project's cache warm; ratio = median wall seconds / ddplint's) "
            "and the language server (--lsp: seconds to the diagnostics, measured by the client):",
            "",
            "| corpus | set-up | version | runs | median s | CPU s | peak RSS MB | time / ddplint |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in edit_rows:
            cpu = f"{r.median_cpu:.2f}" if r.cpu else ""
            rss = f"{r.peak_rss_mb:.0f}" if r.peak_rss_mb else ""
            ratio = f"{r.ratio:.2f}" if r.ratio is not None else ""
            lines.append(
                f"| {r.corpus} | {r.tool} | {r.version} | {len(r.runs)} | {r.median:.3f} | {cpu} "
                f"| {rss} | {ratio} |"
            )
    if file_rows:
        lines += [
            *([""] if rows or scale_rows or edit_rows else []),
            "flake8 on one file, with and without ddplint installed (run in turn, run after run; "
            "ratio = median wall seconds / flake8 without ddplint):",
            "",
            "| corpus | set-up | flake8 | median s | CPU s | peak RSS MB | time / flake8 alone |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: |",
        ]
        for r in file_rows:
            lines.append(
                f"| {r.corpus} | {r.tool} | {r.version} | {r.median:.2f} | {r.median_cpu:.2f} "
                f"| {r.peak_rss_mb:.0f} | {r.ratio:.2f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", action="append", help=f"{', '.join(CORPORA)} or a folder")
    parser.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated, from {', '.join(TOOLS)}")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, help="passed to ddplint as --jobs")
    parser.add_argument("--scaling", action="store_true", help="also run ddplint on the corpus x1, x2, x4")
    parser.add_argument(
        "--one-file", help="flake8-file: the file, relative to the corpus (default: its largest)"
    )
    parser.add_argument(
        "--edit", action="store_true", help="time `ddplint check FILE` after an edit, cache warm"
    )
    parser.add_argument(
        "--lsp", action="store_true", help="time `ddplint server`: open, change → diagnostics"
    )
    parser.add_argument("--venvs", type=Path, default=HERE / ".venvs")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    corpora = args.corpus or ["torch-dist"]
    tools = [t for t in args.tools.split(",") if t]
    unknown = set(tools) - set(TOOLS)
    if unknown:
        parser.error(f"unknown tools: {', '.join(sorted(unknown))}")
    if not ddplint_supports("--no-cache"):  # no cache in this version: nothing to warm
        tools = [t for t in tools if t not in ("ddplint-warm", "ddplint-edit")]
    file_tools = [t for t in tools if t == "flake8-file"]
    tools = [t for t in tools if t != "flake8-file"]
    if args.edit or args.lsp:  # ruff is --edit's peer there, not a corpus row
        tools = [t for t in tools if t != "ruff"]
    if tools and "ddplint" not in tools:
        tools.insert(0, "ddplint")
    compile_ddplint()
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/run.py " + " ".join(sys.argv[1:]),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "runs": args.runs,
        "load_before": round(os.getloadavg()[0], 2),
    }
    rows: list[Row] = []
    scale_rows: list[Row] = []
    file_rows: list[Row] = []
    edit_rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="ddplint-bench-") as tmp:
        for corpus in corpora:
            label = Path(corpus).name if Path(corpus).is_dir() else corpus
            folder = Path(tmp) / label / "x1"
            count = copy_corpus(*corpus_roots(corpus), folder, packages=not corpus.endswith("-flat"))
            print(f"{label}: {count} files", file=sys.stderr)
            # Which code, exactly: two copies of one project can differ by hundreds of files.
            described = {"corpus": label, "files": count, "commit": git_commit(corpus_roots(corpus)[0])}
            meta.setdefault("corpora", []).append(described)
            corpus_rows = [measure(tool, label, folder, args) for tool in tools]
            for row in corpus_rows:
                row.ratio = round(row.median / corpus_rows[0].median, 2)
            rows += corpus_rows
            project = folder / corpus_roots(corpus)[0].name
            if file_tools:
                file_rows += measure_flake8_file(label, project, args.one_file, args)
            if args.edit or args.lsp:
                edit_rows += measure_one_file(label, project, args.one_file, args)
            if args.scaling:
                scale_rows += scaling(label, folder, Path(tmp) / label / "scaling", args)
    meta["load_after"] = round(os.getloadavg()[0], 2)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "-".join(Path(c).name if Path(c).is_dir() else c for c in corpora)
    if file_rows and not rows:
        stem += "-flake8-file"
    if edit_rows and not rows:
        stem += "-editor"
    table = markdown(rows, scale_rows, file_rows, edit_rows, meta)
    (args.out / f"{stem}.md").write_text(table, encoding="utf-8")
    data = {
        "meta": meta,
        "rows": [asdict(r) | {"median": r.median, "median_cpu": r.median_cpu} for r in rows],
        "scaling": [asdict(r) | {"median": r.median, "median_cpu": r.median_cpu} for r in scale_rows],
        "flake8_file": [asdict(r) | {"median": r.median, "median_cpu": r.median_cpu} for r in file_rows],
        "editor": [asdict(r) | {"median": r.median} for r in edit_rows],
    }
    (args.out / f"{stem}.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(table)


if __name__ == "__main__":
    main()
