"""DDP012 collective-before-set-device: an NCCL collective on GPU 0 in every process.

A collective whose tensor torch allocates itself runs on the *current* CUDA device: `barrier()`
without `device_ids` (torch 2.13, distributed_c10d.py: "Use the current device set by the user.
If user did not set any, this may use default device 0, causing issues like hang or all
processes creating context on device 0"), and the object collectives, which move the pickled
object to `"cuda"` ("the device used is given by torch.cuda.current_device()"). Before
`torch.cuda.set_device(local_rank)` every process's current device is GPU 0, so every rank of a
node works on GPU 0: NCCL refuses two ranks on one GPU ("Duplicate GPU detected"), or the job
hangs, or GPU 0 holds every process's context. `init_process_group(device_id=...)` binds the
device instead, and `CUDA_VISIBLE_DEVICES` set per process makes GPU 0 the right one.

The order is read through calls to project functions (`setup()` that initialises and waits in a
barrier, called before `main()` picks its GPU); the finding is reported in the function whose own
statements put the collective before the `set_device` that comes too late.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ddplint.diagnostics import Applicability, Edit
from ddplint.model.expressions import accelerator_set_device, bound_values, is_none, names_in
from ddplint.model.facts import CallSite, ModuleFacts, Scope, child_nodes
from ddplint.model.names import dotted_name
from ddplint.model.signatures import bind
from ddplint.rules.base import Context, Rule
from ddplint.syntax.lazycst import cst

INIT = "torch.distributed.init_process_group"
INIT_PARAMS = ("backend", "init_method", "timeout", "world_size", "rank", "store", "group_name", "pg_options")
SET_DEVICE = frozenset(
    {"torch.cuda.set_device", "torch.accelerator.set_device_index", "torch.accelerator.set_device_idx"}
)
# Context managers that make a device current for their block.
DEVICE_CONTEXTS = frozenset({"torch.cuda.device", "torch.accelerator.device_index"})


@dataclass(frozen=True)
class ImplicitDevice:
    """A collective that allocates its own tensor on the current device (torch 2.13 signatures)."""

    params: tuple[str, ...]
    device: str | None  # the parameter that chooses the device instead, if any


COLLECTIVES = {
    "torch.distributed.barrier": ImplicitDevice(("group", "async_op", "device_ids", "timeout"), "device_ids"),
    "torch.distributed.all_gather_object": ImplicitDevice(("object_list", "obj", "group"), None),
    "torch.distributed.gather_object": ImplicitDevice(
        ("obj", "object_gather_list", "dst", "group", "group_dst"), None
    ),
    "torch.distributed.broadcast_object_list": ImplicitDevice(
        ("object_list", "src", "group", "device", "group_src"), "device"
    ),
    "torch.distributed.scatter_object_list": ImplicitDevice(
        ("scatter_object_output_list", "scatter_object_input_list", "src", "group", "group_src"), None
    ),
}
WORLD_GROUPS = frozenset({"torch.distributed.group.WORLD", "torch.distributed.GroupMember.WORLD"})
# What a process does to pin itself to one GPU before torch sees any (then GPU 0 is its own).
VISIBLE_DEVICES_WRITE = re.compile(
    r"""\[\s*['"]CUDA_VISIBLE_DEVICES['"]\s*\]\s*=(?!=)"""
    r"""|(?:setdefault|putenv)\(\s*['"]CUDA_VISIBLE_DEVICES['"]"""
    r"""|['"]CUDA_VISIBLE_DEVICES['"]\s*:"""
)
# Calls a moved `set_device` argument may make before the process group exists.
PLAIN_CALLS = frozenset({"int", "str", "os.environ.get", "os.getenv", "torch.device"})
MAX_DEPTH = 8  # calls followed from a function
MAX_EVENTS = 200  # events kept for one function: the first ones decide

INIT_KIND, COLLECTIVE, SET, SET_ZERO = "init", "collective", "set", "set-zero"


@dataclass(frozen=True, eq=False)
class Event:
    """An init, a collective or a device choice, as met when a function runs."""

    kind: str
    facts: ModuleFacts  # where `call` is
    call: CallSite
    # The calls that lead to it, from the function being read down to `call`'s function.
    path: tuple[tuple[ModuleFacts, CallSite], ...] = ()
    # The `if` arms it sits in: (id of the `if`, arm); two events in different arms of one `if`
    # never both run.
    arms: frozenset[tuple[int, int]] = frozenset()
    in_device_block: bool = False  # within `with torch.cuda.device(...):`

    @property
    def site(self) -> cst.Call:
        """The call in the function being read that performs or reaches it."""
        return self.path[0][1].node if self.path else self.call.node

    def excludes(self, other: Event) -> bool:
        mine = dict(self.arms)
        return any(node in mine and mine[node] != arm for node, arm in other.arms)


class CollectiveBeforeSetDevice(Rule):
    code = "DDP012"
    triggers = frozenset({INIT})
    name = "collective-before-set-device"
    summary = (
        "NCCL collective before `torch.cuda.set_device`: every rank runs it on GPU 0 (hang, "
        "`Duplicate GPU detected`, memory on GPU 0)"
    )
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: Context) -> None:
        order = ctx.project.derived("DDP012", lambda: _Order(ctx.project))
        reported: set[int] = set()
        for scope in ctx.facts.scopes:
            if order.reach(ctx.facts, scope) != {INIT_KIND, COLLECTIVE, SET}:
                continue
            found = _first_misordered(order.events(ctx.facts, scope))
            if found is None or id(found[1].site) in reported:
                continue
            reported.add(id(found[1].site))
            _report(ctx, scope, *found)


