"""Ecosystem check: lint public training repositories at pinned commits and compare with a baseline.

    python benchmarks/ecosystem/run.py --work /tmp/ddplint-eco              # clone, lint, compare
    python benchmarks/ecosystem/run.py --source DIR                         # git dirs already on disk
    python benchmarks/ecosystem/run.py --repo karpathy/nanoGPT --repo pytorch/examples
    python benchmarks/ecosystem/run.py --pairs                              # known bugs: found? fixed clean?
    python benchmarks/ecosystem/run.py --update                             # new findings into the baseline

ddplint runs as `sys.executable -m ddplint`, so the interpreter and PYTHONPATH decide which ddplint
is measured. Each repository's `.py` files at the pinned commit (only under `paths` when the manifest
gives them) are written into `--work/trees/<owner>+<name>/<commit>/` and linted from there.

A finding is keyed by (repo, path relative to the repository, code, row, first 80 characters of the
message). `baseline.json` gives each known finding a verdict (`real`, `latent`, `false-alarm`) and a
one-line reason. The run prints the findings that are new (not in the baseline) and gone (in the
baseline, no longer reported), then a table per repository.

`--pairs` lints the buggy and the fixed commit of each entry of `pairs.json` (a real bug report and
the commit that fixed it). By default each pair lints the folders holding its files (recursively):
enough for ddplint to follow the project's own helpers next to the file, small enough to be quick.
A pair gives `lint` to choose other paths. A pair is *found* when a finding of the expected code is
reported in the expected file within `LINE_SLACK` rows of the expected line in the buggy commit, and
*clean* when the fixed commit has fewer findings of that code in that file than the buggy one by at
least the matched ones.

Exit status: 1 when a finding has no verdict (new, or `null` in the baseline) or when a pair does
worse than the result recorded in `pairs.json`; 2 on a usage or setup error; 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERDICTS = ("real", "latent", "false-alarm")
LINE_SLACK = 3
MESSAGE_KEY_CHARS = 80


@dataclass
class RepoResult:
    repo: str
    files: int = 0
    findings: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""


def load_json(path: Path) -> object:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def git(git_dir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=False, check=check
    )


def has_commit(git_dir: Path, commit: str) -> bool:
    return git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}", check=False).returncode == 0


def find_git_dir(repo: str, source: Path | None, work: Path) -> Path:
    """A git directory holding `repo`: under --source when given, else a clone cached in --work."""
    owner, name = repo.split("/")
    if source is not None:
        for candidate in (
            source / f"{owner}+{name}" / "repo",
            source / owner / name / ".git",
            source / owner / name,
            source / f"{owner}+{name}",
        ):
            if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
                return candidate
        raise SystemExit(f"{repo}: no git directory under {source}")
    clone = work / "git" / f"{owner}+{name}.git"
    if not clone.is_dir():
        clone.parent.mkdir(parents=True, exist_ok=True)
        url = f"https://github.com/{owner}/{name}"
        print(f"cloning {url} ...", file=sys.stderr)
        subprocess.run(["git", "clone", "--bare", "--quiet", url, str(clone)], check=True)
    return clone


def ensure_commit(git_dir: Path, commit: str, repo: str) -> None:
    if has_commit(git_dir, commit):
        return
    git(git_dir, "fetch", "--quiet", "origin", commit, check=False)
    if not has_commit(git_dir, commit):
        raise SystemExit(f"{repo}: commit {commit} not found in {git_dir}")


def python_files(git_dir: Path, commit: str, paths: list[str]) -> list[tuple[str, str]]:
    """(blob id, path) of every `.py` file of `commit` under `paths` (everything when empty), and
    the `__init__.py` of the packages above them: they decide the modules' dotted names, as in
    a checkout (`arctic_training/config` is the package `arctic_training.config`)."""
    parents = {str(p / "__init__.py") for path in paths for p in Path(path).parents if p != Path()}
    paths = [*paths, *sorted(parents)]
    out = git(git_dir, "ls-tree", "-r", "-z", commit, "--", *paths).stdout.decode("utf-8", "replace")
    files = []
    for entry in out.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob" and mode != "120000" and path.endswith(".py"):
            files.append((blob, path))
    return files


def extract_tree(git_dir: Path, commit: str, paths: list[str], dest: Path) -> int:
    """Write the `.py` files of `commit` under `paths` into `dest`; return how many."""
    files = python_files(git_dir, commit, paths)
    marker = dest / ".complete"
    if marker.is_file() and marker.read_text() == str(len(files)):
        return len(files)
    dest.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    written = 0
    for blob, path in files:
        proc.stdin.write(blob.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":  # missing object: skip the file
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written += 1
    proc.stdin.close()
    proc.wait()
    marker.write_text(str(len(files)))
    return written


def run_ddplint(root: Path, paths: list[str], jobs: int | None) -> tuple[list[dict], float]:
    """ddplint's JSON findings for `paths` (relative to `root`), with paths relative to `root`."""
    targets = [p for p in paths if (root / p).exists()] if paths else ["."]
    if not targets:
        return [], 0.0
    cmd = [sys.executable, "-m", "ddplint", "check", "--no-cache", "--output-format", "json", "--exit-zero"]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    start = time.perf_counter()
    proc = subprocess.run([*cmd, "--", *targets], cwd=root, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"ddplint exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    findings = json.loads(proc.stdout or "[]")
    for finding in findings:
        path = Path(finding["filename"])
        if path.is_absolute():
            path = path.relative_to(root)
        finding["filename"] = path.as_posix().removeprefix("./")
    return findings, seconds


def key_of(repo: str, path: str, code: str, row: int, message: str) -> tuple:
    return (repo, path, code, int(row), message[:MESSAGE_KEY_CHARS])


def finding_key(repo: str, finding: dict) -> tuple:
    return key_of(repo, finding["filename"], finding["code"], finding["location"]["row"], finding["message"])


def entry_key(entry: dict) -> tuple:
    return key_of(entry["repo"], entry["path"], entry["code"], entry["row"], entry["message"])


def lint_repo(entry: dict, args: argparse.Namespace) -> RepoResult:
    repo, commit = entry["repo"], entry["commit"]
    paths = entry.get("paths", [])
    result = RepoResult(repo)
    try:
        git_dir = find_git_dir(repo, args.source, args.work)
        ensure_commit(git_dir, commit, repo)
        root = args.work / "trees" / repo.replace("/", "+") / commit
        result.files = extract_tree(git_dir, commit, paths, root)
        result.findings, result.seconds = run_ddplint(root, paths, args.jobs)
    except (RuntimeError, subprocess.CalledProcessError, SystemExit) as error:
        result.error = str(error)
    return result


def print_table(header: list[str], rows: list[list[object]]) -> None:
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for n, row in enumerate(cells):
        line = "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
        print(line.rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def describe(repo: str, finding: dict) -> str:
    loc = finding["location"]
    return (
        f"{repo}:{finding['filename']}:{loc['row']}:{loc['column']}: {finding['code']} {finding['message']}"
    )


def check_repos(args: argparse.Namespace) -> int:
    manifest = load_json(HERE / "manifest.json")["repos"]
    if args.repo:
        wanted = set(args.repo)
        manifest = [e for e in manifest if e["repo"] in wanted]
        if len(manifest) != len(wanted):
            print(f"not in the manifest: {sorted(wanted - {e['repo'] for e in manifest})}", file=sys.stderr)
            return 2
    baseline_path = HERE / "baseline.json"
    baseline = load_json(baseline_path) if baseline_path.is_file() else {"findings": []}
    known = {entry_key(e): e for e in baseline["findings"]}

    results = []
    for entry in manifest:
        print(f"linting {entry['repo']} @ {entry['commit'][:12]} ...", file=sys.stderr)
        results.append(lint_repo(entry, args))

    checked = {r.repo for r in results if not r.error}
    current = {finding_key(r.repo, f): (r.repo, f) for r in results for f in r.findings}
    new = [current[k] for k in current if k not in known]
    gone = [known[k] for k in known if k[0] in checked and k not in current]

    print(f"\n## New findings ({len(new)})")
    for repo, finding in sorted(new, key=lambda rf: finding_key(*rf)):
        print("  " + describe(repo, finding))
    print(f"\n## Gone findings ({len(gone)})")
    for e in sorted(gone, key=entry_key):
        print(f"  {e['repo']}:{e['path']}:{e['row']}: {e['code']} [{e.get('verdict')}] {e['message'][:100]}")

    rows, totals = [], [0, 0, 0, 0, 0, 0, 0.0]
    unjudged = []
    for r in results:
        counts = dict.fromkeys((*VERDICTS, None), 0)
        for f in r.findings:
            verdict = known.get(finding_key(r.repo, f), {}).get("verdict")
            counts[verdict if verdict in VERDICTS else None] += 1
            if verdict not in VERDICTS:
                unjudged.append((r.repo, f))
        row = [
            r.files,
            len(r.findings),
            counts["real"],
            counts["latent"],
            counts["false-alarm"],
            counts[None],
        ]
        rows.append([r.repo + (f"  (ERROR: {r.error[:60]})" if r.error else ""), *row, f"{r.seconds:.1f}"])
        totals = [t + v for t, v in zip(totals, [*row, r.seconds])]
    rows.append(["total", *totals[:6], f"{totals[6]:.1f}"])
    print("\n## Per repository")
    print_table(["repo", "files", "findings", "real", "latent", "false-alarm", "no verdict", "seconds"], rows)

    if args.update:
        for repo, f in new:
            baseline["findings"].append(
                {
                    "repo": repo,
                    "path": f["filename"],
                    "code": f["code"],
                    "row": f["location"]["row"],
                    "column": f["location"]["column"],
                    "message": f["message"],
                    "verdict": None,
                    "reason": "",
                }
            )
        if args.prune:
            gone_keys = {entry_key(e) for e in gone}
            baseline["findings"] = [e for e in baseline["findings"] if entry_key(e) not in gone_keys]
        baseline["findings"].sort(key=entry_key)
        write_json(baseline_path, baseline)
        print(f"\nbaseline updated: {len(new)} added" + (f", {len(gone)} removed" if args.prune else ""))
    if args.json:
        write_json(args.json, [{"repo": repo, **f} for repo, f in current.values()])

    errors = [r for r in results if r.error]
    for r in errors:
        print(f"error: {r.repo}: {r.error}", file=sys.stderr)
    if unjudged:
        print(f"\n{len(unjudged)} finding(s) without a verdict: judge them in baseline.json", file=sys.stderr)
        return 1
    return 2 if errors else 0


def pair_findings(pair: dict, commit: str, args: argparse.Namespace) -> list[dict]:
    repo = pair["repo"]
    files = pair["files"]
    lint = pair.get("lint") or sorted(
        {str(Path(f).parent) if Path(f).parent != Path() else "." for f in files}
    )
    git_dir = find_git_dir(repo, args.source, args.work)
    ensure_commit(git_dir, commit, repo)
    root = args.work / "pairs" / repo.replace("/", "+") / commit
    extract_tree(git_dir, commit, [] if "." in lint else lint, root)
    findings, _ = run_ddplint(root, [] if "." in lint else lint, args.jobs)
    return findings


def check_pairs(args: argparse.Namespace) -> int:
    path = HERE / "pairs.json"
    data = load_json(path)
    rows, regressions = [], []
    for pair in data["pairs"]:
        if args.repo and pair["repo"] not in args.repo:
            continue
        code, files = pair["expect"]["code"], set(pair["files"])
        exp_path, exp_line = pair["expect"]["path"], pair["expect"]["line"]
        try:
            buggy = pair_findings(pair, pair["buggy"], args)
            fixed = pair_findings(pair, pair["fixed"], args)
        except (RuntimeError, subprocess.CalledProcessError, SystemExit) as error:
            rows.append([pair["id"], code, "error", "error", str(error)[:60]])
            regressions.append(pair["id"])
            continue
        b_code = [f for f in buggy if f["code"] == code and f["filename"] in files]
        f_code = [f for f in fixed if f["code"] == code and f["filename"] in files]
        matched = [
            f
            for f in b_code
            if f["filename"] == exp_path and abs(f["location"]["row"] - exp_line) <= LINE_SLACK
        ]
        found = bool(matched)
        clean = found and len(f_code) <= len(b_code) - len(matched)
        others = sorted({f["code"] for f in buggy if f["filename"] in files} - {code})
        clean_cell = "yes" if clean else ("no" if found else "-")
        rows.append([pair["id"], code, "yes" if found else "NO", clean_cell, ",".join(others)])
        recorded = pair.get("result", {})
        if (recorded.get("found") and not found) or (recorded.get("clean") and not clean):
            regressions.append(pair["id"])
        if args.verbose:
            for f in b_code:
                print(f"  buggy {pair['id']}: " + describe(pair["repo"], f))
            for f in f_code:
                print(f"  fixed {pair['id']}: " + describe(pair["repo"], f))
        if args.update:
            pair["result"] = {"found": found, "clean": clean}
    print("\n## Pairs")
    print_table(["pair", "rule", "found", "fixed clean", "other codes on the buggy files"], rows)
    found_n = sum(r[2] == "yes" for r in rows)
    clean_n = sum(r[3] == "yes" for r in rows)
    print(
        f"\n{found_n}/{len(rows)} found with the right rule, {clean_n}/{found_n} of those clean after the fix"
    )
    if args.update:
        write_json(path, data)
    if regressions:
        print(f"regressed: {', '.join(regressions)}", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--source", type=Path, help="folder of git dirs (<owner>+<name>/repo or <owner>/<name>)"
    )
    parser.add_argument("--work", type=Path, help="cache for clones and trees (default: ./.ecosystem-work)")
    parser.add_argument("--repo", action="append", help="only this owner/name (repeatable)")
    parser.add_argument("--pairs", action="store_true", help="check the buggy/fixed pairs of pairs.json")
    parser.add_argument(
        "--update", action="store_true", help="add new findings to the baseline (verdict null)"
    )
    parser.add_argument("--prune", action="store_true", help="with --update: drop gone findings")
    parser.add_argument("--jobs", type=int, help="ddplint --jobs")
    parser.add_argument("--json", type=Path, help="also write every current finding to this file")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="with --pairs: print the matching findings"
    )
    args = parser.parse_args()
    args.work = (args.work or Path.cwd() / ".ecosystem-work").resolve()
    if args.source is not None:
        args.source = args.source.resolve()
    os.environ.setdefault("GIT_TERMINAL_PROMPT", "0")
    return check_pairs(args) if args.pairs else check_repos(args)


if __name__ == "__main__":
    sys.exit(main())
