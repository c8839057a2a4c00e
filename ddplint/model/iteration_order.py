"""Collections whose iteration order may differ between two processes running the same code.

Two kinds, each known from the code alone:

- a set (or frozenset) of strings or bytes: it iterates in hash order, and Python draws a new
  string-hash seed in every process unless PYTHONHASHSEED is fixed. Sets of ints, floats or
  objects of unknown type are not claimed: an int hashes to itself, and what an unknown element
  hashes by cannot be read from the code.
- a directory listing (`os.listdir`, `os.scandir`, `glob.glob`, pathlib's `glob`, `rglob`,
  `iterdir`): file-system order, which can differ between nodes (and between copies of a folder).

Orders pass through what keeps them (`list(...)`, `enumerate`, `tqdm`, `zip`, slices, list and
dict comprehensions, a dict's `items()`) and stop at `sorted(...)`. Names are followed through
their assignments, `self.` attributes through the class's, and calls of project functions through
what they return.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ddplint.model.expressions import bound_values, names_in, returned_values
from ddplint.model.facts import ModuleFacts, Scope
from ddplint.model.names import dotted_name
from ddplint.syntax.lazycst import cst

if TYPE_CHECKING:
    from ddplint.model.project import Project

HASH = "hash"  # a set of strings or bytes
DIRECTORY = "directory"  # a directory listing

LISTINGS = frozenset({"os.listdir", "os.scandir", "glob.glob", "glob.iglob"})
# pathlib's listings; `glob` only on what is known to be a path (`fs.glob`, `glob.glob` are others).
PATH_LISTINGS = frozenset({"iterdir", "rglob"})
PATH_CLASSES = frozenset(
    {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.WindowsPath", "pathlib.PurePosixPath"}
)
PATH_METHODS = frozenset(
    {"resolve", "absolute", "expanduser", "with_suffix", "with_name", "joinpath", "cwd", "home"}
)
# Calls that yield their (first) argument's items in its order.
PASS_FIRST = frozenset({"list", "tuple", "iter", "reversed", "enumerate", "dict", "collections.OrderedDict"})
PASS_FIRST_SUFFIXES = ("tqdm", "track", "progress_bar", "itertools.islice", "dict.fromkeys")
PASS_ALL = frozenset({"zip", "itertools.chain", "itertools.product"})
PASS_AFTER_FIRST = frozenset({"map", "filter", "itertools.starmap"})
VIEWS = frozenset({"keys", "values", "items"})
SET_OPERATORS = ("BitOr", "BitAnd", "BitXor", "Subtract")
SET_METHODS = frozenset({"union", "intersection", "difference", "symmetric_difference", "copy"})
# Methods of `nn.Module` that yield (name, object) pairs.
NAMED_PAIRS = frozenset({"named_parameters", "named_buffers", "named_modules", "named_children"})
STR_FUNCTIONS = frozenset(
    {
        "str",
        "repr",
        "os.path.join",
        "os.path.basename",
        "os.path.dirname",
        "os.path.abspath",
        "os.path.realpath",
        "os.path.normpath",
        "os.path.relpath",
        "os.path.expanduser",
        "os.fspath",
    }
)
STR_METHODS = frozenset(
    {
        "format",
        "join",
        "lower",
        "upper",
        "strip",
        "lstrip",
        "rstrip",
        "replace",
        "removeprefix",
        "removesuffix",
        "title",
        "casefold",
        "decode",
        "encode",
    }
)
STR_SEQUENCES = frozenset({"split", "rsplit", "splitlines"})
STR_KEYED = frozenset({"os.environ", "vars", "globals", "locals"})
# Parameter annotations, lower-cased and without their module (`typing.Set[str]` is "set").
SET_ANNOTATIONS = frozenset({"set", "frozenset", "abstractset", "mutableset"})
CONTAINER_ANNOTATIONS = SET_ANNOTATIONS | frozenset(
    {"list", "tuple", "sequence", "iterable", "collection", "mutablesequence"}
)
MAPPING_ANNOTATIONS = frozenset({"dict", "mapping", "mutablemapping", "ordereddict"})
PATH_STR_ATTRIBUTES = frozenset({"name", "stem", "suffix"})
MAX_DEPTH = 8


@dataclass(frozen=True)
class Unordered:
    """Why iterating an expression may visit its items in another order in another process."""

    kind: str  # HASH or DIRECTORY
    source: cst.CSTNode  # what makes it so: `os.listdir(path)`, `{n for n, p in ...}`, `a.keys() - b`
    facts: ModuleFacts  # where `source` is
    # `os.scandir` yields DirEntry objects, which do not compare: sort them by name.
    entries: bool = False


class IterationOrder:
    """Answers, for one project, whether an expression iterates in an order that processes share."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def locate(
        self, facts: ModuleFacts, scope: Scope, node: cst.BaseExpression
    ) -> tuple[cst.BaseExpression, Unordered] | None:
        """The part of `node` (itself, or what a wrapper such as `enumerate(...)` iterates) whose
        order may differ between processes, with the reason; None when the order is shared."""
        return _Reader(self.project, facts, scope).locate(node, 0)


