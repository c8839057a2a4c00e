"""The project-wide analysis: per-function summaries, and the findings of every function.

Each function is simulated as rank 0 and as any other rank; callees are summarised for the
same class (memoised per calling context, recursion cut), so summaries of one file depend only
on that file and the summaries of what it calls.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, replace

from ddplint.analysis.divergence import sharding
from ddplint.analysis.divergence.domain import Kind, Val, const
from ddplint.analysis.divergence.labels import timeline
from ddplint.analysis.divergence.replay import Question, Recorder, answers_hold, same
from ddplint.analysis.divergence.results import Cause, Finding, Summary, Update
from ddplint.analysis.divergence.seq import (
    Choice,
    Exit,
    Loop,
    Op,
    Seq,
    aborts,
    choice_nodes,
    has_ops,
    linearize,
    matters,
    walk,
)
from ddplint.analysis.divergence.simulate import Simulator, launch_class_test, unpacked
from ddplint.model import catalogue as cat
from ddplint.model.expressions import constructed_by
from ddplint.model.facts import CallSite, ModuleFacts, Scope, child_nodes, is_init, own_nodes
from ddplint.model.names import dotted_name
from ddplint.syntax.lazycst import cst

MAX_DEPTH = 12  # nested summaries being computed at once
# A summary as an analysis settled it: its function's module, the summary, the values its
# parameters were bound to, and its simulation's questions (see replay.py).
Settled = tuple[ModuleFacts, Summary, tuple, list[Question]]
_CONFIGURED_COLLECTIVE = cat.LibraryCall(cat.Role.COLLECTIVE, "listed in `collectives`")
_CONFIGURED_PREDICATE = cat.LibraryCall(cat.Role.MAIN, "listed in `rank-predicates`")


# Each distinct triple of flags once, shared by every function that has it.
_FLAG_VALUES: dict[tuple[bool, bool, bool], tuple[bool, bool, bool]] = {}


@dataclass(eq=False, slots=True)
class _Flagged:
    """A function on its way to its flags (see `Analysis.flags`)."""

    facts: ModuleFacts
    scope: Scope
    flags: list[bool]  # reach, special, calls a parameter: grown to the fixpoint
    # Project functions called, each with the call (does it pass a parameter on? see
    # CallSite.passes_param).
    calls: list[tuple[ModuleFacts, Scope, CallSite]]
    modules: int  # the modules whose functions it reaches (itself included), as bits (see `_bit`)
    direct_checked: bool = False


class Analysis:
    # Tables of flags, names and modules, which hold no node (see Project.extent).
    NODE_FREE = frozenset(
        {
            "_flags",
            "_flag_modules",
            "_bits",
            "_masks",
            "_bit_modules",
            "_protocols",
            "_distributed",
            "_spawned",
            "_libraries",
            "_configurations",
            "_importers",
            "_strings",
        }
    )

    def __init__(self, project, settings=None) -> None:
        self.project = project
        self.user_collectives = frozenset(getattr(settings, "collectives", None) or ())
        self.user_predicates = frozenset(getattr(settings, "rank_predicates", None) or ())
        self.types = frozenset(getattr(settings, "distributed_types", None) or cat.DISTRIBUTED_TYPES)
        self._summaries: dict[tuple, Summary] = {}
        self._running: set[tuple] = set()
        self._globals: dict[tuple, Val | None] = {}
        self._findings: dict[str, list[Finding]] | None = None
        self._own_findings: dict[str, list[Finding]] = {}  # of modules that run alone
        self._flags: dict[int, tuple[bool, bool, bool]] = {}
        # What each function's flags were read from: the modules it reaches, as bits of `_bits`.
        self._flag_modules: dict[int, int] = {}
        self._bits: dict[int, int] = {}  # id of a module → its bit
        self._masks: dict[int, int] = {}
        self._bit_modules: list[ModuleFacts] = []
        self._protocols: dict[tuple[int, str], bool] = {}
        self._updates: dict[str, list[Update]] | None = None
        self._exits_in_protocols: set[int] | None = None
        self._distributed: set[str] | None = None
        self._spawned: set[int] | None = None
        self._libraries: dict[str, set[str]] | None = None
        self._configurations: dict[int, list[str]] = {}  # by module (see _launch_configurations)
        self._importers: dict[str, list[ModuleFacts]] | None = None
        self._strings: dict[str, object] = {}  # a string literal's text → its value
        # Set by `keep_logs`: each simulation's questions, by summary key (see replay.py).
        self._logs: dict[tuple, tuple[ModuleFacts, tuple, list[Question]]] | None = None
        # Summaries of an earlier analysis, taken when their questions get the same answers.
        self._carried: dict[tuple, Settled] = {}

    # Facts the simulator asks for -----------------------------------------------------------

    def distributed(self, facts: ModuleFacts) -> bool:
        """Is this module part of a program that wraps a model for data parallelism?

        Then `backward()` all-reduces gradients. True for a module that wraps (DDP, FSDP,
        DeepSpeed, accelerate) and for every project module it imports, directly or not.
        """
        if self._distributed is None:
            wrappers = cat.DDP_WRAPPERS | cat.DISTRIBUTED_ENGINES
            files = self.project.files.values()
            todo: list = [f for f in files if any(call.name in wrappers for call in f.all_calls())]
            reached: set[str] = set()  # file names, and names of modules the run did not load
            while todo:
                module = todo.pop()
                unloaded = isinstance(module, str)
                key = module if unloaded else module.filename
                if key in reached:
                    continue
                reached.add(key)
                targets = self.project.unloaded[module] if unloaded else module.imports.aliases.values()
                todo.extend(self._imported(targets, None if unloaded else module))
            self._distributed = reached
        return facts.filename in self._distributed

    def spawned(self, scope: Scope) -> bool:
        """Is this function given to `mp.spawn` (or `start_processes`), which passes each
        process its index as the first argument?"""
        if self._spawned is None:
            self._spawned = set()
            for facts in self.project.files.values():
                for call in facts.all_calls():
                    if call.name in cat.SPAWN_CALLS and call.node.args:
                        target = self.resolve(facts, call.scope, call.node.args[0].value, None)
                        if target is not None:
                            self._spawned.add(id(target[1]))
        return id(scope) in self._spawned

    def _imported(self, targets, importer: ModuleFacts | None) -> list:
        """The project modules `targets` (what import statements bind) name: loaded ones as
        facts, the ones the run skipped (see ddplint.run.prefilter) by name."""
        found: list = []
        for target in targets:
            parts = target.split(".")
            for cut in range(len(parts), 0, -1):
                name = ".".join(parts[:cut])
                module = self.project.module(name, importer)
                if module is not None or name in self.project.unloaded:
                    found.append(module or name)
                    break
        return found

    def flags(self, facts: ModuleFacts, scope: Scope) -> tuple[bool, bool, bool]:
        """(may reach a collective, may return a rank or data value, calls a parameter).

        Name-level and transitive over project calls: cheap, and a function with none of the
        three needs no simulation at all (its sequence is empty, its result follows its inputs).
        Computed for every function `scope` reaches at once, to a fixpoint, so that a function's
        flags never depend on which function of a cycle was asked first.
        """
        known = self._flags.get(id(scope))
        if known is not None:
            return known
        # The functions reachable from `scope` that have no flags yet: id → (own flags, calls),
        # callees before their callers where the calls allow (a depth-first post-order), so that
        # most settle in one pass. Those with flags were computed with all they reach: final.
        graph: dict[int, _Flagged] = {}
        entered: dict[int, _Flagged] = {}
        todo: list[tuple[ModuleFacts, Scope, bool]] = [(facts, scope, False)]
        while todo:
            module, function, done = todo.pop()
            key = id(function)
            if done:
                graph[key] = entered[key]
                continue
            if key in entered or key in self._flags:
                continue
            entered[key] = flagged = self._own_flags(module, function)
            todo.append((module, function, True))
            todo.extend((callee_facts, callee, False) for callee_facts, callee, _ in reversed(flagged.calls))

        def of(callee: Scope) -> tuple[list[bool], int]:
            known = self._flags.get(id(callee))
            if known is not None:
                return list(known), self._flag_modules[id(callee)]
            flagged = graph[id(callee)]
            return flagged.flags, flagged.modules

        changed = True
        while changed:
            changed = False
            for flagged in graph.values():
                own = flagged.flags
                grown = own[:]
                modules = flagged.modules
                for _, callee, call in flagged.calls:
                    (reach, special, calls_param), reached = of(callee)
                    passes = calls_param and not grown[2] and call.passes_param
                    grown = [grown[0] or reach, grown[1] or special, grown[2] or passes]
                    modules |= reached
                if not grown[0] and not flagged.direct_checked:
                    # Its own calls are looked at only when none it calls reaches one: the check
                    # costs more than the rest of the flags together.
                    flagged.direct_checked = True
                    grown[0] = any(
                        self._direct_collective(flagged.facts, flagged.scope, call)
                        for call in flagged.scope.calls
                    )
                if grown != own or modules != flagged.modules:
                    flagged.flags, flagged.modules = grown, modules
                    changed = True
        for key, flagged in graph.items():
            flags = (flagged.flags[0], flagged.flags[1], flagged.flags[2])
            self._flags[key] = _FLAG_VALUES.setdefault(flags, flags)  # eight values: one tuple each
            # One int per distinct set (a tenth of them on diffusers): on a large project a set
            # is a few hundred bytes.
            self._flag_modules[key] = self._masks.setdefault(flagged.modules, flagged.modules)
        return self._flags[id(scope)]

    def _bit(self, facts: ModuleFacts) -> int:
        bit = self._bits.get(id(facts))
        if bit is None:
            bit = self._bits[id(facts)] = 1 << len(self._bit_modules)
            self._bit_modules.append(facts)
        return bit

    def settled_flags(self) -> dict[int, tuple[tuple[bool, bool, bool], tuple[ModuleFacts, ...]]]:
        """Every function's flags computed so far, by the id of its scope, with the modules
        they were read from: the function's and those of every function it reaches."""
        spelled: dict[int, tuple[ModuleFacts, ...]] = {}  # few distinct sets: each spelled once
        out = {}
        for key, flags in self._flags.items():
            mask = self._flag_modules[key]
            modules = spelled.get(mask)
            if modules is None:
                modules = spelled[mask] = tuple(m for i, m in enumerate(self._bit_modules) if mask >> i & 1)
            out[key] = (flags, modules)
        return out

    def adopt_flags(
        self, settled: dict[int, tuple[tuple[bool, bool, bool], tuple[ModuleFacts, ...]]]
    ) -> None:
        """Take flags an earlier analysis settled (see `settled_flags`) for functions whose
        modules, and every module they were read from, this project holds unchanged, its other
        modules showing the rest of the project what they showed then (see
        ddplint.model.project.interface): a call resolves as it did, so the flags are the same."""
        masks: dict[tuple[ModuleFacts, ...], int] = {}
        for key, (flags, modules) in settled.items():
            mask = masks.get(modules)
            if mask is None:
                mask = masks[modules] = sum(self._bit(m) for m in modules)
            self._flags[key] = flags
            self._flag_modules[key] = mask

    def _own_flags(self, facts: ModuleFacts, scope: Scope) -> _Flagged:
        """A function's own flags but the collectives it calls (see `flags`), and the project
        functions it calls, each with whether the call passes one of its parameters on."""
        calls_param = False
        special = bool(scope.rank_names) or scope.reads_data
        params = set(scope.params)
        calls: list[tuple[ModuleFacts, Scope, bool]] = []
        for call in scope.calls:
            name = call.name or ""
            if name in cat.DATA_CALLS or name in cat.RANK_CALLS or name in cat.MAIN_CALLS:
                special = True
            if call.method in cat.REPLICA_METHODS and (
                call.method in ("load_state_dict", "apply") or cat.replica_kind(call.receiver or "")
            ):
                special = True  # may change replica state (DDP013): simulated to see where
            if name in params or (call.method in cat.FSDP_COLLECTIVES and call.receiver in params):
                calls_param = True
            if call.name is None:
                continue
            target = self.project.resolve_call(facts, call) or self.project.guess_method(
                facts, scope, call.name
            )
            if target is None:
                continue
            if _changes_held_object(call, target[1]):
                special = True  # `self.counter.update(loss)`: what it leaves in the object matters
            calls.append((target[0], target[1], call))
        return _Flagged(facts, scope, [False, special, calls_param], calls, self._bit(facts))

    def _in_protocol(self, facts: ModuleFacts, name: str) -> bool:
        """Whether the function `name` of `facts` (or one it is nested in) hosts a leader/follower
        loop: the other ranks loop on a value rank 0 broadcasts (`while True: dist.broadcast(signal,
        src=0); if signal.item() == 0: break; closure()`) and run what rank 0 asks, as many times
        as it asks (a rank-0-driven `LBFGS.step(closure)`). Which collectives pair up then
        depends on run-time values the simulation does not have: nothing in there is reported."""
        key = (id(facts), name)
        if key not in self._protocols:
            parts = name.split(".<locals>.")
            self._protocols[key] = any(
                _follower_loop(facts, facts.functions.get(".<locals>.".join(parts[:cut])))
                for cut in range(1, len(parts) + 1)
            )
        return self._protocols[key]

    def _without_protocols(self, seq: Seq) -> Seq:
        """`seq` with each run of a protocol's collectives (and the followers' loop around them)
        as one opaque collective: both sides entering the protocol compare equal, one side
        entering it alone still shows."""
        exits = self._protocol_exits()
        if not exits:
            return seq
        out: list = []
        for item in seq:
            if isinstance(item, Exit) and id(item.node) in exits:
                continue
            if isinstance(item, Op):
                name = self._protocol_of(item)
                item = item if name is None else replace(item, name=f"protocol {name}")
            elif isinstance(item, Choice):
                item = replace(item, arms=tuple(self._without_protocols(arm) for arm in item.arms))
            elif isinstance(item, Loop):
                item = replace(item, body=self._without_protocols(item.body))
            item = _protocol_token(item) or item
            if isinstance(item, Op) and out and isinstance(out[-1], Op) and out[-1].name == item.name:
                continue  # one token for the whole exchange, however many turns it takes
            out.append(item)
        return tuple(out)

    def _protocol_of(self, op: Op) -> str | None:
        return next((name for name in op.via if self._in_protocol(op.origin[0], name)), None)

    def _protocol_exits(self) -> set[int]:
        """The `break`/`continue`/`return` nodes of every function hosting a leader/follower loop
        (nested functions included); empty when the project has none, the common case."""
        if self._exits_in_protocols is None:
            found: set[int] = set()
            for facts in self.project.files.values():
                for scope in facts.scopes:
                    if _follower_loop(facts, scope):
                        stack = [scope.node]
                        while stack:
                            node = stack.pop()
                            if isinstance(node, (cst.Break, cst.Continue, cst.Return)):
                                found.add(id(node))
                            stack.extend(child_nodes(node))
            self._exits_in_protocols = found
        return self._exits_in_protocols

    def unwraps(self, scope: Scope) -> bool:
        """Whether a function returns the `.module` of something (`unwrap_model(model)`): what it
        gives back is the module inside a wrapper, or an object that was never wrapped."""
        return scope.returns_module

    def _direct_collective(self, facts: ModuleFacts, scope: Scope, call) -> bool:
        name = call.name or ""
        if self.is_collective(name) or name in cat.DDP_WRAPPERS or name in cat.DISTRIBUTED_ENGINES:
            return True
        method = call.method or ""
        receiver = (call.receiver or "").lower()
        if method == "backward" or method == "forward":
            return True
        if method in cat.METHODS["accelerator"] and "accelerator" in receiver:
            return True
        if method in cat.DEEPSPEED_COLLECTIVES and "engine" in receiver:
            return True
        last = receiver.rsplit(".", 1)[-1]
        if any(
            method in entry.methods  # first: it rules out nearly every call
            and (last in entry.receivers or (last == "self" and set(entry.libraries) & cat.LIBRARY_ROOTS))
            for entry in cat.NAMED_METHODS
        ):
            return True
        if receiver == "self" and (method in cat.LIGHTNING_COLLECTIVES or method == "log"):
            return True
        # A call of a DDP-wrapped module held in a local, a global or a `self.` attribute: only
        # in a module that spells a wrapper (its values read from its own assignments).
        if not (name and "." not in name.replace("self.", "", 1) and facts.spells_wrapper):
            return False
        built = facts.assigned_builders(scope, name)
        if built is None:
            return False  # assigned nowhere: a parameter, a name imported or built in
        if built and None not in built:
            # Every value a call (`model = DDP(model)`): its maker's name says it, unread.
            return any(b and facts.imports.resolve_dotted(b) in cat.DDP_WRAPPERS for b in built)
        return any(
            constructed_by(facts, scope, value, wrapper)
            for value in facts.values_of(scope, name)
            for wrapper in cat.DDP_WRAPPERS
        )

    def shard_of(self, facts: ModuleFacts, scope: Scope) -> tuple | None:
        """The split, when calling this yields only this rank's share (a class or a generator)."""
        key = ("shard", id(scope))
        if key in self._globals:
            return self._globals[key]
        site = None
        if scope.parent is not None:  # a function (by name: a skeleton's node is left unread)
            if is_init(scope) and scope.class_name is not None:
                self._globals[key] = None  # recursion guard: the attributes' values may build one
                site = sharding.class_shard_site(self.project, facts, scope.class_name)
                site = site or self._iterated_attribute_shard(facts, scope.class_name)
            elif scope.is_generator:
                found = sharding.shard_site(facts, scope)
                site = (facts, found) if found is not None else None
        self._globals[key] = site
        return site

    def _iterated_attribute_shard(self, facts: ModuleFacts, class_name: str) -> tuple | None:
        """A dataset whose `__iter__` reads an attribute set to this rank's share in `__init__`
        (`self.shards = files[rank::world_size]`)."""
        found = self.project.method(facts, class_name, "__iter__")
        if found is None:
            return None
        owner, method = found
        stack: list[cst.CSTNode] = [method.node.body]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Attribute) and dotted_name(node.value) == "self":
                value = self.class_attr(owner, class_name, node.attr.value, True)
                if value is not None and value.shard is not None:
                    return value.shard
            stack.extend(child_nodes(node))
        return None

    def library_call(self, qualified: str) -> cat.LibraryCall | None:
        """What a library call means (see ddplint.model.catalogue), the project's own
        `collectives` and `rank-predicates` settings first."""
        if qualified in self.user_collectives:
            return _CONFIGURED_COLLECTIVE
        if qualified in self.user_predicates:
            return _CONFIGURED_PREDICATE
        return cat.FUNCTIONS.get(qualified)

    def named_method(self, facts: ModuleFacts, receiver: str, method: str) -> cat.LibraryCall | None:
        """A library method known by its receiver's name (see catalogue.NAMED_METHODS), when the
        program the module belongs to imports that library."""
        last = receiver.rsplit(".", 1)[-1]
        for entry in cat.NAMED_METHODS:
            # The names first: they rule out nearly every call before the program is looked up.
            if (
                last in entry.receivers
                and method in entry.methods
                and self._program_libraries(facts) & set(entry.libraries)
            ):
                return entry.methods[method]
        return None

    def _program_libraries(self, facts: ModuleFacts) -> set[str]:
        """The top-level packages imported anywhere in the module's program: the project modules
        connected to it by imports, either way (a helper module that never imports DeepSpeed
        still runs on the engine its importer built)."""
        if self._libraries is None:
            self._libraries = {}
            seen: set[str] = set()
            for start in self.project.files.values():
                if start.filename in seen:
                    continue
                component, todo = [], [start]
                while todo:
                    module = todo.pop()
                    if module.filename in seen:
                        continue
                    seen.add(module.filename)
                    component.append(module)
                    todo.extend(m for m in self._neighbours(module) if m.filename not in seen)
                libraries = {
                    target.split(".", 1)[0]
                    for module in component
                    for target in module.imports.aliases.values()
                }
                for module in component:
                    self._libraries[module.filename] = libraries
        return self._libraries.get(facts.filename, set())

    def _neighbours(self, module: ModuleFacts) -> list[ModuleFacts]:
        """Project modules `module` imports, and those that import it."""
        if self._importers is None:
            self._importers = {}
            for other in self.project.files.values():
                for target in self._imported(other.imports.aliases.values(), other):
                    if not isinstance(target, str):
                        self._importers.setdefault(target.filename, []).append(other)
        imported = self._imported(module.imports.aliases.values(), module)
        imported = [m for m in imported if not isinstance(m, str)]
        return imported + self._importers.get(module.filename, [])

    def string_value(self, node: cst.SimpleString) -> object:
        """A string literal's value: parsing it costs a `literal_eval`, and a function's literals
        are read again by each of its summaries. Remembered by the literal's text, all the value
        depends on, so that the table holds no node."""
        text = node.value
        if text not in self._strings:
            quote = text[0]
            if quote in "'\"" and "\\" not in text and text[:3] != quote * 3:
                # `"train"`: no prefix, escape or triple quote, its value is what the quotes hold.
                self._strings[text] = text[1:-1]
            else:
                self._strings[text] = node.evaluated_value
        return self._strings[text]

    def is_collective(self, qualified: str) -> bool:
        library = self.library_call(qualified)
        return library is not None and library.role is cat.Role.COLLECTIVE

    def is_loader(self, facts: ModuleFacts, scope: Scope, node: cst.BaseExpression) -> bool:
        name = dotted_name(node)
        if name is None:
            return False
        for value in facts.values_of(scope, name):
            if constructed_by(facts, scope, value, "torch.utils.data.DataLoader"):
                return True
        return False

    def resolve(self, facts: ModuleFacts, scope: Scope, func: cst.BaseExpression, receiver: Val | None):
        dotted = dotted_name(func)
        if dotted is None:
            return None
        name = facts.imports.resolve_dotted(dotted)
        if name.split(".", 1)[0] in ("torch", "os", "sys", "time", "math", "numpy", "random"):
            return None
        return self.project.resolve_name(facts, scope, name)

    def guess_method(self, facts: ModuleFacts, scope: Scope, func: cst.BaseExpression):
        dotted = dotted_name(func)
        return self.project.guess_method(facts, scope, dotted) if dotted is not None else None

    def class_attr(self, facts: ModuleFacts, class_name: str, attr: str, rank_zero: bool) -> Val | None:
        key = ("attr", id(facts), class_name, attr, rank_zero)
        if key in self._globals:
            return self._globals[key]
        values = facts.class_attrs.get(class_name, {}).get(attr, [])
        parts = facts.unpacked_attrs.get(class_name, {}).get(attr, [])
        if not values and not parts:
            return None
        self._globals[key] = None  # recursion guard
        scope = Scope("", facts.tree, None, class_name)
        sim = Simulator(self, facts, scope, rank_zero)
        result = self._evaluate_all(sim, values)
        for value, index, count in parts:  # `self.engine, self.opt, _, _ = deepspeed.initialize(...)`
            part = unpacked(sim.eval(value), index, count)
            result = part if result is None else _join(result, part)
        self._globals[key] = result
        return result

    def module_global(self, facts: ModuleFacts, name: str, rank_zero: bool) -> Val | None:
        if name in facts.functions or name in facts.class_bases or name in facts.imports.aliases:
            return None
        values = facts.module_scope.assignments.get(name)
        if not values:
            return None
        key = ("global", id(facts), name, rank_zero)
        if key in self._globals:
            return self._globals[key]
        self._globals[key] = None  # recursion guard
        result = self._evaluate_all(Simulator(self, facts, facts.module_scope, rank_zero), values)
        self._globals[key] = result
        return result

    @staticmethod
    def _evaluate_all(sim: Simulator, values) -> Val | None:
        """Every value a name is assigned anywhere, joined: what it may hold when read."""
        result = None
        for value in values:
            v = sim.eval(value)
            result = v if result is None else _join(result, v)
        return result

    def summary(
        self, facts: ModuleFacts, scope: Scope, rank_zero: bool, args: tuple, world: str | None = None
    ) -> Summary:
        signature = tuple(_arg_key(a) for a in args)
        key = (id(scope), rank_zero, signature, world)
        found = self._summaries.get(key)
        if found is not None:
            return found
        if key in self._running or len(self._running) > MAX_DEPTH:
            return self.cut(facts, scope)  # recursion: cut the cycle
        self._running.add(key)
        try:
            context = tuple(_context_value(a) for a in args)
            result = self._replayed(key, context)
            if result is None:
                log: list[Question] = []
                asked = self if self._logs is None else Recorder(self, log)
                result = Simulator(asked, facts, scope, rank_zero, context, world).run()
                if self._logs is not None:
                    self._logs[key] = (facts, context, log)
        finally:
            self._running.discard(key)
        self._summaries[key] = result
        return result

    def cut(self, facts: ModuleFacts, scope: Scope) -> Summary:
        """The summary of a function left unsimulated (a recursive call, or one too large):
        nothing is known of it. When it can reach no collective, nor call a function it was
        handed, it adds none to its callers' sequences, and they stay complete: it is read as
        library code is (what it returns and where it raises unknown), so that a training
        script's findings do not depend on whether the package it imports is checked with it."""
        reaches, _, calls_param = self.flags(facts, scope)
        return Summary((), Val(Kind.UNIFORM), complete=not (reaches or calls_param))

    def _replayed(self, key: tuple, context: tuple) -> Summary | None:
        """The earlier analysis' summary for `key`, when the simulation would produce it again:
        bound to the same values, and every question it asked answered the same (asked here, in
        the order it asked them, as the simulation would first)."""
        carried = self._carried.pop(key, None)
        if carried is None:
            return None
        facts, summary, before, log = carried
        if not same(context, before) or not answers_hold(self, log):
            return None
        if self._logs is not None:
            self._logs[key] = (facts, before, log)
        return summary

    def keep_logs(self) -> None:
        """Record each simulation's questions, for `settled_summaries`."""
        if self._logs is None:
            self._logs = {}

    def settled_summaries(self) -> dict[tuple, Settled]:
        """The summaries simulated (or replayed) since `keep_logs`, with their function's module,
        the values their parameters were bound to and their questions."""
        return {
            key: (facts, self._summaries[key], context, log)
            for key, (facts, context, log) in (self._logs or {}).items()
        }

    def adopt_summaries(self, settled: dict[tuple, Settled]) -> None:
        """Offer summaries an earlier analysis settled (see `settled_summaries`), keyed by the
        functions of modules this project holds unchanged (the same objects): each is taken when
        first needed, if replaying its questions proves it (see ddplint.analysis.divergence.replay)."""
        self._carried = dict(settled)

    # Findings -----------------------------------------------------------------------------

    def findings_for(self, facts: ModuleFacts) -> list[Finding]:
        if self._findings is None and self.project.runs_alone(facts):
            # Only its own functions can run its code: what is reported here is what they find,
            # whatever the others do (a check of one script skips simulating its context).
            if facts.filename not in self._own_findings:
                self._own_findings[facts.filename] = _reported([facts], self._in_launch_configurations).get(
                    facts.filename, []
                )
            return self._own_findings[facts.filename]
        if self._findings is None:
            self._findings = _reported(self.project.files.values(), self._in_launch_configurations)
        return self._findings.get(facts.filename, [])

    def updates_for(self, facts: ModuleFacts) -> list[Update]:
        """Changes of replica state (`optimizer.step()`) that one rank class makes and the other
        does not, each once, as seen from the closest function (fewest calls in between)."""
        if self._updates is None and not any(self._divergent_updates(facts, scope) for scope in facts.scopes):
            # An update is reported at the function the analysis started from: none of this
            # module's makes one, so none is reported here, whichever the others make.
            return []
        if self._updates is None:
            best: dict[int, Update] = {}
            for module in self.project.files.values():
                for scope in module.scopes:
                    for update in self._divergent_updates(module, scope):
                        known = best.get(id(update.node))
                        if known is None or len(update.via) < len(known.via):
                            best[id(update.node)] = update
            self._updates = {}
            for update in best.values():
                self._updates.setdefault(update.site_facts.filename, []).append(update)
        return self._updates.get(facts.filename, [])

    def _divergent_updates(self, facts: ModuleFacts, scope: Scope) -> list[Update]:
        # A function that neither reaches a collective nor updates anything itself is seen from
        # the training code that calls it.
        own = any(call.method in cat.REPLICA_METHODS for call in scope.calls)
        if not (own or self.flags(facts, scope)[0]) or not self.distributed(facts):
            return []
        if self._in_protocol(facts, scope.name):
            return []
        no_args = tuple(None for _ in scope.params)
        zero = self.summary(facts, scope, True, no_args)
        other = self.summary(facts, scope, False, no_args)
        if not (zero.complete and other.complete):
            return []
        made = [{(id(u.site), id(u.node)) for u in s.updates} for s in (zero, other)]
        divergent = [u for u in zero.updates if (id(u.site), id(u.node)) not in made[1]] + [
            u for u in other.updates if (id(u.site), id(u.node)) not in made[0]
        ]
        return [u for u in divergent if _used_again(facts, scope, zero.seq, u) and not _resynchronised(u)]

    def _in_launch_configurations(self, facts: ModuleFacts, scope: Scope) -> list[Finding]:
        """The findings of a function; those whose collectives exist only under some launch
        configurations are checked again under each that the project and the code allow, and
        kept, with the configurations where they hold, if they hold under one."""
        found = self._check(facts, scope)
        conditional = [f for f in found if f.ops and all(op.when for op in f.ops)]
        if not conditional:
            return found
        needed = frozenset().union(*(op.when for f in conditional for op in f.ops))
        holds = {
            world: {(f.cause, id(f.node)) for f in self._check(facts, scope, world)}
            for world in self._launch_configurations(facts)
            if world in needed
        }
        kept = [f for f in found if f not in conditional]
        for finding in conditional:
            finding.when = tuple(w for w, seen in holds.items() if (finding.cause, id(finding.node)) in seen)
            if finding.when:
                kept.append(finding)
        return kept

    def _launch_configurations(self, facts: ModuleFacts) -> list[str]:
        """What the project may launch with (`distributed-types`), narrowed to what the module
        itself names when it tests accelerate's DistributedType (a script that handles DeepSpeed
        is judged for DeepSpeed, and for plain DDP), plus automatic checkpoint naming when the
        module turns it on. Once per module: it walks the module's whole tree."""
        key = id(facts)
        if key not in self._configurations:
            self._configurations[key] = self._allowed_configurations(facts)
        return self._configurations[key]

    def _allowed_configurations(self, facts: ModuleFacts) -> list[str]:
        types = [t for t in cat.DISTRIBUTED_TYPES if t in self.types]
        named = self._launch_names(facts)
        if named & set(cat.DISTRIBUTED_TYPES):
            types = [t for t in types if t in named or t == "DDP"]
        if "automatic_checkpoint_naming" in named and "DDP" in types:
            types.append("automatic_checkpoint_naming")
        return types

    def _launch_names(self, facts: ModuleFacts) -> set[str]:
        """The launch configurations a module's own code names: accelerate's DistributedType
        members it tests, the plugins it reads, automatic checkpoint naming turned on. Read from
        the tree (the text of a module that reports nothing may be freed)."""
        named: set[str] = set()
        stack: list[cst.CSTNode] = [facts.tree]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Attribute):
                attr = node.attr.value
                if attr in cat.PLUGINS:
                    named.add(cat.PLUGINS[attr])
                elif (dotted_name(node.value) or "").endswith("DistributedType") and attr != "NO":
                    named.add(cat.LAUNCH_NAMES.get(attr, "DDP"))
            elif isinstance(node, cst.Arg) and node.keyword is not None:
                keyword = node.keyword.value
                if keyword == "automatic_checkpoint_naming" and _is_true(node.value):
                    named.add("automatic_checkpoint_naming")
                elif keyword == "strategy" and isinstance(node.value, cst.SimpleString):
                    # Lightning's `Trainer(strategy="deepspeed_stage_3")`
                    prefix = str(node.value.evaluated_value).split("_", 1)[0].lower()
                    if prefix in cat.STRATEGY_NAMES:
                        named.add(cat.STRATEGY_NAMES[prefix])
            elif launch_class_test(facts, node) is not None:
                named.add(launch_class_test(facts, node))
            stack.extend(child_nodes(node))
        return named

    def _check(self, facts: ModuleFacts, scope: Scope, world: str | None = None) -> list[Finding]:
        if not self.flags(facts, scope)[0]:
            return []  # no collective within reach: every rank runs the same (empty) sequence
        if self._in_protocol(facts, scope.name):
            return []
        no_args = tuple(None for _ in scope.params)
        zero = self.summary(facts, scope, True, no_args, world)
        other = self.summary(facts, scope, False, no_args, world)
        # Part of it could not be summarised: comparing the sequences would invent differences,
        # but a loop over unevenly split data, or a collective in a split barrier, is still one.
        complete = zero.complete and other.complete
        # What a protocol exchanges pairs up at run time: compared without it, what is left
        # (a rank-0-only `break` around it) still shows.
        seqs = [self._without_protocols(zero.seq), self._without_protocols(other.seq)]
        findings = self._compare(facts, scope, *seqs) if complete else []
        for summary in (zero, other):
            if complete:
                findings.extend(_divergent_choices(summary.seq))
            for (shard_facts, shard_node), loop, ops in summary.shard_findings:
                findings.append(
                    Finding(
                        Cause.UNEVEN, "uneven", shard_facts, shard_node, ops, block=loop, block_facts=facts
                    )
                )
            for op, block in summary.split_findings:
                findings.append(Finding(Cause.RANK, "split-barrier", op.facts, op.site, [op], block=block))
        return [f for f in findings if not _within_subgroups(f)]

    def _compare(self, facts: ModuleFacts, scope: Scope, zero: Seq, other: Seq) -> list[Finding]:
        shared = choice_nodes(zero) & choice_nodes(other)
        a = linearize(zero, ignore_params=True, shared=shared)
        b = linearize(other, ignore_params=True, shared=shared)
        keys_a, keys_b = [t.key for t in a], [t.key for t in b]
        if keys_a == keys_b:
            return []

        # Only this function's own early exits under a rank test explain a difference here:
        # an exit that rank 0 takes explains what rank 0 lacks, and likewise for the others.
        def own_exits(seq: Seq, site: cst.CSTNode) -> bool:
            return any(
                i.kind != "abort" and not i.inlined and _within(facts, scope, i.node)
                for i in _exits_before(seq, facts, site)
            )

        findings = []
        settled: set[str] = set()  # op names already explained by an "order" finding
        matcher = difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            left = [t.item for t in a[i1:i2]]
            right = [t.item for t in b[j1:j2]]
            if any(isinstance(x, Exit) and x.kind == "abort" for x in left + right):
                continue  # one side ends the job: fail-fast, not a hang
            left_ops = [x for x in left if isinstance(x, Op)]
            right_ops = [x for x in right if isinstance(x, Op)]
            if not left_ops and not right_ops:
                stopped = _rank_stop(a, b, i1, j1, left, right)
                if stopped is not None:
                    findings.append(stopped)
                continue
            if {op.name for op in left_ops + right_ops} <= settled:
                continue
            first = (left_ops or right_ops)[0]
            explained = own_exits(other if left_ops else zero, first.site)
            # A DDP forward that became a collective here, through the model this call passes,
            # is reported here: the callee alone does not know what it was given.
            resolved_here = any(op.resolved_here for op in left_ops + right_ops)
            if first.guard is None and not explained and not resolved_here:
                # Unless one rank class leaves the loop here under a rank test (`if rank == 0:`
                # around a patience check that breaks): the rest of its iterations is missing.
                stopped = _rank_stop(a, b, i1, j1, left, right)
                if stopped is not None:
                    findings.append(stopped)
                continue  # else the difference is inside a callee, reported there
            for finding in self._difference(a, b, i1, j1, left_ops, right_ops):
                if finding.kind == "order":
                    settled |= {op.name for op in finding.ops + finding.other_ops}
                finding.notes = timeline(a, b, i1, j1)
                finding.exits = _exits_before(other if finding.only_rank_zero else zero, facts, finding.node)
                findings.append(finding)
        if not findings:
            extra = _extra_guarded_op(a, b)
            if extra is not None:
                extra.notes = timeline(a, b, len(a), len(b))
                findings.append(extra)
        return findings

    @staticmethod
    def _difference(a, b, i: int, j: int, left_ops: list[Op], right_ops: list[Op]) -> list[Finding]:
        """Two sides calling different collectives here, or collectives on one side only: one
        finding for each place that performs or reaches them."""
        later_a = {t.key for t in a[i:]}
        later_b = {t.key for t in b[j:]}
        theirs = [t.item for t in b[j:] if isinstance(t.item, Op)][:1]
        mine = [t.item for t in a[i:] if isinstance(t.item, Op)][:1]
        if (
            left_ops
            and (right_ops or any(op.name in later_b for op in left_ops))
            and theirs
            and theirs[0].name != left_ops[0].name
        ):
            op = left_ops[0]
            return [
                Finding(Cause.ORDER, "order", op.facts, op.site, [op], other_ops=theirs, only_rank_zero=True)
            ]
        if (
            right_ops
            and any(op.name in later_a for op in right_ops)
            and mine
            and mine[0].name != right_ops[0].name
        ):
            op = mine[0]
            return [
                Finding(
                    Cause.ORDER,
                    "order",
                    op.facts,
                    op.site,
                    [op],
                    other_ops=[right_ops[0]],
                    only_rank_zero=True,
                )
            ]
        by_site: dict[int, list[Op]] = {}
        for op in left_ops or right_ops:
            by_site.setdefault(id(op.site), []).append(op)
        return [
            Finding(Cause.RANK, "rank-only", ops[0].facts, ops[0].site, ops, only_rank_zero=bool(left_ops))
            for ops in by_site.values()
        ]