# What most functions reach: one object for all (each empty frozenset is a new one of 216 bytes,
# and a large project has tens of thousands of functions).
_NO_KINDS: frozenset[str] = frozenset()


class _Order:
    """The inits, collectives and device choices each function runs, in order, through calls."""

    # Kinds by function; `_events` holds ids of `if` nodes (see Project.extent).
    NODE_FREE = frozenset({"_reach"})

    def __init__(self, project) -> None:
        self.project = project
        self._reach: dict[int, frozenset[str]] = {}
        self._events: dict[int, tuple[Event, ...]] = {}

    def reach(self, facts: ModuleFacts, scope: Scope, depth: int = 0) -> frozenset[str]:
        """The kinds of event running `scope` may meet (names only: cheap)."""
        known = self._reach.get(id(scope))
        if known is not None:
            return known
        self._reach[id(scope)] = _NO_KINDS  # a cycle adds nothing
        kinds: set[str] = set()
        for call in scope.calls:
            kind = _kind(facts, call)
            if kind is not None:
                kinds.add(SET if kind == SET_ZERO else kind)
            elif depth < MAX_DEPTH:
                target = self.project.resolve_call(facts, call)
                if target is not None:
                    kinds |= self.reach(target[0], target[1], depth + 1)
        result = frozenset(kinds) if kinds else _NO_KINDS
        self._reach[id(scope)] = result
        return result

    def events(self, facts: ModuleFacts, scope: Scope, depth: int = 0) -> tuple[Event, ...]:
        known = self._events.get(id(scope))
        if known is not None:
            return known
        self._events[id(scope)] = ()  # recursion: cut
        calls = {id(call.node): call for call in scope.calls}
        out: list[Event] = []
        for node, arms, in_block in _calls_in_order(scope):
            call = calls.get(id(node))
            if call is None:
                continue
            kind = _kind(facts, call)
            if kind is not None:
                out.append(Event(kind, facts, call, (), arms, in_block))
            elif depth < MAX_DEPTH:
                target = self.project.resolve_call(facts, call)
                if target is None or not self.reach(*target):
                    continue
                for event in self.events(target[0], target[1], depth + 1):
                    out.append(
                        replace(
                            event,
                            path=((facts, call), *event.path),
                            arms=arms | event.arms,
                            in_device_block=in_block or event.in_device_block,
                        )
                    )
            if len(out) >= MAX_EVENTS:
                break
        result = tuple(out[:MAX_EVENTS])
        self._events[id(scope)] = result
        return result


