"""DDP013 replica-divergent-update: state every DDP replica must hold alike, changed on some ranks only.

DDP broadcasts rank 0's parameters and buffers once, when it wraps the model; afterwards it
all-reduces gradients and nothing else. An optimizer step, a learning-rate or loss-scale change,
or a weight load made on some ranks only is never undone: the replicas drift apart without an
error, and the checkpoint rank 0 saves is no longer the model the others train.
"""

from __future__ import annotations

from ddplint.analysis.divergence.results import Update
from ddplint.analysis.divergence.triggers import collective_triggers
from ddplint.diagnostics import Applicability
from ddplint.rules.base import Context, Rule


class ReplicaDivergentUpdate(Rule):
    code = "DDP013"
    name = "replica-divergent-update"
    summary = (
        "an optimizer step, scheduler or scaler change, or weight load of a DDP model made on some "
        "ranks only: the replicas drift apart silently"
    )
    fix_applicability = Applicability.DISPLAY_ONLY
    # A DDP program spells its wrapper (or a collective) somewhere in its import closure.
    triggers = collective_triggers()

    def check(self, ctx: Context) -> None:
        for update in ctx.divergence.updates_for(ctx.facts):
            ctx.report(update.site, describe(update), help=HELP[update.state.kind])


HELP = {
    "optimizer": "step the optimizer on every rank; keep only logging and saving under the rank test",
    "scheduler": "step the scheduler on every rank, with a value every rank agrees on",
    "scaler": "update the scaler on every rank",
    "model": "load the weights on every rank, or before wrapping the model in DDP (which then "
    "broadcasts rank 0's)",
}


def describe(update: Update) -> str:
    what = update.label
    if update.via:
        what += f" ({update.facts.place_of(update.node)}, via `{update.via[0]}`)"
    if update.guard is not None:
        condition = f"runs only when `{update.guard.text}` ({update.guard.facts.place_of(update.guard.node)})"
    else:
        condition = "runs on some ranks only (the others left the function earlier)"
    return f"{what} {condition}: {update.state.effect}. Nothing fails: the replicas just drift apart"