def _extra_guarded_op(a: list, b: list) -> Finding | None:
    """One class runs a collective more often than the other, and the alignment matched the
    rank-guarded call with an unguarded one (`if rank == 0: barrier()` then `barrier()` on
    every rank): the guarded one is the extra call."""
    counts_a = Counter(t.key for t in a if isinstance(t.item, Op))
    counts_b = Counter(t.key for t in b if isinstance(t.item, Op))
    for tokens, counts, others, zero in ((a, counts_a, counts_b, True), (b, counts_b, counts_a, False)):
        for token in tokens:
            op = token.item
            if (
                isinstance(op, Op)
                and counts[token.key] > others[token.key]
                and op.guard is not None
                and op.guard.decided
            ):
                return Finding(Cause.RANK, "rank-only", op.facts, op.site, [op], only_rank_zero=zero)
    return None


def _rank_stop(a, b, i: int, j: int, left: list, right: list) -> Finding | None:
    """A `break` or `return` that one rank class takes under a rank test, inside a loop that
    runs collectives: it stops running them while the other ranks go on."""
    stops = [
        x
        for x in left + right
        if isinstance(x, Exit) and x.guard is not None and x.kind in ("break", "return")
    ]
    if not stops:
        return None
    zero_stops = stops[0] in left
    ops = _loop_ops(b, j) if zero_stops else _loop_ops(a, i)
    if not ops:
        return None
    finding = Finding(
        Cause.RANK, "rank-only", ops[0].facts, ops[0].site, ops[:1], only_rank_zero=not zero_stops
    )
    finding.exits = stops
    return finding


