"""DDP006 device-by-global-rank: a GPU chosen by the global rank instead of the local rank.

Global ranks run from 0 to world_size - 1 across all nodes; device ordinals run from 0 to the
number of GPUs on *this* node. On the second node of a 2 x 8 job the global ranks are 8..15,
and `torch.cuda.set_device(8)` fails with `CUDA error: invalid device ordinal`.

The first parameter of a function launched by `mp.spawn` is the process index on this node
(0..nprocs-1), a correct device ordinal whatever it is called: it is never reported.
"""

from __future__ import annotations

from collections.abc import Callable

from ddplint.analysis.origins import (
    GLOBAL,
    GLOBAL_RANK_ATTRS,
    GLOBAL_RANK_CALLS,
    GLOBAL_RANK_ENV,
    GLOBAL_RANK_HELPERS,
    LOCAL,
    Origin,
)
from ddplint.diagnostics import Applicability
from ddplint.model.catalogue import DDP_WRAPPERS
from ddplint.model.expressions import accelerator_set_device, bound_values
from ddplint.model.facts import ModuleFacts, Scope, child_nodes
from ddplint.model.names import dotted_name
from ddplint.rules.base import Context, Rule
from ddplint.syntax.lazycst import cst

# Calls whose first argument is a device.
SET_DEVICE = frozenset(
    {
        "torch.cuda.set_device",
        "torch.cuda.device",
        "torch.accelerator.set_device_index",
        "torch.accelerator.device_index",
    }
)
# PyTorch's multi-process test cases start `world_size` processes on one machine, each given
# its index as its rank (torch/testing/_internal/common_distributed.py): a rank is a device there.
_TESTING = "torch.testing._internal."
ONE_NODE_TESTS = frozenset(
    {
        f"{_TESTING}common_distributed.MultiProcessTestCase",
        f"{_TESTING}common_distributed.DistributedTestBase",
        f"{_TESTING}common_distributed.MultiProcContinuousTest",
        f"{_TESTING}common_distributed.MultiProcContinousTest",  # its spelling before torch 2.8
        f"{_TESTING}common_distributed.MultiThreadedTestCase",
        f"{_TESTING}common_fsdp.FSDPTest",
        f"{_TESTING}common_fsdp.FSDPTestContinuous",
        f"{_TESTING}common_fsdp.FSDPTestMultiThread",
        f"{_TESTING}distributed._tensor.common_dtensor.DTensorTestBase",
        f"{_TESTING}distributed._tensor.common_dtensor.DTensorContinuousTestBase",
        f"{_TESTING}distributed._tensor.common_dtensor.DTensorOpTestBase",
    }
)
# Keywords that take a device (or device ordinal) in any call.
DEVICE_KEYWORDS = ("device", "device_id", "output_device")
DEVICE_PREFIXES = ("cuda:",)


class DeviceByGlobalRank(Rule):
    code = "DDP006"
    # A global rank comes from one of these spellings (or from a module that imports one).
    triggers = frozenset({*GLOBAL_RANK_ENV, *GLOBAL_RANK_CALLS, *GLOBAL_RANK_HELPERS, *GLOBAL_RANK_ATTRS})
    name = "device-by-global-rank"
    summary = "GPU chosen by the global rank: on any node but the first, the device ordinal is out of range"
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if _one_node_world(facts):
            return
        for scope, sink, node in _sinks(facts):
            if scope.class_name is not None and ctx.project.inherits(facts, scope.class_name, ONE_NODE_TESTS):
                continue
            origin = ctx.origins.of(facts, scope, node)
            if origin is None or origin.kind != GLOBAL:
                continue
            self._report(ctx, scope, sink, node, origin)

    def _report(
        self, ctx: Context, scope: Scope, sink: Callable[[], str], node: cst.BaseExpression, origin: Origin
    ) -> None:
        facts = ctx.facts
        spelled = facts.code(node)
        source = "" if spelled == origin.source else f" (`{origin.source}`, {origin.where})"
        message = (
            f"{sink()} selects the GPU by the global rank `{spelled}`{source}: on every node but the "
            f"first, global ranks exceed the node's device ordinals (rank 8 on an 8-GPU node: "
            f"`CUDA error: invalid device ordinal`)"
        )
        local = _local_rank_in_scope(ctx, scope, node)
        fix = None
        help = 'use the local rank (`int(os.environ["LOCAL_RANK"])` under torchrun)'
        if local is not None:
            fix = ctx.fix(f"Use the local rank `{local}`", ctx.replace(node, local))
            help = f"use the local rank `{local}`"
        ctx.report(node, message, fix=fix, help=help)


def _one_node_world(facts: ModuleFacts) -> bool:
    """Whether the module starts a process group as large as this machine's device count
    (`init_process_group(world_size=torch.cuda.device_count())`): its ranks are this node's
    devices."""
    for call in facts.all_calls():
        if call.name != "torch.distributed.init_process_group":
            continue
        for arg in call.node.args:
            value = arg.value
            if arg.keyword is not None and arg.keyword.value == "world_size" and isinstance(value, cst.Call):
                func = value.func
                if isinstance(func, (cst.Attribute, cst.Name)) and (dotted_name(func) or "").endswith(
                    "device_count"
                ):
                    return True
    return False


