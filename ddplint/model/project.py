"""The project: every module of one run, and how calls between them resolve."""

from __future__ import annotations

import weakref
from bisect import bisect_left
from collections.abc import Callable, Iterable
from typing import TypeVar

from ddplint.model.facts import CallSite, ModuleFacts, Scope
from ddplint.model.locations import Aliases
from ddplint.model.names import dotted_name
from ddplint.syntax.lazycst import cst

T = TypeVar("T")


class Project:
    def __init__(self, modules: Iterable[ModuleFacts] = ()) -> None:
        # By module name, for imports; two scripts with one name (`a/train.py`, `b/train.py`)
        # keep the first for lookups, and every file is still checked (`files`).
        self.modules: dict[str, ModuleFacts] = {}
        self.files: dict[str, ModuleFacts] = {}
        # Modules of the run that were not loaded (see ddplint.run.prefilter), with what their
        # import statements bind.
        self.unloaded: dict[str, tuple[str, ...]] = {}
        # What analyses computed from the modules as they are now (see `derived`).
        self._derived: dict[object, object] = {}
        for facts in modules:
            self.add(facts)

    def add(self, facts: ModuleFacts) -> None:
        self.modules.setdefault(facts.module_name, facts)
        self.files[facts.filename] = facts
        self._derived = {}

    def replace(self, facts: ModuleFacts) -> None:
        if self.modules.get(facts.module_name) is self.files.get(facts.filename):
            self.modules[facts.module_name] = facts
        self.files[facts.filename] = facts
        self._derived = {}

    def derived(self, key: object, build: Callable[[], T]) -> T:
        """What `build` computes from the project's modules, built once and dropped when a
        module is added or replaced: the analyses keep their results here."""
        if key not in self._derived:
            self._derived[key] = build()
        return self._derived[key]  # type: ignore[return-value]

    def extent(self) -> tuple:
        """The size of each derived table that may hold nodes: every table a derived result
        keeps as an attribute, but those its class names in NODE_FREE, and every table of
        `_remembered` but this module's own (which hold modules, functions and names). A check
        that leaves it as it was kept no node of what it read (see ddplint.run.group)."""
        sizes: list[tuple] = []
        for key, value in self._derived.items():
            if key in _NODE_FREE_TABLES:
                continue
            if isinstance(value, (dict, list, set)):
                sizes.append((key, len(value)))
                continue
            free = getattr(value, "NODE_FREE", frozenset())
            for name in _attributes(value):
                if name not in free:
                    sizes.append((key, name, _size(getattr(value, name, None))))
        return tuple(sizes)

    def _remembered(self, table: str, key: object, build: Callable[[], T]) -> T:
        """`build()`'s result under `key` in one of the project's derived tables (dropped, like
        every derived result, when a module is added or replaced)."""
        memo = self.derived(table, dict)
        if key not in memo:
            memo[key] = build()
        return memo[key]

    def runs_alone(self, facts: ModuleFacts) -> bool:
        """Whether no function of another module can run this module's code: no other module
        imports it or spells a call through its name (`train.main()`; resolution follows such
        names, imported or not), and it defines no class (`guess_method` finds methods by their
        class's name). Module names are compared by their last part, as a folder without
        `__init__.py` may know a module by a shorter name. A training script run alone: only
        its own calls run its functions."""
        if facts.class_bases:
            return False
        spellers = self.derived("spellers", self._spellers)
        return not (spellers.get(facts.module_name.rsplit(".", 1)[-1], set()) - {facts.filename})

    def _spellers(self) -> dict[str, set[str]]:
        """A name → the files whose imports or calls spell it as a part (see `runs_alone`)."""
        found: dict[str, set[str]] = {}
        for module in self.files.values():
            for name in _spelled(module):
                found.setdefault(name, set()).add(module.filename)
        return found

    def resolutions(self) -> dict[str, dict[tuple, tuple[ModuleFacts, Scope] | None]]:
        """The calls resolved so far, by table: (module, scope, name) → what runs."""
        return {table: dict(self._derived.get(table, {})) for table in _RESOLUTIONS}

    def adopt_resolutions(self, tables: dict[str, dict[tuple, tuple[ModuleFacts, Scope] | None]]) -> None:
        """Take calls resolved in an earlier state of the project, for calls made and functions
        run in modules it holds unchanged, its other modules showing the same interface (see
        `interface`): resolution reads nothing else of them, so it would find the same."""
        for table, entries in tables.items():
            self.derived(table, dict).update(entries)

    def calls_to(self, scope: Scope) -> list[tuple[ModuleFacts, CallSite]]:
        """Every call that runs `scope`, with its module, in the order of `modules` and of each
        module's calls; all calls are resolved once, the first time any function is asked for."""
        index = self.derived("calls_to", lambda: index_calls(self, self.modules.values()))
        return index.get(id(scope), [])

    def module(self, name: str, importer: ModuleFacts | None = None) -> ModuleFacts | None:
        """The module importing `name` from `importer` loads: the one packages name so, else
        one in folders without `__init__.py` (see ddplint.model.locations)."""
        found = self.modules.get(name)
        if found is not None or importer is None:
            return found
        aliases = self.derived("aliases", self._aliases)
        return aliases.resolve(importer.filename, importer.module_name, name) if aliases else None

    def _aliases(self) -> Aliases[ModuleFacts]:
        return Aliases((facts.filename, facts.module_name, facts) for facts in self.files.values())

    def lookup(
        self, qualname: str, importer: ModuleFacts | None = None, depth: int = 0
    ) -> tuple[ModuleFacts, Scope] | None:
        """The function or method a qualified name, spelled in `importer`, denotes, if the
        project defines it."""
        if depth > 4:
            return None
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self.module(".".join(parts[:cut]), importer)
            if module is None:
                continue
            rest = ".".join(parts[cut:])
            scope = module.functions.get(rest)
            if scope is not None:
                return module, scope
            # A package re-exporting a name: `from .engine import train_one_epoch`.
            head, _, tail = rest.partition(".")
            target = module.imports.aliases.get(head)
            if target is not None and target != qualname:
                return self.lookup(f"{target}.{tail}" if tail else target, module, depth + 1)
            return None
        return None

    def resolve_call(self, facts: ModuleFacts, call: CallSite) -> tuple[ModuleFacts, Scope] | None:
        """The project function a call runs, for plain, imported and `self.` calls."""
        if call.name is None:
            return None
        return self.resolve_name(facts, call.scope, call.name)

    def resolve_name(self, facts: ModuleFacts, scope: Scope, name: str) -> tuple[ModuleFacts, Scope] | None:
        """What calling `name` (import-resolved dotted spelling) from `scope` runs, if ours."""
        # Asked again for every call each time a function is summarised, for each rank class
        # and calling context: resolved once per project state (modules and scopes compare by
        # identity).
        key = (facts, scope, name)
        return self._remembered("resolved names", key, lambda: self._resolve_name(facts, scope, name))

    def _resolve_name(self, facts: ModuleFacts, scope: Scope, name: str) -> tuple[ModuleFacts, Scope] | None:
        if name.startswith("self.") and scope.class_name is not None:
            method = name[5:]
            if "." not in method:
                return self.method(facts, scope.class_name, method)
            # `self.checkpointer.save(...)` where `self.checkpointer = Checkpointer(...)`.
            return self._instance_method(facts, scope, name)
        if "." not in name:
            # A nested function defined in an enclosing scope, then a module-level one.
            enclosing: Scope | None = scope
            while enclosing is not None and enclosing.parent is not None:
                nested = facts.functions.get(f"{enclosing.name}.<locals>.{name}")
                if nested is not None:
                    return facts, nested
                enclosing = enclosing.parent
            found = facts.functions.get(name)
            if found is not None:
                return facts, found
            # A class instantiated: its __init__ runs.
            if name in facts.class_bases:
                return self.method(facts, name, "__init__")
            # An instance of a project class called: `early_stopping(val_loss)` runs `__call__`.
            return self._instance_method(facts, scope, f"{name}.__call__")
        local = facts.functions.get(name)
        if local is not None:  # `Class.method(...)` within the module
            return facts, local
        instance = self._instance_method(facts, scope, name)
        if instance is not None:
            return instance
        found = self.lookup(name, facts)
        if found is None:
            head, _, tail = name.rpartition(".")
            module = self.module(head, facts)
            if module is not None and tail in module.class_bases:
                return self.method(module, tail, "__init__")
        return found

    def _instance_method(self, facts: ModuleFacts, scope: Scope, name: str):
        """`meter.all_reduce()` where `meter = AverageMeter(...)`, a class of the project."""
        head, _, method = name.rpartition(".")
        if not head or head == "self" or head.count(".") > 1:
            return None
        return self._constructed_instance_method(facts, scope, head, method)

    def guess_method(self, facts: ModuleFacts, scope: Scope, name: str) -> tuple[ModuleFacts, Scope] | None:
        """`self.checkpointer.save_checkpoint()` where nothing in view builds the receiver (a
        constructor parameter): the method of the one project class named like the receiver
        (`DistributedCheckpointer`). A guess: good for the collectives the call may run, not for
        what it returns.

        Asked as often as `resolve_name`, but not remembered by call: what is looked up below is
        remembered once per program, spelling and method, and the tests before it cost less than
        a table of every call's answer would (18 of the 142 MB the check of all of torch added)."""
        head, _, method = name.rpartition(".")
        if not head or head == "self" or head.count(".") > 1:
            return None
        if any(built is not None for built in facts.builders_of(scope, head)):
            return None  # built by something in view, which resolution already followed
        spelled = _squashed(head.rsplit(".", 1)[-1])
        if len(spelled) < 5:
            return None
        program = self.derived("programs", self._programs).get(facts.filename, ())
        # Asked alike by every receiver spelled so in the program (`self.module`, `model.module`).
        key = (id(program), spelled, method)
        return self._remembered(
            "methods named", key, lambda: self._one_method_named(program, spelled, method)
        )

    def _one_method_named(
        self, program: tuple[ModuleFacts, ...], spelled: str, method: str
    ) -> tuple[ModuleFacts, Scope] | None:
        """`method` of the one class of `program` named like `spelled` that has it, if only one has."""
        found = [
            target
            for module, class_name in self._classes_named(program, spelled)
            if (target := self.method(module, class_name, method)) is not None
        ]
        return found[0] if len(found) == 1 else None

    def _classes_named(self, program: tuple[ModuleFacts, ...], spelled: str) -> list[tuple[ModuleFacts, str]]:
        """The classes of `program` whose squashed name ends or starts with `spelled`
        (`early_stopper` → `EarlyStopper`, `epoch_counter` → `EpochCounterWithStopper`); asked at
        many calls: each program's classes are indexed once."""
        return self._remembered("class index", id(program), lambda: _ClassIndex(program)).named(spelled)

    def _programs(self) -> dict[str, tuple[ModuleFacts, ...]]:
        """File → the modules import-connected with it (either way): one program. A guess by
        name looks only there, so it never depends on what else a run happens to check."""
        linked: dict[str, set[str]] = {filename: set() for filename in self.files}
        for filename, facts in self.files.items():
            for targets in facts.imports.bindings.values():
                for target in targets:
                    other = self._module_of(target, facts)
                    if other is not None and other.filename != filename:
                        linked[filename].add(other.filename)
                        linked[other.filename].add(filename)
        programs: dict[str, tuple[ModuleFacts, ...]] = {}
        for start in sorted(linked):
            if start in programs:
                continue
            members, stack = {start}, [start]
            while stack:
                for other in linked[stack.pop()] - members:
                    members.add(other)
                    stack.append(other)
            program = tuple(self.files[m] for m in sorted(members))
            for member in members:
                programs[member] = program
        return programs

    def _module_of(self, qualified: str, importer: ModuleFacts) -> ModuleFacts | None:
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            module = self.module(".".join(parts[:cut]), importer)
            if module is not None:
                return module
        return None

    def _constructed_instance_method(self, facts: ModuleFacts, scope: Scope, head: str, method: str):
        for spelled in facts.builders_of(scope, head):
            if not spelled:
                continue  # no call, or no name it calls
            if spelled in facts.class_bases:
                found = self.method(facts, spelled, method)
            else:
                module_name, _, class_name = facts.imports.resolve_dotted(spelled).rpartition(".")
                module = self.module(module_name, facts)
                found = (
                    self.method(module, class_name, method)
                    if module and class_name in module.class_bases
                    else None
                )
            if found is not None:
                return found
        return None

    def method(self, facts: ModuleFacts, class_name: str, method: str, depth: int = 0):
        scope = facts.functions.get(f"{class_name}.{method}")
        if scope is not None:
            return facts, scope
        if depth > 4:
            return None
        # Base classes defined in the same module or imported from the project.
        for base_name in facts.class_bases.get(class_name, ()):
            if base_name is None:
                continue
            if base_name in facts.class_bases:
                found = self.method(facts, base_name, method, depth + 1)
            else:
                found = self.lookup(f"{base_name}.{method}", facts)
            if found is not None:
                return found
        return None

    def inherits(self, facts: ModuleFacts, class_name: str, wanted: frozenset[str], depth: int = 0) -> bool:
        """Whether the class, or a base of it the project defines, names one of the `wanted`
        import-resolved bases (`unittest.TestCase`)."""
        if depth > 4:
            return False
        for base_name in facts.class_bases.get(class_name, ()):
            if base_name is None:
                continue
            if base_name in wanted:
                return True
            if base_name in facts.class_bases:
                found = self.inherits(facts, base_name, wanted, depth + 1)
            else:
                module_name, _, base_class = base_name.rpartition(".")
                module = self.module(module_name, facts)
                found = module is not None and self.inherits(module, base_class, wanted, depth + 1)
            if found:
                return True
        return False

    def class_field(
        self, facts: ModuleFacts, class_name: str, name: str, depth: int = 0
    ) -> tuple[ModuleFacts, cst.BaseExpression] | None:
        """The value a class body gives a field (`rank: int = Field(default_factory=get_rank)`,
        `rank = 0`), in the class or its project bases: what `self.rank` holds when no method
        assigns it (pydantic models, dataclasses, plain class attributes)."""
        node = facts.classes.get(class_name)
        if node is None or depth > 4:
            return None
        for statement in node.body.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue  # methods, nested classes, `if` blocks: no field declared there
            for small in statement.body:
                if isinstance(small, cst.AnnAssign):
                    target, value = small.target, small.value
                elif isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target, value = small.targets[0].target, small.value
                else:
                    continue
                if value is not None and dotted_name(target) == name:
                    return facts, value
        for base_name in facts.class_bases[class_name]:
            if base_name is None:
                continue
            if base_name in facts.class_bases:
                found = self.class_field(facts, base_name, name, depth + 1)
            else:
                module_name, _, base_class = base_name.rpartition(".")
                module = self.module(module_name, facts)
                found = self.class_field(module, base_class, name, depth + 1) if module else None
            if found is not None:
                return found
        return None

    def callees(self, facts: ModuleFacts, scope: Scope) -> Iterable[tuple[CallSite, ModuleFacts, Scope]]:
        for call in scope.calls:
            target = self.resolve_call(facts, call)
            if target is not None:
                yield call, target[0], target[1]


