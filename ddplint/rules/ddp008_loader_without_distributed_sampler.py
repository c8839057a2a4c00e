"""DDP008 loader-without-distributed-sampler: every rank trains on the whole dataset.

`DataLoader(dataset, shuffle=True)` builds a `RandomSampler` over all of `dataset`. Nothing in
DDP splits the data: each process iterates every sample, in its own random order. An epoch is
world_size epochs of duplicated work (and each optimizer step averages gradients of batches
drawn from the same set). Nothing hangs: ranks run the same number of steps.

The loader is followed from where it is built: into the functions that receive it, out of the
functions that return it, and through `self.` attributes; it is reported when a loop iterates
it and trains (`backward()`, an optimizer step, or a call that reaches a collective). It is not
reported when a framework shards it (`accelerator.prepare`, Fabric's `setup_dataloaders`, a
Lightning `Trainer`), when the dataset is iterable or already sharded by rank, or when the
loader is built on a path that tests whether the run is distributed.
"""

from __future__ import annotations

from ddplint.model.expressions import Nullness, bound_values, literal_bool, nullness, returned_values
from ddplint.model.facts import ModuleFacts, Scope, child_nodes
from ddplint.model.names import dotted_name
from ddplint.rules.base import Context, Rule
from ddplint.syntax.lazycst import cst

DATALOADER = "torch.utils.data.DataLoader"
INIT_PROCESS_GROUP = "torch.distributed.init_process_group"
# Library methods that take a loader and shard it for the processes (accelerate, Fabric) or hand
# it to a Lightning Trainer, which installs a DistributedSampler itself.
SHARDING_METHODS = frozenset(
    {"prepare", "prepare_data_loader", "setup_dataloaders", "fit", "validate", "test", "predict"}
)
ITERABLE_BASES = frozenset({"IterableDataset", "IterDataPipe", "WebDataset", "DataPipeline"})
ITERABLE_CALLS = frozenset({"webdataset.WebDataset", "webdataset.DataPipeline", "wds.WebDataset"})
# Words in a condition that ask whether the run is distributed.
DISTRIBUTED_WORDS = (
    "distributed",
    "is_initialized",
    "world_size",
    "ddp",
    "local_rank",
    "rank",
    "gpus",
    "multi",
)
SHARD_WORDS = ("rank", "world_size", "num_replicas", "shard", "split_dataset_by_node", "num_shards")
MAX_DEPTH = 3


class LoaderWithoutDistributedSampler(Rule):
    code = "DDP008"
    triggers = frozenset({"torch.utils.data.DataLoader"})
    name = "loader-without-distributed-sampler"
    summary = (
        "a shuffling training `DataLoader` with no distributed sampler: every rank reads the whole dataset"
    )

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if not self._distributed(ctx, facts):
            return
        for call in facts.all_calls():
            if call.name != DATALOADER:
                continue
            bound = call.bound()
            if literal_bool(bound.get("shuffle")) is not True:
                continue
            if bound.may_hide("sampler") or bound.may_hide("batch_sampler"):
                continue
            if any(
                bound.get(option) is not None
                and nullness(facts, call.scope, bound.get(option)) is not Nullness.NONE
                for option in ("sampler", "batch_sampler")
            ):
                continue
            dataset = bound.get("dataset")
            if dataset is None or _iterable_or_sharded(ctx, facts, call.scope, dataset, 0):
                continue
            if _made_in_the_step(facts, call, dataset):
                continue
            if _under_distributed_test(facts, call.scope, call.node):
                continue
            found = _training_use(ctx, facts, call.scope, call.node, call.target)
            if found is None:
                continue
            loop_facts, loop = found
            where = loop_facts.place_of(loop)
            ctx.report(
                call.node,
                f"`DataLoader(shuffle=True)` without a `DistributedSampler` in a distributed program, "
                f"iterated by the training loop at {where}: every rank trains on the whole dataset in "
                f"its own order, so one epoch is world-size epochs of duplicated work",
                help=(
                    "pass `sampler=DistributedSampler(dataset)` instead of `shuffle=True` and call "
                    "`sampler.set_epoch(epoch)` at the start of every epoch"
                ),
            )

    def _distributed(self, ctx: Context, facts: ModuleFacts) -> bool:
        if ctx.divergence.distributed(facts):
            return True
        return any(call.name == INIT_PROCESS_GROUP for call in facts.all_calls())