class _Reader:
    def __init__(self, project: Project, facts: ModuleFacts, scope: Scope) -> None:
        self.project = project
        self.facts = facts
        self.scope = scope
        # Sets being filled (`names.add(name)`): a loop over one of them says nothing of what it
        # holds (`for name in names:` rebinds the very name `add` was given).
        self.filling: set[str] = set()

    def at(self, facts: ModuleFacts, scope: Scope) -> _Reader:
        return self if facts is self.facts and scope is self.scope else _Reader(self.project, facts, scope)

    # Orders -------------------------------------------------------------------------------

    def locate(self, node, depth: int) -> tuple[cst.BaseExpression, Unordered] | None:
        if depth > MAX_DEPTH:
            return None
        inner = self._passed_through(node)
        if inner is not None:
            for child in inner:
                found = self.locate(child, depth + 1)
                if found is not None:
                    # A dict's view is the part to sort as a whole (`sorted(d.items())`).
                    return (node, found[1]) if _is_view(node, VIEWS) else found
            return None
        found = self.unordered(node, depth)
        return (node, found) if found is not None else None

    def _passed_through(self, node) -> list[cst.BaseExpression] | None:
        """What `node` iterates in the order it comes, when `node` keeps that order."""
        if isinstance(node, cst.IfExp):
            return [node.body, node.orelse]  # either may be what the loop walks
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.DictComp)):
            return [clause.iter for clause in _clauses(node.for_in)]
        if isinstance(node, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in node.slice):
            return [node.value]
        if not isinstance(node, cst.Call):
            return None
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in VIEWS and not node.args:
            return [func.value]  # a dict's views follow its insertion order
        name = self._qualified(func)
        args = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if name is None or not args:
            return None
        if name in PASS_FIRST or name.endswith(PASS_FIRST_SUFFIXES):
            return args[:1]
        if name in PASS_ALL:
            return args
        if name in PASS_AFTER_FIRST:
            return args[1:]
        return None

    def unordered(self, node, depth: int) -> Unordered | None:
        """`node` itself iterates in an order that may differ between processes."""
        if isinstance(node, cst.Set) and len(node.elements) < 2:
            return None  # `{"loss"}`: one item comes in one order
        if isinstance(node, (cst.Set, cst.SetComp)) or self._set_call(node):
            return Unordered(HASH, node, self.facts) if self.str_items(node, depth) else None
        if isinstance(node, cst.BinaryOperation) and type(node.operator).__name__ in SET_OPERATORS:
            return self._set_operation(node, depth)
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        name = dotted_name(node)
        if name is not None:
            return self._name(node, name, depth)
        return None

    def _set_call(self, node) -> bool:
        return (
            isinstance(node, cst.Call)
            and self._qualified(node.func) in ("set", "frozenset")
            and len(node.args) == 1
            and node.args[0].keyword is None
            and not node.args[0].star
        )

    def _set_operation(self, node: cst.BinaryOperation, depth: int) -> Unordered | None:
        """`a | b`, `a.keys() - b`: a set when either side is one (or a dict's keys view)."""
        left, right = node.left, node.right
        if not (self._set_like(left, depth) or self._set_like(right, depth)):
            return None
        subtract = type(node.operator).__name__ == "Subtract"
        sides = (left,) if subtract else (left, right)
        if any(self.str_items(side, depth + 1) for side in sides):
            return Unordered(HASH, node, self.facts)
        return None

    def _set_like(self, node, depth: int) -> bool:
        if isinstance(node, (cst.Set, cst.SetComp)) or self._set_call(node):
            return True
        if _is_view(node, ("keys", "items")):
            return True
        if isinstance(node, cst.BinaryOperation) and type(node.operator).__name__ in SET_OPERATORS:
            return self._set_like(node.left, depth) or self._set_like(node.right, depth)
        found = self.unordered(node, depth + 1) if depth < MAX_DEPTH else None
        return found is not None and found.kind == HASH

    def _call(self, node: cst.Call, depth: int) -> Unordered | None:
        func = node.func
        name = self._qualified(func)
        if name in LISTINGS:
            return Unordered(DIRECTORY, node, self.facts, entries=name == "os.scandir")
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in PATH_LISTINGS or (method == "glob" and self.is_path(func.value, depth)):
                return Unordered(DIRECTORY, node, self.facts)
            if method in SET_METHODS and self._set_like(func.value, depth):
                receiver = self.unordered(func.value, depth + 1)
                if receiver is not None or any(self.str_items(a.value, depth + 1) for a in node.args):
                    return Unordered(HASH, node, self.facts)
                return None
        return self._returned(node, depth)

    def _returned(self, node: cst.Call, depth: int) -> Unordered | None:
        """A call of a project function every `return` of which gives an unordered collection."""
        dotted = dotted_name(node.func)
        if dotted is None:
            return None
        target = self.project.resolve_name(self.facts, self.scope, self.facts.imports.resolve_dotted(dotted))
        if target is None:
            return None
        values = returned_values(target[1])
        reader = self.at(*target)
        found = [reader.locate(value, depth + 1) for value in values]
        if not found or any(f is None for f in found):
            return None
        return found[0][1]

    def _name(self, node, name: str, depth: int) -> Unordered | None:
        values = bound_values(self.facts, self.scope, name)
        if not values:
            return self._annotated_set(name)
        if self._sorted_in_place(name):
            return None  # `files = os.listdir(d)` then `files.sort()`
        found = None
        for value in values:
            if value is node or self._loop_of(name, value) is not None:
                return None  # a loop's item, not the collection it walks
            if self._small_set(value):  # `names = set()`, `keys = {"energy"}`, then `.add(...)`
                if not self._filled_with_strings(name, depth):
                    return None
                found = found or Unordered(HASH, value, self.facts)
                continue
            located = self.locate(value, depth + 1)
            if located is None:
                return None
            found = found or located[1]
        return found

    def _annotated_set(self, name: str) -> Unordered | None:
        """A parameter annotated `set[str]`, `Set[str]`, `frozenset[str]`."""
        annotation = self._annotation(name)
        container, items = _container(annotation)
        if container in SET_ANNOTATIONS and items[:1] in (["str"], ["bytes"]):
            return Unordered(HASH, annotation, self.facts)
        return None

    def _annotation(self, name: str) -> cst.BaseExpression | None:
        """The annotation of the parameter `name` of the function being read."""
        node = self.scope.node
        if not isinstance(node, cst.FunctionDef):
            return None
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value == name and param.annotation is not None:
                return param.annotation.annotation
        return None

    def _loop_of(self, name: str, value) -> cst.For | None:
        """The loop `for name in value:` when that is how `value` was bound to `name` (the facts
        record the iterable as the value of a loop's target)."""
        scope: Scope | None = self.scope
        while scope is not None:
            for loop in scope.loops:
                if (
                    isinstance(loop.node, cst.For)
                    and loop.node.iter is value
                    and name in names_in(loop.node.target)
                ):
                    return loop.node
            scope = scope.parent
        return None

    def _item(self, name: str, value, depth: int) -> dict[str, bool] | None:
        """For a name bound as a loop's item: what the loop's target binds (see `_bind`)."""
        loop = self._loop_of(name, value)
        if loop is None:
            return None
        env: dict[str, bool] = {}
        self._bind(loop.target, loop.iter, env, depth + 1)
        return env

    def _sorted_in_place(self, name: str) -> bool:
        scope: Scope | None = self.scope
        while scope is not None:
            if any(call.name == f"{name}.sort" for call in scope.calls):
                return True
            scope = scope.parent
        return False

    def _small_set(self, value) -> bool:
        """An empty set, or a set literal of one item: what it holds is what is added to it."""
        if isinstance(value, cst.Set):
            return len(value.elements) < 2 and self.str_items(value, 0)
        return isinstance(value, cst.Call) and self._qualified(value.func) == "set" and not value.args

    def _filled_with_strings(self, name: str, depth: int) -> bool:
        """`names = set()` filled by `names.add(<str>)` or `names.update(<strings>)`."""
        self.filling.add(name)
        try:
            for call in self.scope.calls:
                args = [arg.value for arg in call.node.args]
                if call.name == f"{name}.add" and args and self.is_str(args[0], {}, depth + 1):
                    return True
                if call.name == f"{name}.update" and any(self.str_items(arg, depth + 1) for arg in args):
                    return True
            return False
        finally:
            self.filling.discard(name)

    # Element types ----------------------------------------------------------------------------

    def str_items(self, node, depth: int, env: dict[str, bool] | None = None) -> bool:
        """Iterating `node` yields strings or bytes (or tuples holding one): items whose hash
        follows a string's."""
        if depth > MAX_DEPTH:
            return False
        env = env or {}
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            elements = [e for e in node.elements if not isinstance(e, cst.StarredElement)]
            return (
                bool(elements)
                and len(elements) == len(node.elements)
                and all(self.is_str(e.value, env, depth + 1) for e in elements)
            )
        if isinstance(node, (cst.SetComp, cst.ListComp, cst.GeneratorExp)):
            return self.is_str(node.elt, self._bind_clauses(node.for_in, env, depth), depth + 1)
        if isinstance(node, cst.DictComp):
            return self.is_str(node.key, self._bind_clauses(node.for_in, env, depth), depth + 1)
        if isinstance(node, cst.BinaryOperation) and type(node.operator).__name__ in SET_OPERATORS:
            sides = (node.left,) if type(node.operator).__name__ == "Subtract" else (node.left, node.right)
            return any(self.str_items(side, depth + 1, env) for side in sides)
        if isinstance(node, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in node.slice):
            return self.str_items(node.value, depth + 1, env)
        if isinstance(node, cst.Call):
            return self._str_items_call(node, depth, env)
        if self.str_keys(node, depth + 1, env):
            return True  # iterating a dict yields its keys
        name = dotted_name(node)
        if name is not None:
            if name in env:
                return False  # a single item bound by a comprehension, not a collection
            values = bound_values(self.facts, self.scope, name)
            if values is None:  # a parameter: `names: list[str]`
                container, items = _container(self._annotation(name))
                return container in CONTAINER_ANNOTATIONS and items[:1] in (["str"], ["bytes"])
            return bool(values) and all(
                value is not node
                and self._loop_of(name, value) is None
                and self.str_items(value, depth + 1, env)
                for value in values
            )
        return False

    def _str_items_call(self, node: cst.Call, depth: int, env: dict[str, bool]) -> bool:
        func = node.func
        name = self._qualified(func)
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if name in LISTINGS and name != "os.scandir":
            return True
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in PATH_LISTINGS or (method == "glob" and self.is_path(func.value, depth)):
                return True  # paths hash as their text
            if method in NAMED_PAIRS or method == "state_dict":
                return True
            if method in ("keys", "items") and not node.args:
                return self.str_keys(func.value, depth + 1, env)
            if method in STR_SEQUENCES:
                return self.is_str(func.value, env, depth + 1)
            if method in SET_METHODS:
                return self.str_items(func.value, depth + 1, env)
        if name in ("set", "frozenset", "list", "tuple", "sorted", "reversed", "iter") and args:
            return self.str_items(args[0], depth + 1, env)
        return False

    def str_keys(self, node, depth: int, env: dict[str, bool] | None = None) -> bool:
        """`node` is a dict whose keys are strings."""
        if depth > MAX_DEPTH:
            return False
        env = env or {}
        if isinstance(node, cst.Dict):
            keys = [e.key for e in node.elements if isinstance(e, cst.DictElement)]
            return (
                bool(keys)
                and len(keys) == len(node.elements)
                and all(self.is_str(key, env, depth + 1) for key in keys)
            )
        if isinstance(node, cst.DictComp):
            return self.is_str(node.key, self._bind_clauses(node.for_in, env, depth), depth + 1)
        if isinstance(node, cst.Call):
            func = node.func
            name = self._qualified(func)
            if name in STR_KEYED:
                return True
            if isinstance(func, cst.Attribute) and func.attr.value == "state_dict":
                return True
            if isinstance(func, cst.Attribute) and func.attr.value == "copy" and not node.args:
                return self.str_keys(func.value, depth + 1, env)
            if name in ("dict", "collections.OrderedDict"):
                if node.args and all(a.keyword is not None for a in node.args):
                    return True  # `dict(lr=0.1, momentum=0.9)`
                first = node.args[0].value if node.args else None
                return first is not None and self._pairs_with_str_first(first, depth + 1, env)
            if name == "dict.fromkeys" and node.args:
                return self.str_items(node.args[0].value, depth + 1, env)
            return False
        name = dotted_name(node)
        if name is None or name in env:
            return False
        if name in STR_KEYED:
            return True
        values = bound_values(self.facts, self.scope, name)
        if values is None or not values:
            return self._star_kwargs(name)
        return all(
            value is not node and self._loop_of(name, value) is None and self.str_keys(value, depth + 1, env)
            for value in values
        )

    def _pairs_with_str_first(self, node, depth: int, env: dict[str, bool]) -> bool:
        """Iterating `node` yields pairs whose first item is a string: `named_parameters()`,
        `d.items()` of a dict with string keys, `zip(names, values)`."""
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in NAMED_PAIRS:
                return True
            if isinstance(func, cst.Attribute) and func.attr.value == "items" and not node.args:
                return self.str_keys(func.value, depth + 1, env)
            if self._qualified(func) == "zip" and node.args:
                return self.str_items(node.args[0].value, depth + 1, env)
        return self.str_keys(node, depth + 1, env)

    def _star_kwargs(self, name: str) -> bool:
        """`**kwargs`, or a parameter annotated `dict[str, ...]`."""
        node = self.scope.node
        if not isinstance(node, cst.FunctionDef):
            return False
        star = node.params.star_kwarg
        if isinstance(star, cst.Param) and star.name.value == name:
            return True
        container, items = _container(self._annotation(name))
        return container in MAPPING_ANNOTATIONS and items[:1] == ["str"]

    def is_str(self, node, env: dict[str, bool], depth: int) -> bool:
        """`node` is a string or bytes value (or a tuple holding one)."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return True
        if isinstance(node, cst.Tuple):
            return any(self.is_str(e.value, env, depth + 1) for e in node.elements)
        if isinstance(node, cst.BinaryOperation):
            operator = type(node.operator).__name__
            if operator == "Add":
                return self.is_str(node.left, env, depth + 1) or self.is_str(node.right, env, depth + 1)
            return operator == "Modulo" and self.is_str(node.left, env, depth + 1)
        if isinstance(node, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in node.slice):
            return self.is_str(node.value, env, depth + 1)
        if isinstance(node, cst.Call):
            func = node.func
            if self._qualified(func) in STR_FUNCTIONS:
                return True
            if isinstance(func, cst.Attribute) and func.attr.value in STR_METHODS:
                return self.is_str(func.value, env, depth + 1)
            return False
        if isinstance(node, cst.Attribute) and node.attr.value in PATH_STR_ATTRIBUTES:
            return env.get(dotted_name(node.value) or "", False)  # `path.name` of a listed path
        name = dotted_name(node)
        if name is None:
            return False
        if name in env:
            return env[name]
        values = bound_values(self.facts, self.scope, name)
        answers = [self._str_value(name, value, env, depth) for value in values or () if value is not node]
        known = [answer for answer in answers if answer is not None]
        return bool(known) and len(answers) == len(values) and all(known)

    def _str_value(self, name: str, value, env: dict[str, bool], depth: int) -> bool | None:
        """Whether one value bound to `name` is a string; None: it tells nothing (an item of a
        set being filled)."""
        if dotted_name(value) in self.filling and self._loop_of(name, value) is not None:
            return None
        item = self._item(name, value, depth)
        if item is not None:
            return item.get(name, False)  # `for name in names:` over strings
        return self.is_str(value, env, depth + 1)

    def _bind_clauses(self, clause, env: dict[str, bool], depth: int) -> dict[str, bool]:
        """Names the `for` clauses of a comprehension bind, each with whether it holds a string."""
        bound = dict(env)
        for part in _clauses(clause):
            self._bind(part.target, part.iter, bound, depth + 1)
        return bound

    def _bind(self, target, iterable, env: dict[str, bool], depth: int) -> None:
        if isinstance(target, cst.Name):
            env[target.value] = self.str_items(iterable, depth + 1, env)
            return
        if not isinstance(target, (cst.Tuple, cst.List)):
            return
        names = [e.value for e in target.elements]
        parts: list[bool] = [False] * len(names)
        if isinstance(iterable, cst.Call):
            func = iterable.func
            method = func.attr.value if isinstance(func, cst.Attribute) else None
            name = self._qualified(func)
            args = [a.value for a in iterable.args if a.keyword is None and not a.star]
            if method in NAMED_PAIRS or (method == "items" and self.str_keys(func.value, depth + 1, env)):
                parts[0] = True
            elif name == "enumerate" and args and len(names) == 2:
                self._bind(names[1], args[0], env, depth + 1)
                env.update({names[0].value: False} if isinstance(names[0], cst.Name) else {})
                return
            elif name == "zip" and len(args) == len(names):
                for element, arg in zip(names, args):
                    self._bind(element, arg, env, depth + 1)
                return
        for element, holds_str in zip(names, parts):
            if isinstance(element, cst.Name):
                env[element.value] = holds_str

    # Paths ----------------------------------------------------------------------------------

    def is_path(self, node, depth: int) -> bool:
        """`node` is a pathlib path: `Path(...)`, `root / "x"`, `p.parent`, a name bound to one,
        a parameter annotated `Path`."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(node, cst.Call):
            func = node.func
            if self._qualified(func) in PATH_CLASSES:
                return True
            if isinstance(func, cst.Attribute) and func.attr.value in PATH_METHODS:
                return self._qualified(func.value) in PATH_CLASSES or self.is_path(func.value, depth + 1)
            return False
        if isinstance(node, cst.BinaryOperation) and type(node.operator).__name__ == "Divide":
            return self.is_path(node.left, depth + 1)
        if isinstance(node, cst.Attribute) and node.attr.value == "parent":
            return self.is_path(node.value, depth + 1)
        name = dotted_name(node)
        if name is None:
            return False
        values = bound_values(self.facts, self.scope, name)
        if not values:
            return self._annotated_path(name)
        return all(value is not node and self._path_value(name, value, depth) for value in values)

    def _path_value(self, name: str, value, depth: int) -> bool:
        loop = self._loop_of(name, value)
        if loop is None:
            return self.is_path(value, depth + 1)
        # `for sub in root.iterdir():` yields paths
        iterable = loop.iter
        return (
            isinstance(loop.target, cst.Name)
            and isinstance(iterable, cst.Call)
            and isinstance(iterable.func, cst.Attribute)
            and iterable.func.attr.value in (*PATH_LISTINGS, "glob")
            and self.is_path(iterable.func.value, depth + 1)
        )

    def _annotated_path(self, name: str) -> bool:
        annotation = self._annotation(name)
        return annotation is not None and self._qualified(annotation) in PATH_CLASSES

    def _qualified(self, node) -> str | None:
        return self.facts.qualname(node)


def _container(annotation) -> tuple[str | None, list[str | None]]:
    """`("list", ["str"])` for `list[str]` or `typing.List[str]`; `(None, [])` for anything else."""
    if not isinstance(annotation, cst.Subscript):
        return None, []
    head = (dotted_name(annotation.value) or "").rsplit(".", 1)[-1].lower()
    items = [
        dotted_name(element.slice.value) if isinstance(element.slice, cst.Index) else None
        for element in annotation.slice
    ]
    return head, items


def _is_view(node, views) -> bool:
    """`d.keys()`, `d.items()`: a dict's view, which set operators turn into a set."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in views
        and not node.args
    )


def _clauses(clause):
    while clause is not None:
        yield clause
        clause = clause.inner_for_in