def interface(facts: ModuleFacts) -> tuple:
    """What resolving a call in another module can read of this one: its names, the functions
    and classes it defines, each class's bases, and what its imports bind (`lookup`, `method`,
    the programs of `guess_method`). Two versions of a module with the same interface resolve
    every call of the other modules alike, but to their own scopes."""
    imports = facts.imports
    return (
        facts.filename,
        facts.module_name,
        tuple(facts.functions),
        tuple(facts.class_bases.items()),
        tuple(imports.aliases.items()),
        tuple((name, tuple(sorted(targets))) for name, targets in imports.bindings.items()),
    )


# Each module → the names its imports and its calls spell as a part, but the names called
# (`train` in `train.main()`): the same for a module's facts in every check of an editor session.
_SPELLED: weakref.WeakKeyDictionary[ModuleFacts, frozenset[str]] = weakref.WeakKeyDictionary()


def _spelled(module: ModuleFacts) -> frozenset[str]:
    found = _SPELLED.get(module)
    if found is None:
        names = {part for target in module.imports.aliases.values() for part in target.split(".")}
        names.update(part for call in module.all_calls() if call.name for part in call.name.split(".")[:-1])
        found = _SPELLED[module] = frozenset(names)
    return found


def index_calls(
    project: Project, modules: Iterable[ModuleFacts], skip: Callable[[CallSite], bool] = lambda call: False
) -> dict[int, list[tuple[ModuleFacts, CallSite]]]:
    """The calls of `modules` (minus those `skip` rules out) by the id of the project function
    each runs; the functions live as long as the project that holds their modules."""
    found: dict[int, list[tuple[ModuleFacts, CallSite]]] = {}
    for facts in list(modules):
        for call in facts.all_calls():
            if skip(call):
                continue
            target = project.resolve_call(facts, call)
            if target is not None:
                found.setdefault(id(target[1]), []).append((facts, call))
    return found


