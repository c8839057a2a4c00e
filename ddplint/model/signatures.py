"""Real signatures of the library calls the rules read, to bind positional arguments to names."""

from __future__ import annotations

from dataclasses import dataclass, field

from ddplint.syntax.lazycst import cst

# Positional-or-keyword parameters, in order, as in torch 2.13.
SIGNATURES: dict[str, tuple[str, ...]] = {
    "torch.utils.data.DataLoader": (
        "dataset",
        "batch_size",
        "shuffle",
        "sampler",
        "batch_sampler",
        "num_workers",
        "collate_fn",
        "pin_memory",
        "drop_last",
        "timeout",
        "worker_init_fn",
        "multiprocessing_context",
        "generator",
    ),
    "torch.utils.data.DistributedSampler": (
        "dataset",
        "num_replicas",
        "rank",
        "shuffle",
        "seed",
        "drop_last",
    ),
    "torch.utils.data.BatchSampler": ("sampler", "batch_size", "drop_last"),
    "torch.nn.parallel.DistributedDataParallel": (
        "module",
        "device_ids",
        "output_device",
        "dim",
        "broadcast_buffers",
    ),
}


@dataclass
class BoundArgs:
    """Arguments of one call keyed by parameter name; `opaque` when `*x`/`**x` may hide some."""

    args: dict[str, cst.Arg] = field(default_factory=dict)
    star_args: bool = False
    star_kwargs: bool = False

    def get(self, name: str) -> cst.BaseExpression | None:
        arg = self.args.get(name)
        return arg.value if arg is not None else None

    def arg(self, name: str) -> cst.Arg | None:
        return self.args.get(name)

    @property
    def opaque(self) -> bool:
        return self.star_args or self.star_kwargs

    def may_hide(self, name: str) -> bool:
        """True when `name` is not given explicitly but a `*`/`**` argument could carry it."""
        return name not in self.args and self.opaque


def bind(call: cst.Call, params: tuple[str, ...] = ()) -> BoundArgs:
    bound = BoundArgs()
    position = 0
    for arg in call.args:
        if arg.star == "*":
            bound.star_args = True
        elif arg.star == "**":
            bound.star_kwargs = True
        elif arg.keyword is not None:
            bound.args[arg.keyword.value] = arg
        elif not bound.star_args:
            if position < len(params):
                bound.args[params[position]] = arg
            else:
                bound.args[f"#{position}"] = arg
            position += 1
    return bound