def _kind(facts: ModuleFacts, call: CallSite) -> str | None:
    name = call.name
    if name == INIT:
        return INIT_KIND
    if name in COLLECTIVES:
        return COLLECTIVE if _implicit_device(facts, call) else None
    # (`spells_accelerator` first: most modules' calls are read here by name only.)
    if name in SET_DEVICE or (facts.spells_accelerator and accelerator_set_device(facts, call.node)):
        args = [a for a in call.node.args if a.keyword is None and not a.star]
        if not args:
            return None
        value = args[0].value
        return SET_ZERO if isinstance(value, cst.Integer) and value.value == "0" else SET
    return None


def _implicit_device(facts: ModuleFacts, call: CallSite) -> bool:
    """The collective picks the current device: no device argument, on the default group."""
    spec = COLLECTIVES[call.name or ""]
    bound = bind(call.node, spec.params)
    if bound.opaque or (spec.device is not None and spec.device in bound.args):
        return False
    group = bound.get("group")
    return group is None or is_none(group) or facts.qualname(group) in WORLD_GROUPS


def _calls_in_order(scope: Scope):
    """(call, if-arms, within a device block) for the scope's own calls, in the order they run
    on a first pass (a call before the calls in its arguments); nested functions are skipped."""
    root = scope.node
    body = root.body.body if isinstance(root, cst.FunctionDef) else root.body
    stack: list[tuple[cst.CSTNode, frozenset, bool]] = [(node, frozenset(), False) for node in reversed(body)]
    while stack:
        node, arms, in_block = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Call):
            yield node, arms, in_block
        children: list[tuple[cst.CSTNode, frozenset, bool]]
        if isinstance(node, cst.If):
            children = [(node.test, arms, in_block), (node.body, arms | {(id(node), 0)}, in_block)]
            if node.orelse is not None:
                children.append((node.orelse, arms | {(id(node), 1)}, in_block))
        elif isinstance(node, cst.With):
            pinned = in_block or any(
                isinstance(item.item, cst.Call) and _qualified(scope, item.item) in DEVICE_CONTEXTS
                for item in node.items
            )
            children = [(item, arms, in_block) for item in node.items] + [(node.body, arms, pinned)]
        else:
            children = [(child, arms, in_block) for child in child_nodes(node)]
        stack.extend(reversed(children))


def _qualified(scope: Scope, call: cst.Call) -> str | None:
    for site in scope.calls:
        if site.node is call:
            return site.name
    return None


def _first_misordered(events: tuple[Event, ...]) -> tuple[Event, Event, Event] | None:
    """(init, collective, set_device): the first collective that runs after an NCCL init without
    `device_id=` and before any device choice, when a later `set_device` shows that this process
    means to use another GPU than GPU 0. None when the order is decided in a called function (it
    is reported there) or when nothing is wrong."""
    for index, event in enumerate(events):
        if event.kind != COLLECTIVE or event.in_device_block:
            continue
        before, after = events[:index], events[index + 1 :]
        if any(e.kind in (SET, SET_ZERO) and not e.excludes(event) for e in before):
            return None  # the device is chosen before any later collective too
        init = next(
            (e for e in before if e.kind == INIT_KIND and not e.excludes(event) and _unbound_nccl(e)), None
        )
        if init is None:
            continue
        later = next((e for e in after if e.kind in (SET, SET_ZERO) and not e.excludes(event)), None)
        if later is None or later.kind == SET_ZERO or later.site is event.site:
            return None
        if _visible_devices_pinned(init, event, later):
            return None
        return init, event, later
    return None


def _unbound_nccl(init: Event) -> bool:
    """`init_process_group` without `device_id=`, with a backend that may be NCCL: spelled
    "nccl" (or "cuda:nccl" without a CPU backend, which barrier and object collectives would
    use), a value that may be it (`args.dist_backend` whose argparse default is "nccl", a
    parameter defaulting to it), or no backend at all (torch 2.13 then uses the accelerator's
    backend: NCCL on a machine with CUDA, which a process calling `set_device` has)."""
    bound = bind(init.call.node, INIT_PARAMS)
    if bound.opaque:
        return False
    device = next((a for a in init.call.node.args if a.keyword and a.keyword.value == "device_id"), None)
    if device is not None and not is_none(device.value):
        return False
    backend = bound.get("backend")
    if backend is None or is_none(backend):
        return True
    chain = [(facts, call) for facts, call in init.path]
    values = _strings(init.facts, init.call.scope, backend, chain, 0)
    return any(_means_nccl(value) for value in values)