def _sinks(facts: ModuleFacts):
    """(scope, description, expression used as a device ordinal) for every device choice; the
    description is a function, called only for the few that are reported."""
    for call in facts.all_calls():
        node = call.node
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        name = call.name or ""
        if (name in SET_DEVICE or accelerator_set_device(facts, node)) and positional:
            # `get_accelerator().set_device(rank)` has no dotted name: the method names it
            method = name.rsplit(".", 1)[-1] or node.func.attr.value
            yield call.scope, _spelled(facts, f"`{method}({{}})`", positional[0]), positional[0]
        elif name == "torch.device":
            if len(positional) == 2 and _string_value(positional[0]) == "cuda":
                yield call.scope, _spelled(facts, "`torch.device({}, {})`", *positional), positional[1]
            elif len(positional) == 1 and not isinstance(
                positional[0], (cst.SimpleString, cst.FormattedString)
            ):
                yield call.scope, _spelled(facts, "`torch.device({})`", positional[0]), positional[0]
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cuda") and positional:
            yield (
                call.scope,
                _spelled(facts, f"`.{node.func.attr.value}({{}})`", positional[0]),
                positional[0],
            )
        for arg in node.args:
            if arg.keyword is None:
                continue
            keyword = arg.keyword.value
            if (
                keyword == "device_ids"
                and (name in DDP_WRAPPERS or name == "torch.distributed.barrier")
                and isinstance(arg.value, (cst.List, cst.Tuple))
            ):
                for element in arg.value.elements:
                    yield call.scope, _spelled(facts, "`device_ids={}`", arg.value), element.value
            elif keyword in DEVICE_KEYWORDS:
                yield call.scope, _spelled(facts, f"`{keyword}={{}}`", arg.value), arg.value
    if facts.builds_device_string:  # not `"cuda:0"` in a docstring
        for scope in facts.scopes:
            for node in _own_expressions(scope):
                yield from _device_strings(facts, scope, node)


def _device_strings(facts: ModuleFacts, scope: Scope, node: cst.CSTNode):
    """`f"cuda:{rank}"`, `"cuda:%d" % rank`, `"cuda:{}".format(rank)`, `"cuda:" + str(rank)`."""
    if isinstance(node, cst.FormattedString):
        parts = node.parts
        if (
            len(parts) == 2
            and isinstance(parts[0], cst.FormattedStringText)
            and parts[0].value.endswith(DEVICE_PREFIXES)
            and isinstance(parts[1], cst.FormattedStringExpression)
        ):
            yield scope, _spelled(facts, "`{}`", node), parts[1].expression
    elif isinstance(node, cst.BinaryOperation):
        text = _string_value(node.left)
        if text is None:
            return
        percent = isinstance(node.operator, cst.Modulo) and text in ("cuda:%d", "cuda:%s", "cuda:%i")
        if percent or (isinstance(node.operator, cst.Add) and text == "cuda:"):
            yield scope, _spelled(facts, "`{}`", node), node.right
    elif isinstance(node, cst.Call):
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "format"
            and _string_value(func.value) in ("cuda:{}", "cuda:{0}")
            and len(node.args) == 1
            and node.args[0].keyword is None
        ):
            yield scope, _spelled(facts, "`{}`", node), node.args[0].value


def _spelled(facts: ModuleFacts, template: str, *nodes: cst.CSTNode) -> Callable[[], str]:
    """`template` with the code of `nodes` in its `{}`, generated when asked for."""
    return lambda: template.format(*(facts.text_of(node) for node in nodes))


def _own_expressions(scope: Scope):
    """Every node of a scope's own code (not of functions or classes nested in it)."""
    root = scope.node
    stack = list(root.body.body) if isinstance(root, cst.FunctionDef) else list(root.body)
    if isinstance(root, cst.FunctionDef) and not isinstance(root.body, cst.IndentedBlock):
        stack = list(root.body.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        yield node
        stack.extend(child_nodes(node))


def _string_value(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _local_rank_in_scope(ctx: Context, scope: Scope, used: cst.BaseExpression) -> str | None:
    """A plain name holding the local rank, bound before `used` (or in an enclosing scope)."""
    facts = ctx.facts
    start = facts.span(used)[0]
    finder = ctx.origins
    current: Scope | None = scope
    while current is not None:
        for name in sorted(current.params):
            if name in scope.params and current is not scope:
                continue
            found = finder.parameter(facts, current, name)
            if found is not None and found.kind == LOCAL:
                return name
        for name, values in sorted(current.assignments.items()):
            if "." in name or (current is not scope and name in scope.params):
                continue
            if current is scope and not all(facts.span(v)[0] < start for v in values):
                continue
            if bound_values(facts, scope, name) is not values:
                continue  # shadowed by an inner binding
            found = _origin_of_values(ctx, facts, current, values)
            if found is not None and found.kind == LOCAL:
                return name
        current = current.parent
    return None


def _origin_of_values(ctx: Context, facts: ModuleFacts, scope: Scope, values) -> Origin | None:
    finder = ctx.origins
    found = [finder.of(facts, scope, v) for v in values]
    if not found or any(o is None for o in found) or len({o.kind for o in found}) != 1:
        return None
    return found[0]