def _made_in_the_step(facts: ModuleFacts, call, dataset: cst.BaseExpression) -> bool:
    """A loader made inside a loop over a dataset built there too (`TensorDataset(obs, returns)`
    from this rank's rollouts): its data is the rank's own already, not a shared set to split."""
    if call.loop is None:
        return False
    built = (
        [dataset]
        if isinstance(dataset, cst.Call)
        else list(bound_values(facts, call.scope, dotted_name(dataset) or "") or [])
    )
    return bool(built) and all(
        isinstance(value, cst.Call) and _assigned_in_loop(call, value) for value in built
    )


def _assigned_in_loop(call, value: cst.Call) -> bool:
    """`value` is built in the loop around `call` (it is one of the loop's calls)."""
    return any(
        site.node is value and site.loop is not None and call.loop.encloses(site.loop)
        for site in call.scope.calls
    )


def _training_use(ctx: Context, facts: ModuleFacts, scope: Scope, node: cst.Call, target: str | None):
    """(module, loop) of a training loop that iterates the loader, or None (also when sharded)."""
    todo: list[tuple[ModuleFacts, Scope, str, int]] = []
    if target is not None:
        todo.append((facts, scope, target, 0))
    if any(v is node for v in returned_values(scope)) or (
        target is not None and any(dotted_name(v) == target for v in returned_values(scope))
    ):
        todo.extend(_receivers(ctx, scope, 1))
    for call in scope.calls:  # `trainer.fit(DataLoader(...))`: passed on without a name
        for arg in call.node.args:
            if arg.value is not node:
                continue
            resolved = ctx.project.resolve_call(facts, call)
            if resolved is None:
                if call.method in SHARDING_METHODS:
                    return None
                continue
            param = _parameter_for(call.node, arg, resolved[1])
            if param is not None:
                todo.append((resolved[0], resolved[1], param, 1))
    seen: set[tuple[int, str]] = set()
    found = None
    while todo:
        facts, scope, name, depth = todo.pop()
        if (id(scope), name) in seen or depth > MAX_DEPTH:
            continue
        seen.add((id(scope), name))
        scopes = [scope]
        if name.startswith("self.") and scope.class_name is not None:
            scopes = [s for s in facts.scopes if s.class_name == scope.class_name]
        for current in scopes:
            for call in current.calls:
                args = [a for a in call.node.args if _mentions(a.value, name)]
                if not args:
                    continue
                resolved = ctx.project.resolve_call(facts, call)
                if resolved is None:
                    if call.method in SHARDING_METHODS:
                        return None  # a framework's, not one of the project's own functions
                    continue
                callee_facts, callee = resolved
                for arg in args:
                    param = _parameter_for(call.node, arg, callee)
                    if param is not None:
                        todo.append((callee_facts, callee, param, depth + 1))
            for loop in current.loops:
                iterated = found is None and loop.iter is not None and _iterates(loop.iter, name)
                if iterated and _trains(ctx, facts, current, loop):
                    found = (facts, loop.node)
            if name in (dotted_name(v) for v in returned_values(current)):
                todo.extend(_receivers(ctx, current, depth + 1))
    return found


def _receivers(ctx: Context, scope: Scope, depth: int):
    """(module, scope, name) where a caller keeps what `scope` returns: `loader = build(...)`."""
    out = []
    for caller_facts, call in ctx.origins.callers(scope):
        if call.target is not None:
            out.append((caller_facts, call.scope, call.target, depth))
    return out


def _parameter_for(call: cst.Call, arg: cst.Arg, callee: Scope) -> str | None:
    if arg.star:
        return None
    if arg.keyword is not None:
        return arg.keyword.value if arg.keyword.value in callee.params else None
    index = [a for a in call.args if a.keyword is None].index(arg)
    params = (
        callee.params[1:]
        if callee.class_name is not None and callee.params[:1] == ["self"]
        else callee.params
    )
    return params[index] if index < len(params) else None


def _mentions(node: cst.CSTNode, name: str) -> bool:
    if isinstance(node, cst.BaseExpression) and dotted_name(node) == name:
        return True
    return any(_mentions(child, name) for child in child_nodes(node))


