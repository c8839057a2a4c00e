"""DDP003 uneven-rank-data: data split per rank without padding, feeding a loop with collectives."""

from __future__ import annotations

from ddplint.analysis.divergence.labels import ops_label
from ddplint.analysis.divergence.results import Cause, Finding
from ddplint.analysis.divergence.triggers import collective_triggers
from ddplint.diagnostics import Applicability, Fix
from ddplint.model import catalogue as cat
from ddplint.model.names import dotted_name
from ddplint.rules.base import Context
from ddplint.rules.divergence_base import DivergenceRule
from ddplint.syntax.lazycst import cst


class UnevenRankData(DivergenceRule):
    code = "DDP003"
    cause = Cause.UNEVEN
    name = "uneven-rank-data"
    summary = "data split per rank without padding, iterated by a loop that calls collectives"
    fix_applicability = Applicability.DISPLAY_ONLY
    triggers = collective_triggers()

    def check(self, ctx: Context) -> None:
        for finding in self.findings(ctx):
            guidance = (
                "use `DistributedSampler` (it pads every rank to ceil(N / world_size) samples), pad "
                "the shards to one length, or run the loop under `with model.join():`"
            )
            ctx.report(
                finding.node,
                describe(ctx, finding),
                fix=Fix(Applicability.DISPLAY_ONLY, guidance),
                help=guidance,
            )


def describe(ctx: Context, finding: Finding) -> str:
    split = " ".join(ctx.facts.code(finding.node).split())
    if len(split) > 60:
        split = split[:57] + "..."
    loop = finding.block_facts
    where = loop.place_of(finding.block) if loop is not None else "a loop"
    library = _library_split(ctx, finding)
    if library is not None:
        return (
            f"`{split}` {library.why}: ranks can hold different numbers of batches, the ones with more "
            f"run more iterations of the loop at {where} and wait in {ops_label(finding.ops)} for ranks "
            f"that have already finished"
        )
    return (
        f"`{split}` gives each rank its own share of the data without padding: when the length is "
        f"not a multiple of the world size, some ranks hold one item (or batch) more, run one more "
        f"iteration of the loop at {where}, and wait in {ops_label(finding.ops)} for ranks that "
        f"have already finished"
    )


def _library_split(ctx: Context, finding: Finding):
    """The catalogue's entry when the split is a library call (`split_dataset_by_node(...)`)."""
    node = finding.node
    if not isinstance(node, cst.Call):
        return None
    name = dotted_name(node.func)
    library = cat.FUNCTIONS.get(ctx.facts.imports.resolve_dotted(name)) if name else None
    return library if library is not None and library.role is cat.Role.SHARD else None
