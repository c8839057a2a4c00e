"""Helpers for tests that drive ddplint through its outside surfaces (CLI, flake8, ...)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
EXAMPLE = REPO / "examples" / "train.py"
# The findings in examples/train.py: (row, column, code), columns 1-based.
EXAMPLE_FINDINGS = [(38, 15, "DDP002"), (39, 48, "DDP001"), (48, 17, "DDP004"), (52, 46, "DDP005")]
# A script whose two findings both have safe fixes.
TWO = DATA / "two_findings.py"
TWO_FINDINGS = [(6, 15, "DDP002"), (7, 43, "DDP001")]

# flake8 run in a child process (as an editor runs it), then the ddplint modules it imported.
FLAKE8_THEN_MODULES = """
import json, sys
from flake8.main.cli import main
main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("ddplint", "libcst"))
print(json.dumps(loaded), file=sys.stderr)
"""
# What flake8 imports to load the plugin: nothing that reads or parses a file.
PLUGIN_ONLY = ["ddplint", "ddplint._meta", "ddplint.integrations", "ddplint.integrations.flake8_plugin"]


_LINE = re.compile(r"^(?P<path>.+?):(?P<row>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) ")


def run(args: list[str], *, cwd: Path | None = None, input: bytes | None = None, module: str = "ddplint"):
    """Run `python -m <module> ARGS` in a child process; the result has bytes stdout/stderr."""
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, input=input, capture_output=True, timeout=120
    )


def positions(output: str) -> list[tuple[str, int, int, str]]:
    """(path, row, column, code) of every `path:row:col: CODE ...` line."""
    found = []
    for line in output.splitlines():
        match = _LINE.match(line)
        if match:
            found.append((match["path"], int(match["row"]), int(match["col"]), match["code"]))
    return found
