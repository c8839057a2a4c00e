"""How findings name collectives in messages: labels of operations and the two ranks' timelines."""

from __future__ import annotations

from ddplint.analysis.divergence.seq import Op


def timeline(a, b, i: int, j: int) -> list[str]:
    """The two classes' collectives side by side, up to the first difference."""

    def ops(tokens) -> list[Op]:
        return [t.item for t in tokens if isinstance(t.item, Op) and isinstance(t.key, str)]

    rows = []
    for label, tokens, index in (("rank 0:      ", a, i), ("other ranks: ", b, j)):
        before, after = ops(tokens[:index])[-4:], ops(tokens[index:])[:1]
        shown = " · ".join(op_label(op, short=True) for op in before + after) or "(no collective)"
        mark = "   ← waits here forever" if after else ""
        rows.append(f"{label} {shown}{mark}")
    return rows


def ops_label(ops: list[Op]) -> str:
    """The first two collectives by name, and how many more."""
    unique: dict[int, Op] = {}
    for op in ops:
        unique.setdefault(id(op.origin[1]), op)
    ops = list(unique.values())
    if not ops:
        return "a collective"
    text = op_label(ops[0])
    if len(ops) > 1:
        text += f" and {op_label(ops[1])}"
    if len(ops) > 2:
        text += f" (and {len(ops) - 2} more)"
    return text


def op_label(op: Op, short: bool = False) -> str:
    """ "`dist.all_reduce` (metrics.py:7, via `evaluate` → `reduce_mean`)"."""
    facts, node = op.origin
    where = facts.place_of(node)
    if short:
        return f"{_short_name(op)} ({where})"
    via = f", via {' → '.join(f'`{v}`' for v in op.via)}" if op.via else ""
    return f"`{_display(op)}` ({_explain(op)}{where}{via})"


def _display(op: Op) -> str:
    if op.name == "backward":
        return f"{op.label}()"
    if op.name == "ddp.forward":
        return f"{op.label}(...)"
    return op.label


def _explain(op: Op) -> str:
    if op.name == "backward":
        return "DDP gradient all-reduce, "
    if op.name == "ddp.forward":
        return "forward of the DDP-wrapped model, "
    return ""


def _short_name(op: Op) -> str:
    if op.name == "backward":
        return "backward"
    if op.name == "ddp.forward":
        return "DDP forward"
    return op.label.rsplit(".", 1)[-1]