def _means_nccl(value: str) -> bool:
    value = value.lower()
    if value == "nccl":
        return True
    pairs = dict(part.split(":", 1) for part in value.split(",") if ":" in part)
    return pairs.get("cuda") == "nccl" and "cpu" not in pairs


def _strings(facts: ModuleFacts, scope: Scope, node: cst.BaseExpression, chain: list, depth: int) -> set[str]:
    """The strings `node` may hold, as far as the code shows (what it cannot see adds nothing)."""
    if depth > 6:
        return set()
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return {value} if isinstance(value, str) else set()
    if isinstance(node, cst.IfExp):
        return _strings(facts, scope, node.body, chain, depth + 1) | _strings(
            facts, scope, node.orelse, chain, depth + 1
        )
    if isinstance(node, cst.BooleanOperation):
        return _strings(facts, scope, node.left, chain, depth + 1) | _strings(
            facts, scope, node.right, chain, depth + 1
        )
    if isinstance(node, cst.Call):
        # `os.environ.get("BACKEND", "nccl")`, `config.get("backend", "nccl")`: the default.
        name = facts.qualname(node.func) or ""
        if (name == "os.getenv" or name.endswith(".get")) and len(node.args) > 1:
            return _strings(facts, scope, node.args[1].value, chain, depth + 1)
        return set()
    name = dotted_name(node)
    if name is None:
        return set()
    qualified = facts.imports.resolve_dotted(name)
    if qualified.startswith("torch.distributed.") and qualified.endswith(".NCCL"):
        return {"nccl"}
    values = bound_values(facts, scope, name)
    if values is None:  # a parameter: the caller's argument, else its default
        return _parameter_strings(facts, scope, name, chain, depth)
    found: set[str] = set()
    for value in values:
        if value is not node:
            found |= _strings(facts, scope, value, chain, depth + 1)
    if not values and "." in name:
        found |= _argparse_defaults(facts, scope, name.rsplit(".", 1)[-1], chain, depth)
    return found


def _parameter_strings(facts: ModuleFacts, scope: Scope, name: str, chain: list, depth: int) -> set[str]:
    head, _, rest = name.partition(".")
    function = scope.node
    if not isinstance(function, cst.FunctionDef):
        return set()
    params = [*function.params.posonly_params, *function.params.params]
    param = next((p for p in (*params, *function.params.kwonly_params) if p.name.value == head), None)
    if param is None:
        return set()
    if rest:  # `args.dist_backend` where `args` is a parameter: its argparse default
        return _argparse_defaults(facts, scope, rest.rsplit(".", 1)[-1], chain, depth)
    if chain:
        caller_facts, call = chain[-1]
        argument = _argument_for(call, params, param, scope)
        if argument is False:
            return set()  # `*args` or `**kwargs` may carry it
        if argument is not None:
            return _strings(caller_facts, call.scope, argument, chain[:-1], depth + 1)
    if param.default is None:
        return set()
    return _strings(facts, scope, param.default, [], depth + 1)


def _argument_for(call: CallSite, params: list[cst.Param], param: cst.Param, scope: Scope):
    """The expression the call passes for `param`; None when it passes none, False when a
    starred argument may hide it."""
    positional = [p.name.value for p in params]
    if scope.class_name is not None and positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
    index = 0
    for arg in call.node.args:
        if arg.star:
            return False
        if arg.keyword is not None:
            if arg.keyword.value == param.name.value:
                return arg.value
            continue
        if index < len(positional) and positional[index] == param.name.value:
            return arg.value
        index += 1
    return None


def _argparse_defaults(facts: ModuleFacts, scope: Scope, dest: str, chain: list, depth: int) -> set[str]:
    """Defaults of `add_argument(...)` calls that fill `args.<dest>`, in this module and in the
    modules of the calls that led here."""
    found: set[str] = set()
    modules = {id(facts): facts, **{id(f): f for f, _ in chain}}
    for module in modules.values():
        for call in module.all_calls():
            if call.method != "add_argument" or _dest(call.node) != dest:
                continue
            default = next(
                (a.value for a in call.node.args if a.keyword and a.keyword.value == "default"), None
            )
            if default is not None:
                found |= _strings(module, call.scope, default, [], depth + 1)
    return found


