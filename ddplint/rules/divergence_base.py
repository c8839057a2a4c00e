"""What the rules built on the rank-divergence analysis share: their findings and how to quote code."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from ddplint.analysis.divergence.results import Cause, Finding
from ddplint.analysis.divergence.seq import walk
from ddplint.model.facts import ModuleFacts
from ddplint.rules.base import Context, Rule
from ddplint.syntax.lazycst import cst


class DivergenceRule(Rule):
    """A rule that reports the analysis's findings of one cause in the module being checked."""

    cause: ClassVar[Cause]

    def findings(self, ctx: Context) -> Iterator[Finding]:
        for finding in ctx.divergence.findings_for(ctx.facts):
            if finding.cause is self.cause:
                yield finding


def quoted(facts: ModuleFacts, node: cst.CSTNode, limit: int = 60) -> str:
    """The code of `node` on one line, shortened: for `...` in messages."""
    text = " ".join(facts.code(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def holds(finding: Finding) -> str:
    """ "holds" or "does not hold": whether the finding's collectives are in the branch taken
    when its condition is true, or in the other one (`if p.grad is None: ... else: all_gather`)."""
    choice = finding.choice
    if choice is None or not finding.ops:
        return "holds"
    in_then = any(item is op for op in finding.ops for item in walk(choice.arms[0]))
    return "holds" if in_then else "does not hold"