# The tables of `_remembered` whose entries are calls resolved: (module, scope, name) → what runs.
_RESOLUTIONS = ("resolved names",)
# The derived tables of the project's own: modules, functions and names, never a node.
_NODE_FREE_TABLES = frozenset(
    {"resolved names", "methods named", "class index", "programs", "calls_to", "aliases", "spellers"}
)


def _attributes(obj: object) -> list[str]:
    slots = [name for cls in type(obj).__mro__ for name in getattr(cls, "__slots__", ())]
    return [*getattr(obj, "__dict__", {}), *slots]


def _size(value: object) -> int:
    """How many entries a table has; -1 for one not built yet, 0 for what is no table."""
    if value is None:
        return -1
    return len(value) if isinstance(value, (dict, list, set, tuple, frozenset)) else 0


class _ClassIndex:
    """The classes of one program by squashed name, sorted forwards and backwards: a name that
    starts or ends with a receiver's is found by bisection. Scanning them all for every receiver
    was half of the check of all of torch (thousands of classes, thousands of receivers)."""

    def __init__(self, program: tuple[ModuleFacts, ...]) -> None:
        self.classes = [(module, name) for module in program for name in module.class_bases]
        squashed = [_squashed(name) for _, name in self.classes]
        self.forwards = sorted((name, index) for index, name in enumerate(squashed))
        self.backwards = sorted((name[::-1], index) for index, name in enumerate(squashed))

    def named(self, spelled: str) -> list[tuple[ModuleFacts, str]]:
        """The classes whose squashed name starts or ends with `spelled`, in the program's order."""
        found = _starting(self.forwards, spelled) | _starting(self.backwards, spelled[::-1])
        return [self.classes[index] for index in sorted(found)]


def _starting(names: list[tuple[str, int]], prefix: str) -> set[int]:
    found = set()
    for at in range(bisect_left(names, (prefix,)), len(names)):
        name, index = names[at]
        if not name.startswith(prefix):
            break
        found.add(index)
    return found


def _squashed(name: str) -> str:
    """`early_stopping`, `EarlyStopping` → `earlystopping`: how a variable names its class."""
    return name.replace("_", "").lower()