def _iterates(node: cst.BaseExpression, name: str) -> bool:
    """`for b in loader`, `enumerate(loader)`, `tqdm(loader)`, `zip(loader, ...)`; not `len(loader)`."""
    if dotted_name(node) == name:
        return True
    if isinstance(node, cst.Call):
        func = dotted_name(node.func) or ""
        if func.rsplit(".", 1)[-1] in ("len", "range"):
            return False
        return any(_iterates(arg.value, name) for arg in node.args)
    return False


def _trains(ctx: Context, facts: ModuleFacts, scope: Scope, loop) -> bool:
    analysis = ctx.divergence
    for call in scope.calls:
        if call.loop is None or not loop.encloses(call.loop):
            continue
        method = call.method or ""
        receiver = (call.receiver or "").lower()
        if method == "backward" or (method == "step" and ("optim" in receiver or "engine" in receiver)):
            return True
        target = ctx.project.resolve_call(facts, call)
        if target is not None and _callee_trains(ctx, analysis, target[0], target[1], 0):
            return True
    return False


def _callee_trains(ctx: Context, analysis, facts: ModuleFacts, scope: Scope, depth: int) -> bool:
    """A called function that runs a backward pass or an optimizer step, a few calls down."""
    if depth > 2:
        return False
    for call in scope.calls:
        method = call.method or ""
        receiver = (call.receiver or "").lower()
        if method == "backward" or (method == "step" and "optim" in receiver):
            return True
        target = ctx.project.resolve_call(facts, call)
        if target is not None and _callee_trains(ctx, analysis, target[0], target[1], depth + 1):
            return True
    return False


def _iterable_or_sharded(
    ctx: Context, facts: ModuleFacts, scope: Scope, node: cst.BaseExpression, depth: int
) -> bool:
    """An iterable (streaming) dataset, or one built from a per-rank shard."""
    if depth > 4:
        return False
    text = facts.code(node)
    if any(word in text for word in SHARD_WORDS):
        return True
    if isinstance(node, cst.Call):
        called = dotted_name(node.func)
        if called is not None:
            qualified = facts.imports.resolve_dotted(called)
            if qualified in ITERABLE_CALLS or called.rsplit(".", 1)[-1] in ("to_iterable_dataset", "shard"):
                return True
            if qualified.endswith("load_dataset") and any(
                a.keyword is not None and a.keyword.value == "streaming" and literal_bool(a.value) is True
                for a in node.args
            ):
                return True
            if _iterable_class(ctx, facts, qualified, 0):
                return True
        return any(
            _iterable_or_sharded(ctx, facts, scope, a.value, depth + 1) for a in node.args if not a.star
        ) or (
            isinstance(node.func, cst.Attribute)
            and _iterable_or_sharded(ctx, facts, scope, node.func.value, depth + 1)
        )
    name = dotted_name(node)
    if name is not None:
        values = facts.values_of(scope, name)
        return any(_iterable_or_sharded(ctx, facts, scope, v, depth + 1) for v in values if v is not node)
    return False


def _iterable_class(ctx: Context, facts: ModuleFacts, qualified: str, depth: int) -> bool:
    """Does the class named `qualified` (ours, or a library's) derive from `IterableDataset`?"""
    if depth > 4:
        return False
    if qualified.rsplit(".", 1)[-1] in ITERABLE_BASES:
        return True
    module, class_name = facts, qualified
    if qualified not in facts.class_bases:
        head, _, class_name = qualified.rpartition(".")
        module = ctx.project.module(head, facts)
        if module is None:
            return False
    return any(
        base_name is not None and _iterable_class(ctx, module, base_name, depth + 1)
        for base_name in module.class_bases.get(class_name, ())
    )


def _under_distributed_test(facts: ModuleFacts, scope: Scope, call: cst.Call) -> bool:
    """Is the loader built under `if`/`x if c else y` whose test asks whether the run is distributed?"""
    start, end = facts.span(call)
    root = scope.node
    stack: list[cst.CSTNode] = list(root.body.body) if isinstance(root, cst.FunctionDef) else list(root.body)
    while stack:
        node = stack.pop()
        span = facts.spans.get(node)
        if span is None or not (span[0] <= start and end <= span[1]):
            continue
        test = node.test if isinstance(node, (cst.If, cst.IfExp, cst.While)) else None
        if test is not None and not (facts.span(test)[0] <= start < facts.span(test)[1]):
            text = facts.code(test).lower()
            if any(word in text for word in DISTRIBUTED_WORDS):
                return True
        stack.extend(child_nodes(node))
    return False
