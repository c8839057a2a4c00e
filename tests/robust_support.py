"""Shared by the robustness tests: run the CLI in-process, and a file with one known finding."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from ddplint.integrations.cli import main

# One DDP001 finding on line 3, with a safe fix.
GOOD = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, shuffle=True, sampler=s)\n"
GOOD_FIXED = (
    "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, shuffle=(s is None), sampler=s)\n"
)


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()


def ddplint(cwd: Path, *args: str) -> Outcome:
    """`ddplint check --output-format concise --quiet ARGS` run in `cwd`."""
    runner = CliRunner()
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        result = runner.invoke(main, ["check", "--output-format", "concise", "--quiet", *args])
    finally:
        os.chdir(previous)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Outcome(result.exit_code, result.stdout, result.stderr)


def good_finding(name: str = "good.py") -> str:
    """The start of the concise line GOOD produces, without the rule's wording."""
    return f"{name}:3:25: DDP001 "


def finding_lines(outcome: Outcome, name: str) -> list[str]:
    return [line for line in outcome.lines if line.startswith(f"{name}:")]