def _loop_ops(tokens: list, index: int) -> list[Op]:
    """The collectives of the innermost loop around position `index` of linearized tokens."""
    depth, start = 0, None
    for k in range(index - 1, -1, -1):
        key = tokens[k].key
        if isinstance(key, tuple) and key[0] in (")", "]"):
            depth += 1
        elif isinstance(key, tuple) and key[0] in ("(", "["):
            if depth == 0 and key[0] == "[":
                start = k
                break
            depth = max(0, depth - 1)
    if start is None:
        return []
    closing = ("]", tokens[start].key[1])
    end = next((k for k in range(start + 1, len(tokens)) if tokens[k].key == closing), len(tokens))
    # What the rest of this iteration runs comes first, then the next iteration's start.
    order = [*range(max(index, start + 1), end), *range(start + 1, min(index, end))]
    return [tokens[k].item for k in order if isinstance(tokens[k].item, Op) and tokens[k].item.param is None]


def _exits_before(seq: Seq, facts: ModuleFacts, site: cst.CSTNode) -> list[Exit]:
    """The exits under a rank test in `seq` that may leave before `site` is reached: not those
    written after it in the same code, unless a loop around them comes back to it."""
    found: list[Exit] = []

    def after_site(node: cst.CSTNode) -> bool:
        # Positions only when an exit of this module asks: they cost an entry per node.
        spans = facts.spans
        return site in spans and node in spans and spans[node][0] >= spans[site][1]

    def visit(items: Seq, looped: bool) -> None:
        for item in items:
            if isinstance(item, Exit) and item.guard is not None:
                if looped or item.facts is not facts or not after_site(item.node):
                    found.append(item)
            elif isinstance(item, Choice):
                for arm in item.arms:
                    visit(arm, looped)
            elif isinstance(item, Loop):
                visit(item.body, True)

    visit(seq, False)
    return found


