#!/usr/bin/env python3
"""Score ddplint against the evaluation set.

Each case is a folder under bugs/ or clean/ holding one or more .py files and an
expected.json list of {"file", "code", "line", "why"}. ddplint is run on each case
folder on its own; a finding matches an expectation when code, file and line are
all equal. Findings of the right code and file a few lines away are listed as
near misses (they still count as a miss and a false alarm).

Usage:
    python score.py                 # every case
    python score.py bugs/05_...     # some cases
    python score.py --json out.json # also write the raw per-case results
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
CARD_RULES = ["DDP001", "DDP002", "DDP003", "DDP004", "DDP005"]
NEAR = 3


def list_cases(selected):
    if selected:
        return [os.path.normpath(os.path.join(HERE, s)) if not os.path.isabs(s) else s for s in selected]
    cases = []
    for group in ("bugs", "clean"):
        root = os.path.join(HERE, group)
        if not os.path.isdir(root):
            continue
        for name in sorted(os.listdir(root)):
            d = os.path.join(root, name)
            if os.path.isfile(os.path.join(d, "expected.json")):
                cases.append(d)
    return cases


def run_ddplint(case_dir):
    # From a folder outside the checkout: the interpreter's installed ddplint is the one measured.
    proc = subprocess.run(
        [sys.executable, "-m", "ddplint", "check", "--no-cache", "--output-format", "json", case_dir],
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
    )
    try:
        raw = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError:
        return None, f"exit {proc.returncode}: {proc.stderr.strip()[-2000:] or proc.stdout[-2000:]}"
    findings = []
    for f in raw:
        findings.append(
            {
                "file": os.path.relpath(f["filename"], case_dir),
                "code": f["code"],
                "line": f["location"]["row"],
                "message": f["message"],
            }
        )
    err = proc.stderr.strip() if proc.returncode not in (0, 1) else ""
    return findings, err


def match(expected, findings):
    """Exact matching on (file, code, line); each finding serves one expectation."""
    free = list(range(len(findings)))
    tp, fn = [], []
    for e in expected:
        hit = next(
            (
                i
                for i in free
                if findings[i]["file"] == e["file"]
                and findings[i]["code"] == e["code"]
                and findings[i]["line"] == e["line"]
            ),
            None,
        )
        if hit is None:
            fn.append(e)
        else:
            free.remove(hit)
            tp.append((e, findings[hit]))
    fp = [findings[i] for i in free]
    near = []
    for e in fn:
        for f in fp:
            if f["file"] == e["file"] and f["code"] == e["code"] and abs(f["line"] - e["line"]) <= NEAR:
                near.append((e, f))
    return tp, fn, fp, near


def prf(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else float("nan")
    r = tp / (tp + fn) if tp + fn else float("nan")
    f1 = (
        2 * p * r / (p + r) if tp and p == p and r == r and p + r else (0.0 if tp + fp + fn else float("nan"))
    )
    return p, r, f1


def fmt(x):
    return "  -  " if x != x else f"{x:5.3f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--json", help="write per-case results to this file")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 4)
    args = ap.parse_args()

    cases = list_cases(args.cases)
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        runs = list(ex.map(run_ddplint, cases))

    per_rule = defaultdict(lambda: [0, 0, 0])  # tp, fp, fn
    results = []
    misses, alarms, nears, errors = [], [], [], []
    print("per case")
    print("--------")
    for case_dir, (findings, err) in zip(cases, runs):
        name = os.path.relpath(case_dir, HERE)
        with open(os.path.join(case_dir, "expected.json")) as handle:
            expected = json.load(handle)
        if findings is None:
            errors.append((name, err))
            findings = []
        tp, fn, fp, near = match(expected, findings)
        for e, _ in tp:
            per_rule[e["code"]][0] += 1
        for f in fp:
            per_rule[f["code"]][1] += 1
        for e in fn:
            per_rule[e["code"]][2] += 1
        status = "ok  " if not fn and not fp else "FAIL"
        print(
            f"{status} {name:55s} expected {len(expected):2d}  found {len(findings):2d}  "
            f"tp {len(tp):2d}  fn {len(fn):2d}  fp {len(fp):2d}"
        )
        misses += [(name, e) for e in fn]
        alarms += [(name, f) for f in fp]
        nears += [(name, e, f) for e, f in near]
        if err:
            errors.append((name, err))
        results.append(
            {"case": name, "expected": expected, "findings": findings, "tp": len(tp), "fn": fn, "fp": fp}
        )

    def table(title, codes):
        print()
        print(title)
        print("-" * len(title))
        print(f"{'rule':8s} {'tp':>4s} {'fp':>4s} {'fn':>4s}  {'prec':>5s}  {'rec':>5s}  {'f1':>5s}")
        T = F = N = 0
        for c in codes:
            tp, fp, fn = per_rule.get(c, (0, 0, 0))
            T, F, N = T + tp, F + fp, N + fn
            p, r, f1 = prf(tp, fp, fn)
            print(f"{c:8s} {tp:4d} {fp:4d} {fn:4d}  {fmt(p)}  {fmt(r)}  {fmt(f1)}")
        p, r, f1 = prf(T, F, N)
        print(f"{'total':8s} {T:4d} {F:4d} {N:4d}  {fmt(p)}  {fmt(r)}  {fmt(f1)}")
        return p, r, f1

    all_codes = sorted(set(per_rule) | set(CARD_RULES))
    table("card rules (DDP001-DDP005)", CARD_RULES)
    table("all rules", all_codes)

    bug_cases = [r for r in results if r["case"].startswith("bugs")]
    clean_cases = [r for r in results if r["case"].startswith("clean")]
    print()
    print(
        f"bug cases fully found: {sum(1 for r in bug_cases if not r['fn'])}/{len(bug_cases)}; "
        f"with at least one expectation found: {sum(1 for r in bug_cases if r['tp'])}/{len(bug_cases)}"
    )
    print(
        f"clean cases with no finding: {sum(1 for r in clean_cases if not r['findings'])}/{len(clean_cases)}"
    )

    print()
    print(f"missed expectations ({len(misses)})")
    print("-" * 24)
    for name, e in misses:
        print(f"{name}/{e['file']}:{e['line']} {e['code']}  {e['why']}")

    print()
    print(f"unexpected findings ({len(alarms)})")
    print("-" * 24)
    for name, f in alarms:
        print(f"{name}/{f['file']}:{f['line']} {f['code']}  {f['message']}")

    if nears:
        print()
        print(f"near misses (right code and file, line within {NEAR}; counted as miss + false alarm)")
        print("-" * 24)
        for name, e, f in nears:
            print(f"{name}/{e['file']}: expected {e['code']} at {e['line']}, reported at {f['line']}")

    if errors:
        print()
        print("ddplint errors")
        print("--------------")
        for name, err in errors:
            print(f"{name}: {err}")

    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
