"""Abstract values of the simulation, under one rank class at a time.

The analysis runs every function twice: as rank 0 and as "any other rank". Under each class a
rank is concrete enough to decide `rank == 0`, `local_rank in [-1, 0]` or `rank > 0`; what stays
unknown is either uniform (the same on every rank: configuration, world size, collective
results) or divergent (per-rank data, or a rank test the two classes cannot settle).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum


class Kind(Enum):
    CONST = "const"  # a known Python constant (int, bool, None, str)
    NONZERO = "nonzero"  # a rank other than 0: unknown, but >= 1
    SEVERAL = "several"  # the world size: unknown, the same on every rank, but >= 2
    OBJECT = "object"  # some object that is not None
    UNIFORM = "uniform"  # unknown, the same on every rank
    DATA = "data"  # differs between ranks through their data or timing
    RANK = "rank"  # differs between ranks of the same class (`rank == 1`)


class OriginLabel:
    """Why a divergent value diverges, for messages: "`loss.item()` (train.py:12)".

    Most values end in no message, and finding a line costs generating its function's code, so
    the line is looked up only for the text, or to compare two labels spelled alike in one file
    (equal as their texts would be: same words, same file name, same line).
    """

    __slots__ = ("_find_line", "_line", "file", "label", "node")

    def __init__(self, label: str, file: str, node: object, find_line: Callable[[], int]) -> None:
        self.label = label  # "`loss.item()`", "items of `loader`"
        self.file = file  # the file's name, without its folder
        self.node = node
        self._find_line = find_line
        self._line: int | None = None

    @property
    def line(self) -> int:
        if self._line is None:
            self._line = self._find_line()
        return self._line

    def __str__(self) -> str:
        return f"{self.label} ({self.file}:{self.line})"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OriginLabel):
            return NotImplemented
        return (
            self.label == other.label
            and self.file == other.file
            and (self.node is other.node or self.line == other.line)
        )

    def __hash__(self) -> int:
        return hash((self.label, self.file))


@dataclass(frozen=True)
class Val:
    kind: Kind
    const: object = None
    # Derived from a rank source: a rank-derived value wins when joined with a constant
    # fallback (`return 0 if not dist.is_initialized() else dist.get_rank()`).
    rank: bool = False
    # Why a divergent value diverges, for messages.
    origin: OriginLabel | None = None
    # Parameters of the function being summarised that this value derives from.
    deps: frozenset[int] = frozenset()
    # What the object is, when it matters: "ddp" for a DDP/FSDP-wrapped module.
    tag: str | None = None
    # Data split per rank without padding, as (facts, node) of the split: ranks may hold
    # different numbers of items, so loops over it may run different numbers of times.
    shard: tuple | None = None
    # May be None, and whether it is None diverges like this (UNIFORM when a uniform decision
    # picked between `return None` and `return batch`): `x is None` then reads this, not the
    # divergence of what `x` holds when it is not None.
    null: Kind | None = None
    # The elements of a tuple, when known: `return loss, state` keeps `state` uniform even
    # when `loss` is per-rank data.
    items: tuple | None = None
    # Divergent only on some setups (a file check): it does not taint by control dependence.
    weak: bool = False
    # A wrapped module on some paths only (`if args.ddp: model = DDP(model)`): `.module` would
    # fail on the others.
    partial: bool = False
    # Made the same on every rank by a collective (`dist.all_reduce(loss)`, `accelerator.reduce`),
    # or computed from such values alone: its numerics agree too (`isnan(loss)` after the reduce).
    agreed: bool = False
    # Of an object the same on every rank but for these attributes (paths under it), which hold
    # per-rank data its methods stored (`metrics.update(loss)` fills `metrics._window`, not
    # `metrics._world_size`); `origin` says where that data comes from.
    fields: frozenset[str] = frozenset()
    # One of these constants, the same on every rank: the item of a loop over a literal
    # (`for split in ["dev", "test"]`), which `split == "train"` never equals.
    choices: frozenset | None = None

    @property
    def divergent(self) -> bool:
        return self.kind in (Kind.DATA, Kind.RANK)

    def truth(self) -> bool | None:
        """True/False when decided under this rank class, None when unknown."""
        if self.kind is Kind.CONST:
            try:
                return bool(self.const)
            except Exception:
                return None
        if self.kind in (Kind.NONZERO, Kind.SEVERAL, Kind.OBJECT):
            return True
        return None

    def with_deps(self, deps: frozenset[int]) -> Val:
        return replace(self, deps=self.deps | deps) if deps else self


# The field of a container that stands for the values it holds: `by_group[ranks] = [grad]`
# under a key the same on every rank leaves keys (so `len`, `in`, `.keys()`) the same everywhere
# and the values per-rank.
HELD = "[]"
UNIFORM = Val(Kind.UNIFORM)
AGREED = Val(Kind.UNIFORM, agreed=True)
# Tags of a module whose forward is a collective (DDP with its buffers broadcast, FSDP; DDP with
# `broadcast_buffers=False` is "ddp-nobuf"), and of its `.module` taken back.
WRAPPED = frozenset({"ddp", "fsdp"})
UNWRAPPED = "unwrapped"
PARAMS = "replica-parameters"  # `model.parameters()` of a wrapped model (or of its `.module`)
ONE_PROCESS = "one-process"  # a launcher of one process: `Trainer(devices=1)`
# A loop test whose inputs the body changed under a rank test: iteration counts follow the rank.
CHANGED_UNDER_RANK_TEST = "changed-under-rank-test"
FUNCTION = "function"  # a project function named, not called: equal to no string or number
NONE = Val(Kind.CONST, None)
# The world size of a run that can hang: two ranks at least.
WORLD_SIZE = Val(Kind.SEVERAL)


def const(value: object, rank: bool = False) -> Val:
    return Val(Kind.CONST, value, rank=rank)


def one_of(values: tuple) -> Val:
    """An item of a literal container of the constants `values`, the same on every rank."""
    try:
        distinct = frozenset(values)
    except TypeError:  # an unhashable constant
        return UNIFORM
    if len(distinct) == 1:
        return const(values[0])
    return Val(Kind.UNIFORM, choices=distinct) if distinct else UNIFORM


def data(origin: OriginLabel) -> Val:
    return Val(Kind.DATA, origin=origin)


def rank_value(is_rank_zero: bool, origin: OriginLabel) -> Val:
    """The rank itself under one class: 0, or some rank >= 1."""
    return (
        Val(Kind.CONST, 0, rank=True, origin=origin)
        if is_rank_zero
        else Val(Kind.NONZERO, rank=True, origin=origin)
    )


def main_flag(is_rank_zero: bool, origin: OriginLabel) -> Val:
    return Val(Kind.CONST, is_rank_zero, rank=True, origin=origin)


def first_shard(values) -> tuple | None:
    return next((v.shard for v in values if v.shard is not None), None)


def combine(values, origin: OriginLabel | None = None) -> Val:
    """The value of an operation on `values` we cannot evaluate: divergent if any input is."""
    values = list(values)
    if not values:
        return UNIFORM
    deps = frozenset().union(*(v.deps for v in values))
    rank = any(v.rank for v in values)
    shard = first_shard(values)
    kinds = {v.kind for v in values}
    for kind in (Kind.DATA, Kind.RANK):
        if kind in kinds:
            divergent = [v for v in values if v.kind is kind]
            strong = [v for v in divergent if not v.weak]
            first = (strong or divergent)[0]
            return Val(
                kind, rank=rank, origin=first.origin or origin, deps=deps, shard=shard, weak=not strong
            )
    # Nothing divergent went in: an agreed number scaled by the configuration stays agreed.
    agreed = not rank and any(v.agreed for v in values)
    if not (rank or deps or shard or agreed):
        return UNIFORM  # what most operations give: nothing divergent, derived or split
    return Val(Kind.UNIFORM, rank=rank, deps=deps, shard=shard, agreed=agreed)


def join(a: Val, b: Val) -> Val:
    """The value after two paths meet."""
    if a is b:
        return a  # most names are untouched by either path
    joined = _join(a, b)
    null = _worst(a.null, b.null)
    if null is not None and joined.null is None:
        joined = replace(joined, null=null)
    if (a.fields or b.fields) and not joined.divergent:
        joined = replace(joined, fields=a.fields | b.fields, origin=joined.origin or a.origin or b.origin)
    return joined


def holds_per_rank(fields: frozenset[str], path: str) -> bool:
    """Whether reading `path` under an object reads one of its per-rank `fields` (or a part of
    one, or an attribute holding one)."""
    return any(path == f or path.startswith(f + ".") or f.startswith(path + ".") for f in fields)


def _join(a: Val, b: Val) -> Val:
    if a == b:
        return a
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        joined = join(replace(a, items=None), replace(b, items=None))
        return replace(joined, items=tuple(join(x, y) for x, y in zip(a.items, b.items)))
    a_none = a.kind is Kind.CONST and a.const is None
    b_none = b.kind is Kind.CONST and b.const is None
    if a_none != b_none:
        other = b if a_none else a
        return replace(other, null=_worst(other.null, Kind.UNIFORM))
    if a.shard is not None or b.shard is not None:
        joined = join(replace(a, shard=None), replace(b, shard=None))
        return replace(joined, shard=a.shard or b.shard)
    for kind in (Kind.DATA, Kind.RANK):
        if a.kind is kind or b.kind is kind:
            first = a if a.kind is kind else b
            return Val(kind, rank=a.rank or b.rank, origin=first.origin, deps=a.deps | b.deps)
    wrapped = _maybe_wrapped(a, b)
    if wrapped is not None:
        return wrapped
    # A rank-derived value beats a constant fallback for the non-distributed case.
    if a.rank != b.rank:
        return replace(a if a.rank else b, deps=a.deps | b.deps)
    if a.kind is Kind.OBJECT and b.kind is Kind.OBJECT:
        return Val(Kind.OBJECT, deps=a.deps | b.deps, tag=a.tag if a.tag == b.tag else None)
    return Val(Kind.UNIFORM, rank=a.rank or b.rank, deps=a.deps | b.deps)


def _maybe_wrapped(a: Val, b: Val) -> Val | None:
    """A model wrapped on one path only (`if args.distributed and not args.horovod: model = DDP(model)`)
    is the wrapped model in the launch configuration that takes that path, the only one where a
    one-rank forward can hang: it stays wrapped. A path that took `.module` out of a model
    (`model.module if hasattr(model, "module") else model`, or `if ...: model = model.module` on the
    wrapping condition) unwraps it on every path: that is what the idiom is for."""
    if UNWRAPPED in (a.tag, b.tag):
        return Val(Kind.OBJECT, deps=a.deps | b.deps, tag=UNWRAPPED)
    if (a.tag in WRAPPED) == (b.tag in WRAPPED):
        return None
    wrapped, other = (a, b) if a.tag in WRAPPED else (b, a)
    if other.tag is not None or other.kind not in (Kind.OBJECT, Kind.UNIFORM):
        return None
    # wrapped here, whatever the parameter held: this call site knows it
    return replace(wrapped, deps=frozenset(), partial=True)


def _worst(a: Kind | None, b: Kind | None) -> Kind | None:
    for kind in (Kind.DATA, Kind.RANK, Kind.UNIFORM):
        if kind in (a, b):
            return kind
    return None


def taint(value: Val, condition: Val) -> Val:
    """A value assigned under a divergent condition diverges with it (control dependence)."""
    if not condition.divergent or condition.weak:
        return value
    if value.null is not None:
        value = replace(value, null=_worst(value.null, condition.kind))
    if value.items is not None:
        value = replace(value, items=tuple(taint(item, condition) for item in value.items))
    if value.divergent:
        return value
    return Val(condition.kind, rank=condition.rank or value.rank, origin=condition.origin, deps=value.deps)