def _within(facts: ModuleFacts, scope: Scope, node: cst.CSTNode) -> bool:
    """Whether `node` is written in the scope's own code: for the module, outside every function
    (a `continue` in a function the module's code calls ends an iteration there, not here)."""
    if node not in facts.spans:
        return False
    node_start, node_end = facts.span(node)
    if isinstance(scope.node, cst.Module):
        return not any(
            isinstance(s.node, cst.FunctionDef) and _spans(facts, s.node, node_start, node_end)
            for s in facts.scopes
        )
    return _spans(facts, scope.node, node_start, node_end)


def _spans(facts: ModuleFacts, outer: cst.CSTNode, start: int, end: int) -> bool:
    outer_start, outer_end = facts.span(outer)
    return outer_start <= start and end <= outer_end


def _inside(exit_item: Exit, choice: Choice) -> bool:
    """The exit is written inside the branch itself (not in a function the branch calls)."""
    if exit_item.facts is not choice.facts:
        return False
    start, end = choice.facts.span(choice.node)
    exit_start, exit_end = choice.facts.span(exit_item.node)
    return start <= exit_start and exit_end <= end


def _chain_length(finding: Finding) -> int:
    return min((len(op.via) for op in finding.ops), default=0)


def _divergent_choices(seq: Seq, in_loop: Loop | None = None) -> list[Finding]:
    """`in_loop`: the innermost enclosing loop, when its body runs collectives."""
    """Choices some ranks take one way and others another, whose arms run different collectives."""
    found: list[Finding] = []
    for item in seq:
        if isinstance(item, Choice):
            if item.cond.kind in (Kind.DATA, Kind.RANK):
                finding = _choice_finding(item, in_loop)
                if finding is not None:
                    found.append(finding)
            for arm in item.arms:
                found.extend(_divergent_choices(arm, in_loop))
        elif isinstance(item, Loop):
            body_ops = has_ops(item.body)
            if item.cond is not None and item.cond.divergent and body_ops:
                cause = Cause.DATA if item.cond.kind is Kind.DATA else Cause.RANK
                ops = [op for op in walk(item.body) if isinstance(op, Op) and op.param is None]
                test = getattr(item.node, "test", item.node)
                found.append(Finding(cause, "loop", item.facts, test, ops, cond=item.cond))
            found.extend(_divergent_choices(item.body, item if body_ops else None))
    return found


