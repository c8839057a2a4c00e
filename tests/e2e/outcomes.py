"""Run every e2e script on 2 ranks and print the README table "Why these rules".

    python tests/e2e/outcomes.py

For each case: the bad script, its hand-fixed variant, and (when the rule exists and offers a fix)
the copy fixed by `ddplint check --fix --unsafe-fixes`. Needs torch.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from cases import CASES
from harness import PG_TIMEOUT
from proof import applicable, autofix, findings

from ddplint.rules import RULES_BY_CODE


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def main() -> None:
    started = time.monotonic()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            bad = case.run(case.path)
            hand = case.run(case.handfixed)
            auto = "rule not implemented yet"
            if case.code in RULES_BY_CODE:
                found = [f for f in findings(case.path) if f["code"] == case.code]
                if not found:
                    auto = "not reported"
                elif not all(applicable(f) for f in found):
                    auto = "no automatic fix"
                else:
                    fixed = case.run(autofix(case, Path(tmp) / case.id))
                    auto = f"{fixed.describe()} ({fixed.seconds:.1f} s)"
            rows.append(
                f"| {case.code} | `{case.script}` | {cell(case.claim)} | {cell(bad.describe())} "
                f"({bad.seconds:.1f} s) | {cell(hand.describe())} ({hand.seconds:.1f} s) | {cell(auto)} |"
            )
    print(
        "| rule | script (`tests/e2e/scripts/`) | the rule says | observed | fixed by hand "
        "| fixed by `--fix --unsafe-fixes` |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    print(
        f"\n2 ranks, gloo on CPU, process-group timeout {PG_TIMEOUT:g} s; "
        f"{time.monotonic() - started:.0f} s for the whole table.",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
