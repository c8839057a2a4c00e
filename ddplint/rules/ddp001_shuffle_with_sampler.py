"""DDP001 shuffle-with-sampler: `DataLoader(shuffle=True, sampler=...)` raises at construction."""

from __future__ import annotations

from ddplint.diagnostics import Applicability
from ddplint.model.expressions import Nullness, bound_values, is_none, literal_bool, nullness
from ddplint.model.facts import Scope
from ddplint.model.names import dotted_name
from ddplint.model.signatures import BoundArgs
from ddplint.rules.base import Context, Rule
from ddplint.syntax.lazycst import cst

DATALOADER = "torch.utils.data.DataLoader"
# What `DataLoader.__init__` raises, word for word (torch 2.13).
_EXCLUSIVE = {
    "sampler": "sampler option is mutually exclusive with shuffle",
    "batch_sampler": (
        "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
    ),
}


class ShuffleWithSampler(Rule):
    code = "DDP001"
    name = "shuffle-with-sampler"
    summary = "`DataLoader` given `shuffle=True` together with a sampler or batch sampler"
    fix_applicability = Applicability.SAFE
    triggers = frozenset({DATALOADER})

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.all_calls():
            if call.name != DATALOADER:
                continue
            bound = call.bound()
            shuffle, certain = shuffle_given(ctx, call.scope, call.node, bound)
            for option in ("sampler", "batch_sampler"):
                value = bound.get(option)
                if value is None:
                    continue
                state = nullness(facts, call.scope, value)
                if state is Nullness.NONE:
                    continue
                if shuffle is not None and (certain or state is Nullness.NEVER):
                    self._shuffle(ctx, call.node, shuffle, option, value, state, certain)
                    break
            batch_sampler = bound.get("batch_sampler")
            if batch_sampler is not None and nullness(facts, call.scope, batch_sampler) is not Nullness.NONE:
                self._batch_sampler_conflicts(ctx, call.scope, bound, batch_sampler)

    def _shuffle(
        self,
        ctx: Context,
        call: cst.Call,
        shuffle: cst.Arg,
        option: str,
        value: cst.BaseExpression,
        state: Nullness,
        certain: bool,
    ) -> None:
        spelled = ctx.facts.code(value)
        when = "" if state is Nullness.NEVER else f" whenever `{spelled}` is not None"
        given = _spelled_shuffle(ctx, shuffle)
        if not certain:
            when = f" whenever `{ctx.facts.code(shuffle.value)}` is true (a setting that may well be)"
        message = (
            f"`DataLoader` is given {given} and `{option}={spelled}`: it raises "
            f"`ValueError: {_EXCLUSIVE[option]}` at construction{when}"
        )
        help = "the sampler decides the order (`DistributedSampler` shuffles by default)"
        fix = None
        if not certain or shuffle.star:
            help += "; pass no `shuffle` when there is a sampler"
        elif state is Nullness.NEVER:
            if shuffle.keyword is not None:
                fix = ctx.fix(f"Remove {given}", ctx.remove_arg(call, shuffle))
            else:  # positional: removing it would shift the sampler into its place
                fix = ctx.fix("Pass `False` for `shuffle`", ctx.replace(shuffle.value, "False"))
            help += "; " + fix.message[0].lower() + fix.message[1:]
        elif dotted_name(value) is not None:
            # A sampler that is None off the distributed path: shuffle only then (torchvision's idiom).
            fix = ctx.fix(
                f"Shuffle only when there is no sampler: `shuffle=({spelled} is None)`",
                ctx.replace(shuffle.value, f"({spelled} is None)"),
            )
            help += f"; pass `shuffle=({spelled} is None)`"
        ctx.report(shuffle, message, fix=fix, help=help)

    def _batch_sampler_conflicts(
        self, ctx: Context, scope: Scope, bound: BoundArgs, batch_sampler: cst.BaseExpression
    ) -> None:
        # Only literals: a `batch_size=batch_size` passed through may well be 1.
        when = ""
        if nullness(ctx.facts, scope, batch_sampler) is not Nullness.NEVER:
            when = f" whenever `{ctx.facts.code(batch_sampler)}` is not None"
        for option in ("batch_size", "drop_last"):
            arg = bound.arg(option)
            if arg is None:
                continue
            value = arg.value
            if option == "batch_size" and not (
                (isinstance(value, cst.Integer) and value.value != "1") or is_none(value)
            ):
                continue
            if option == "drop_last" and literal_bool(value) is not True:
                continue
            spelled = ctx.facts.code(value)
            ctx.report(
                arg,
                f"`DataLoader` is given `batch_sampler=` and `{option}={spelled}`: it raises "
                f"`ValueError: {_EXCLUSIVE['batch_sampler']}` at construction{when}",
                help=f"set `{option}` on the batch sampler itself and remove it here",
            )


def shuffle_given(
    ctx: Context, scope: Scope, call: cst.Call, bound: BoundArgs
) -> tuple[cst.Arg | None, bool]:
    """The argument that passes `shuffle`, and whether it is surely true: the literal, a name
    only ever bound to it, or `**kwargs` built with `shuffle=True`. A setting read from a
    configuration (`opt["shuffle"]`, `args.shuffle`) may be true: returned, not sure."""
    arg = bound.arg("shuffle")
    if arg is not None:
        value = arg.value
        if literal_bool(value) is True:
            return arg, True
        name = dotted_name(value)
        if isinstance(value, cst.Name) and name is not None:
            values = bound_values(ctx.facts, scope, name)
            if values and all(literal_bool(v) is True for v in values):
                return arg, True
        if isinstance(value, cst.Subscript) or (isinstance(value, cst.Attribute) and name is not None):
            return arg, False
        return None, False
    for star in (a for a in call.args if a.star == "**"):
        name = dotted_name(star.value)
        built = (bound_values(ctx.facts, scope, name) or []) if name is not None else []
        if any(_builds_shuffle_true(value) for value in built):
            return star, True
    return None, False


def _builds_shuffle_true(node: cst.BaseExpression) -> bool:
    """`{"shuffle": True, ...}` or `dict(shuffle=True, ...)`."""
    if isinstance(node, cst.Dict):
        return any(
            isinstance(e, cst.DictElement)
            and isinstance(e.key, cst.SimpleString)
            and e.key.evaluated_value == "shuffle"
            and literal_bool(e.value) is True
            for e in node.elements
        )
    if isinstance(node, cst.Call) and dotted_name(node.func) == "dict":
        return any(
            a.keyword is not None and a.keyword.value == "shuffle" and literal_bool(a.value) is True
            for a in node.args
        )
    return False


def _spelled_shuffle(ctx: Context, arg: cst.Arg) -> str:
    if arg.star:
        return f"`shuffle=True` through `**{ctx.facts.code(arg.value)}`"
    if literal_bool(arg.value) is True:
        return "`shuffle=True`"
    return f"`shuffle={ctx.facts.code(arg.value)}`"