def _ops_along(seq: Seq, target: Exit) -> list[Op]:
    """The collectives of a loop body on the uniform path that leads to `target`.

    A `break` in the `else` of `if use_fsdp_eval:` skips later iterations of that arm only:
    every iteration takes the same arm of a uniform test.
    """
    ops: list[Op] = []
    for item in seq:
        if isinstance(item, Op) and item.param is None:
            ops.append(item)
        elif isinstance(item, Choice):
            holder = [arm for arm in item.arms if any(x is target for x in walk(arm))]
            arms = holder if holder and not item.cond.divergent else item.arms
            for arm in arms:
                ops.extend(_ops_along(arm, target))
        elif isinstance(item, Loop):
            ops.extend(_ops_along(item.body, target))
    return ops


def _choice_finding(choice: Choice, in_loop: Loop | None) -> Finding | None:
    left = linearize(choice.arms[0], stop_matters=bool(in_loop), ignore_params=True)
    right = linearize(choice.arms[1], stop_matters=bool(in_loop), ignore_params=True)
    keys_l, keys_r = [t.key for t in left], [t.key for t in right]
    if keys_l == keys_r or aborts(keys_l) or aborts(keys_r):
        return None  # equal, or one arm ends the job (fail-fast: the launcher stops every rank)
    matcher = difflib.SequenceMatcher(a=keys_l, b=keys_r, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        items = [t.item for t in left[i1:i2]] + [t.item for t in right[j1:j2]]
        if any(isinstance(x, Exit) and x.kind == "abort" for x in items):
            return None
        break
    cause = Cause.DATA if choice.cond.kind is Kind.DATA else Cause.RANK
    exits = [
        x
        for arm in choice.arms
        for x in walk(arm)
        if isinstance(x, Exit) and x.kind in ("continue", "break", "return") and _inside(x, choice)
    ]
    skipped = _skipped_ops(left, right)
    if exits:
        exit_item = exits[0]
        if exit_item.kind in ("break", "return") and in_loop is not None:
            skipped = _ops_along(in_loop.body, exit_item)  # every later iteration is skipped too
        if not skipped:
            return None
        return Finding(
            cause,
            "exit",
            exit_item.facts,
            exit_item.node,
            skipped,
            choice=choice,
            exit=exit_item,
            cond=choice.cond,
        )
    if not skipped:
        return None  # the arms differ in structure only, not in the collectives they run
    report = next((op.site for op in skipped if op.facts is choice.facts), choice.test or choice.node)
    return Finding(cause, "branch", choice.facts, report, skipped, choice=choice, cond=choice.cond)


def _skipped_ops(left, right) -> list[Op]:
    """The collectives one arm runs that the other does not, in order."""
    matcher = difflib.SequenceMatcher(a=[t.key for t in left], b=[t.key for t in right], autojunk=False)
    ops: list[Op] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            for token in left[i1:i2] + right[j1:j2]:
                if isinstance(token.item, Op) and token.item not in ops:
                    ops.append(token.item)
    return ops


def _join(a: Val, b: Val) -> Val:
    from ddplint.analysis.divergence.domain import join

    return join(a, b)


def _within_subgroups(finding: Finding) -> bool:
    """A rank test around collectives that each run on a named process group: the ranks that
    skip them may be the ones outside the group (`if mpu.is_pipeline_first_stage():` around an
    all-gather of the tensor-parallel group, whose members all share a pipeline stage). Group
    membership is not in view, so no difference can be shown. Per-rank data is another matter:
    the members of a group disagree on it as well as any ranks do."""
    ops = finding.ops + finding.other_ops
    return finding.cause is Cause.RANK and bool(ops) and all(op.subgroup for op in ops)


def _reported(modules, findings_of) -> dict[str, list[Finding]]:
    """The findings of the functions of `modules`, by the file each is reported in. A callee's
    branch is seen again from every caller: one finding is kept per place, the one seen from
    the closest function (shortest call chain), and one per reported node."""
    best: dict[int, Finding] = {}
    for module in modules:
        for scope in module.scopes:
            for finding in findings_of(module, scope):
                key = id(finding.choice.node) if finding.choice is not None else id(finding.node)
                known = best.get(key)
                if known is None or _chain_length(finding) < _chain_length(known):
                    best[key] = finding
    found: dict[str, list[Finding]] = {}
    reported: set[int] = set()
    for finding in best.values():
        if id(finding.node) in reported:
            continue
        reported.add(id(finding.node))
        found.setdefault(finding.facts.filename, []).append(finding)
    return found


def _arg_key(value: Val | None):
    if value is None:
        return None
    if value.tag in ("ddp", "fsdp", "accelerator", "deepspeed"):
        return ("tag", value.tag)
    if value.fields and not value.divergent:
        return ("fields", value.fields)  # an object some of whose attributes hold per-rank data
    if value.shard is not None:
        return ("shard", id(value.shard[1]))
    if value.rank and value.kind in (Kind.CONST, Kind.NONZERO):
        return ("rank", value.kind, value.const if isinstance(value.const, (int, bool)) else None)
    if value.kind is Kind.DATA:
        return ("data", value.null)  # per-rank data, maybe None alike on every rank
    if value.kind is Kind.CONST and type(value.const) in (bool, int, type(None), str):
        # A constant the caller passes decides the callee's tests (`create_loader(rank=-1)`).
        return ("const", type(value.const).__name__, value.const)
    if value.choices is not None and not value.rank:
        return ("choices", value.choices)  # so does one of several (`split=split` over a literal)
    return None


def _context_value(value: Val | None) -> Val | None:
    """What a callee's parameter is bound to: only what changes the callee's behaviour."""
    key = _arg_key(value)
    if key is None:
        return None
    if key[0] == "tag":
        return Val(Kind.OBJECT, tag=value.tag)
    if key[0] == "shard":
        return Val(Kind.OBJECT, shard=value.shard)
    if key[0] == "fields":
        return Val(Kind.OBJECT, fields=value.fields, origin=value.origin)
    if key[0] == "data":
        return Val(Kind.DATA, origin=value.origin, null=value.null)
    if key[0] == "const":
        return const(value.const)
    if key[0] == "choices":
        return Val(Kind.UNIFORM, choices=value.choices)
    return Val(value.kind, value.const, rank=True, origin=value.origin)


def _resynchronised(update: Update) -> bool:
    """Whether the function that makes the update then broadcasts every parameter from one rank
    (`for p in model.parameters(): dist.broadcast(p.data, src=0)`): whatever one rank class
    changed, all replicas hold the same weights again (a rank-0-driven LBFGS step)."""
    facts = update.facts
    calls = facts.all_calls()
    scope = next((c.scope for c in calls if c.node is update.node), None)
    if scope is None:
        return False
    after = facts.span(update.node)[1]
    for call in scope.calls:
        loop = call.loop
        if call.name != "torch.distributed.broadcast" or loop is None or not call.node.args:
            continue
        iterated = loop.iter.func if isinstance(loop.iter, cst.Call) else None
        parameters = isinstance(iterated, cst.Attribute) and iterated.attr.value == "parameters"
        sent = dotted_name(call.node.args[0].value) or ""
        if (
            parameters
            and loop.target
            and sent.split(".")[0] == loop.target
            and facts.span(call.node)[0] > after
        ):
            return True
    return False


def _used_again(facts: ModuleFacts, scope: Scope, seq: Seq, update: Update) -> bool:
    """Whether the replicas meet again after the update: a collective later in the function, a
    later iteration of a loop around it, or, in a function that trains nothing itself (a setup
    helper), whatever its caller does next. Loading the best weights on rank 0 after the
    function's own training loop has ended changes nothing the other ranks share."""
    if update.site_facts is not facts:
        return True
    start, end = facts.span(update.site)
    ops = [op.site for op in walk(seq) if isinstance(op, Op) and op.param is None and op.facts is facts]
    if any(facts.span(site)[0] > end for site in ops):
        return True
    trains = False
    for loop in scope.loops:
        first, last = facts.span(loop.node)
        if any(first <= facts.span(site)[0] <= last for site in ops):
            if first <= start and end <= last:
                return True
            trains = True
    return not trains


def _changes_held_object(call, callee: Scope) -> bool:
    """`self.counter.update(...)`: a method of an object held in an attribute, which stores."""
    receiver = call.receiver or ""
    return (
        receiver.startswith("self.")
        and callee.class_name is not None
        and any(name.startswith("self.") for name in callee.builders)  # the names assigned
    )


def _protocol_token(item) -> Op | None:
    """The protocol token a choice or loop holding nothing else stands for."""
    if isinstance(item, Op):
        return item if item.name.startswith("protocol ") else None
    inner = [
        x
        for x in walk((item,))
        if x is not item
        and matters(x)
        and not isinstance(x, (Choice, Loop))
        # a callee's own return ends only the callee; a raise ends the job
        and not (isinstance(x, Exit) and (x.inlined or x.kind == "abort"))
    ]
    if inner and all(isinstance(x, Op) and x.name.startswith("protocol ") for x in inner):
        return inner[0]
    return None


# What the followers of a leader/follower loop wait in for the leader's signal.
_SIGNALS = ("torch.distributed.broadcast", "torch.distributed.broadcast_object_list")


def _follower_loop(facts: ModuleFacts, scope: Scope | None) -> bool:
    """A `while` loop in a function that tests the rank, holding a broadcast and a `break`."""
    if scope is None or not scope.rank_names or scope.parent is None:
        return False  # no rank test, or the module's own statements
    if not any(call.name in _SIGNALS for call in scope.calls):
        return False  # most functions: no tree walk
    for node in own_nodes(scope.node.body):
        if not isinstance(node, cst.While):
            continue
        inside = list(own_nodes(node.body))
        broadcasts = any(isinstance(n, cst.Call) and facts.qualname(n.func) in _SIGNALS for n in inside)
        if broadcasts and any(isinstance(n, cst.Break) for n in inside):
            return True
    return False


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"