def _dest(node: cst.Call) -> str | None:
    for arg in node.args:
        if (
            arg.keyword is not None
            and arg.keyword.value == "dest"
            and isinstance(arg.value, cst.SimpleString)
        ):
            value = arg.value.evaluated_value
            return value if isinstance(value, str) else None
    flags = [
        a.value.evaluated_value
        for a in node.args
        if a.keyword is None
        and isinstance(a.value, cst.SimpleString)
        and isinstance(a.value.evaluated_value, str)
    ]
    long = [f for f in flags if f.startswith("--")]
    if long:
        return long[0][2:].replace("-", "_")
    return flags[0].lstrip("-").replace("-", "_") if flags else None


def _visible_devices_pinned(*events: Event) -> bool:
    """A module the events run through sets `CUDA_VISIBLE_DEVICES` for this process: then
    GPU 0 is the one GPU it sees, the right one."""
    modules = {id(e.facts): e.facts for e in events}
    for event in events:
        modules.update({id(f): f for f, _ in event.path})
    return any(VISIBLE_DEVICES_WRITE.search(module.source.text) for module in modules.values())


# Reporting ------------------------------------------------------------------------------------


def _report(ctx: Context, scope: Scope, init: Event, collective: Event, later: Event) -> None:
    facts = ctx.facts
    collective_text = f"`{_short(collective.facts, collective.call.node)}`"
    if collective.path:
        what = (
            f"`{_short(facts, collective.site)}` reaches {collective_text} ({_where(collective)}), which runs"
        )
    else:
        what = collective_text + " runs"
    set_text = f"`{_short(later.facts, later.call.node)}` ({_where(later)})"
    message = (
        f"{what} before {set_text} with NCCL and no `device_id=` in `init_process_group` "
        f"({_where(init)}): every rank's current device is still GPU 0 and the collective runs "
        f"there (NCCL `Duplicate GPU detected`, a hang, or every process's memory on GPU 0)"
    )
    fix = _move_set_device(ctx, scope, init, collective, later)
    help = (
        f"call `{_short(later.facts, later.call.node)}` before the first collective, or pass "
        f"`device_id=` to `init_process_group`"
    )
    ctx.report(collective.site, message, fix=fix, help=help)


def _short(facts: ModuleFacts, call: cst.Call) -> str:
    text = facts.text_of(call)
    if len(text) <= 80 and "\n" not in text:
        return text
    return f"{facts.text_of(call.func)}(...)"


def _where(event: Event) -> str:
    return event.facts.source.place(event.facts.line_in(event.call.node, event.call.scope))


def _move_set_device(ctx: Context, scope: Scope, init: Event, collective: Event, later: Event):
    """Move a plain `set_device(...)` statement of this function up, just before the statement
    that reaches the collective, when what its argument reads is already bound there."""
    if later.path:
        return None
    block, statement, target = _statement_and_target(scope, later.call.node, collective.site)
    if block is None:
        return None
    facts = ctx.facts
    argument = later.call.node.args[0].value
    reads, bases = _names_read(argument), _bases(argument)
    if _contains(target, init.site) and not _plain(facts, argument):
        return None  # moved before the init, it may need the process group that is not there yet
    between = block[block.index(target) : block.index(statement)]
    if any(_changes(facts, node, reads, bases) for node in between):
        return None
    target_start = facts.span(target)[0]
    if not all(_bound_before(facts, scope, name, target_start) for name in reads):
        return None
    source = facts.source
    start, end = facts.span(statement)
    line_start = source.text.rfind("\n", 0, start) + 1
    line_end = source.text.find("\n", end)
    line_end = len(source.text) if line_end == -1 else line_end + 1
    code = source.text[start:line_end].rstrip("\r\n")  # with its trailing comment
    row, column = source.location(target_start)
    indent = source.line_text(row)[: column - 1]
    return ctx.fix(
        f"Move `{facts.code(later.call.node)}` before `{_short(facts, collective.site)}`",
        Edit(target_start, target_start, f"{code}{source.newline}{indent}"),
        Edit(line_start, line_end, ""),
    )


