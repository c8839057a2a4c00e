"""DDP009 collective-order-mismatch: rank 0 and the other ranks call different collectives here."""

from __future__ import annotations

from ddplint.analysis.divergence.labels import op_label
from ddplint.analysis.divergence.results import Cause, Finding
from ddplint.analysis.divergence.triggers import collective_triggers
from ddplint.diagnostics import Applicability
from ddplint.rules.base import Context
from ddplint.rules.divergence_base import DivergenceRule


class CollectiveOrderMismatch(DivergenceRule):
    code = "DDP009"
    cause = Cause.ORDER
    name = "collective-order-mismatch"
    summary = "both rank classes call collectives, but different ones or in another order"
    fix_applicability = Applicability.DISPLAY_ONLY
    triggers = collective_triggers()

    def check(self, ctx: Context) -> None:
        for finding in self.findings(ctx):
            ctx.report(
                finding.node,
                describe(finding),
                help="call the same collectives in the same order on every rank; keep rank-specific "
                "work (printing, saving) between them, not the collectives themselves",
                notes=finding.notes,
            )


def describe(finding: Finding) -> str:
    mine = op_label(finding.ops[0])
    theirs = op_label(finding.other_ops[0]) if finding.other_ops else "another collective"
    return (
        f"rank 0 calls {mine} where the other ranks call {theirs}: collectives pair up by order, "
        f"not by name, so each side waits in a call the other never makes (a hang or a crash on NCCL; on "
        f"gloo a mismatch error, or mismatched tensors combined silently)"
    )
