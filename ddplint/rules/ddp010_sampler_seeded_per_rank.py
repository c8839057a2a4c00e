"""DDP010 sampler-seeded-per-rank: `DistributedSampler(seed=...)` that differs between ranks.

`DistributedSampler.__iter__` (torch 2.13) shuffles with `torch.randperm(n, generator=g)` where
`g.manual_seed(self.seed + self.epoch)`, pads, then keeps `indices[rank::num_replicas]`. The
split is disjoint only because every rank draws the *same* permutation: with a seed that
differs per rank, each rank slices its own permutation, so ranks share samples and some
samples are seen by no rank in that epoch. Nothing hangs; the data is silently duplicated.
"""

from __future__ import annotations

from ddplint.analysis.origins import RANDOM
from ddplint.diagnostics import Applicability
from ddplint.model.expressions import literal_bool
from ddplint.rules.base import Context, Rule
from ddplint.syntax.lazycst import cst

SAMPLER = "torch.utils.data.DistributedSampler"
SEED_POSITION = 4  # dataset, num_replicas, rank, shuffle, seed, drop_last


class SamplerSeededPerRank(Rule):
    code = "DDP010"
    triggers = frozenset({"torch.utils.data.DistributedSampler"})
    name = "sampler-seeded-per-rank"
    summary = "`DistributedSampler` seeded with a value that differs between ranks"
    fix_applicability = Applicability.SAFE

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.all_calls():
            if call.name != SAMPLER:
                continue
            bound = call.bound()
            seed = bound.arg("seed")
            if seed is None or literal_bool(bound.get("shuffle")) is False:
                continue  # without shuffling the seed is never used
            replicas = bound.get("num_replicas")
            if isinstance(replicas, cst.Integer) and replicas.value == "1":
                continue  # one replica: every rank reads the whole set anyway
            origin = ctx.origins.of(facts, call.scope, seed.value, derived=True)
            if origin is None:
                continue
            spelled = facts.code(seed.value)
            source = "" if spelled == origin.source else f" (`{origin.source}`, {origin.where})"
            what = (
                "can differ between processes" if origin.kind == RANDOM else f"depends on the {origin.kind}"
            )
            message = (
                f"`DistributedSampler` seed `{spelled}` {what}{source}: each rank shuffles its own "
                f"permutation and keeps every world-size-th index of it, so ranks train on "
                f"overlapping samples and some samples on none (no error, no hang)"
            )
            fix = None
            help = "use one seed on every rank: a constant or a configured value (`seed=args.seed`)"
            if origin.kind != RANDOM:
                fix = _fix(ctx, call.node, seed, ctx.origins, call.scope)
                if fix is not None:
                    help = fix.message[0].lower() + fix.message[1:]
            ctx.report(seed.value, message, fix=fix, help=help)


def _fix(ctx: Context, call: cst.Call, seed: cst.Arg, finder, scope):
    """`seed=args.seed + rank` → `seed=args.seed`; `seed=rank` → removed (the default is 0)."""
    value = seed.value
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)):
        left = finder.of(ctx.facts, scope, value.left, derived=True)
        right = finder.of(ctx.facts, scope, value.right, derived=True)
        if left is None and right is not None:
            kept = ctx.facts.code(value.left)
            return ctx.fix(f"Seed every rank alike: `{kept}`", ctx.replace(value, kept))
        if right is None and left is not None and isinstance(value.operator, cst.Add):
            kept = ctx.facts.code(value.right)
            return ctx.fix(f"Seed every rank alike: `{kept}`", ctx.replace(value, kept))
        return None
    if seed.keyword is not None:
        return ctx.fix(
            "Remove the seed: `DistributedSampler`'s default seed, 0, is the same on every rank",
            ctx.remove_arg(call, seed),
        )
    return ctx.fix("Seed every rank alike: `0`, `DistributedSampler`'s default", ctx.replace(value, "0"))