def _statement_and_target(scope: Scope, set_call: cst.Call, site: cst.Call):
    """The block holding `set_device(...)` as a statement of its own, that statement, and the
    earlier statement of the same block that holds the collective's site."""
    root = scope.node
    blocks = [root.body.body if isinstance(root, cst.FunctionDef) else root.body]
    while blocks:
        block = list(blocks.pop())
        statement = next((s for s in block if _is_call_statement(s, set_call)), None)
        if statement is not None:
            target = next((s for s in block if _contains(s, site)), None)
            if target is None or block.index(target) >= block.index(statement):
                return None, None, None
            return block, statement, target
        for stmt in block:
            if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                blocks.extend(_blocks_of(stmt))
    return None, None, None


def _blocks_of(stmt: cst.CSTNode):
    for child in child_nodes(stmt):
        if isinstance(child, cst.IndentedBlock):
            yield child.body
        elif isinstance(child, (cst.If, cst.Else, cst.Finally, cst.ExceptHandler, cst.ExceptStarHandler)):
            yield from _blocks_of(child)


def _is_call_statement(stmt: cst.CSTNode, call: cst.Call) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and stmt.body[0].value is call
    )


def _contains(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    stack = [root]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(child_nodes(current))
    return False


def _names_read(node: cst.CSTNode) -> set[str]:
    """The names an expression reads: plain names and the heads of attribute chains."""
    return {name for name in names_in(node) if "." not in name}


def _plain(facts: ModuleFacts, node: cst.CSTNode) -> bool:
    """Calls only what needs no process group (`int(os.environ["LOCAL_RANK"])`)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call) and facts.qualname(current.func) not in PLAIN_CALLS:
            return False
        stack.extend(child_nodes(current))
    return True


def _bindings(root: cst.CSTNode, names: set[str]):
    """The nodes of `root` (nested functions left out) that bind one of `names`, or may: a
    `global`, `del` or import statement is counted whatever it names."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not root:
            continue
        targets: list[cst.CSTNode] = []
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        elif isinstance(node, cst.NamedExpr):
            targets = [node.target]
        elif isinstance(node, (cst.Global, cst.Nonlocal, cst.Del, cst.Import, cst.ImportFrom)):
            yield node
            continue
        if any(_target_names(target) & names for target in targets):
            yield node
        stack.extend(child_nodes(node))


def _changes(facts: ModuleFacts, statement: cst.CSTNode, names: set[str], bases: set[str]) -> bool:
    """The statement may change what the argument reads: it binds one of `names` (or one of
    their attributes or items), or hands an object whose attribute or item is read (`bases`)
    to a call, which may set it (`init_distributed_mode(args)` sets `args.gpu`)."""
    if next(_bindings(statement, names), None) is not None:
        return True
    stack = [statement]
    while stack and bases:
        node = stack.pop()
        if isinstance(node, cst.Call) and facts.qualname(node.func) not in PLAIN_CALLS:
            if any(_root_name(arg.value) in bases for arg in node.args):
                return True
            if isinstance(node.func, cst.Attribute) and _names_read(node.func.value) & bases:
                return True
        stack.extend(child_nodes(node))
    return False


def _root_name(node: cst.CSTNode) -> str | None:
    """`args` for `args`, `args.train` or `args["train"]`: the object a call would be handed."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _bases(node: cst.CSTNode) -> set[str]:
    """The names whose attributes or items an expression reads (`args` in `args.gpu`)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Attribute, cst.Subscript)):
            found |= _names_read(current.value)
        stack.extend(child_nodes(current))
    return found


def _target_names(target: cst.CSTNode) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Attribute, cst.Subscript)):
        return _names_read(target.value)
    if isinstance(target, (cst.Tuple, cst.List)):
        found: set[str] = set()
        for element in target.elements:
            found |= _target_names(element.value)
        return found
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


def _bound_before(facts: ModuleFacts, scope: Scope, name: str, position: int) -> bool:
    """`name` holds its value at `position`: a parameter, a name the function never binds (a
    global, an import, a builtin), or one bound before that point."""
    if name in scope.params:
        return True
    found = list(_bindings(scope.node, {name}))
    return not found or any(facts.span(node)[0] < position for node in found)
