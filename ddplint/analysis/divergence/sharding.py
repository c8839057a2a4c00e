"""Where data is split per rank without padding: the source of uneven per-rank step counts.

`DistributedSampler` pads every rank to `ceil(N / world_size)` items, so it never is. A manual
split is when the length is not a multiple of the world size: `files[rank::world_size]`,
`np.array_split(x, world_size)[rank]`, `itertools.islice(it, rank, None, world_size)`, an
`__iter__` that skips the items of the other ranks, a sampler subclass that slices its indices
by rank without first padding them.
"""

from __future__ import annotations

from ddplint.model import catalogue as cat
from ddplint.model.facts import ModuleFacts, Scope, child_nodes
from ddplint.model.names import dotted_name
from ddplint.syntax.lazycst import cst

SPLIT_CALLS = frozenset(
    {
        "numpy.array_split",
        "torch.chunk",
        "torch.tensor_split",
        # `torch.split(x, ceil(n / world))[rank]`: chunks of that size, the last one shorter
        "torch.split",
        "more_itertools.divide",
        "more_itertools.distribute",
    }
)
ISLICE = frozenset({"itertools.islice"})
# `range(rank, n, world_size)`: indices from the rank, by the world size.
STRIDED_RANGES = frozenset({"range", "numpy.arange", "torch.arange"})
# Words that mark the rank in a split (`self.rank`, `rank`, `process_index`).
SPLIT_RANK_WORDS = cat.RANK_NAMES | {"process_index", "worker_rank", "get_rank"}


def mentions_rank(node: cst.CSTNode, words: frozenset[str] = SPLIT_RANK_WORDS) -> bool:
    """A name or attribute in `words` anywhere under `node`."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and current.value in words:
            return True
        if isinstance(current, cst.Attribute) and current.attr.value in words:
            return True
        stack.extend(child_nodes(current))
    return False


def padded(facts: ModuleFacts, scope: Scope, bases: set[str] | None = None) -> bool:
    """The function evens out its indices before slicing (the seeds' EvenSampler, torch's own).

    Padding grows the list that is sliced (`indices += indices[:pad]`, `indices.extend(...)`),
    or sizes it to the sampler's `total_size`. `bases`: the names that are sliced (all names
    when unknown).
    """
    stack = [scope.node]
    while stack:
        node = stack.pop()
        grows = isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign)
        if grows and (bases is None or dotted_name(node.target) in bases):
            return True
        if isinstance(node, cst.Name) and node.value in ("total_size", "num_samples"):
            return True
        if isinstance(node, cst.Attribute) and node.attr.value == "total_size":
            return True
        extends = (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "extend"
        )
        if extends and (bases is None or dotted_name(node.func.value) in bases):
            return True
        stack.extend(child_nodes(node))
    return False


def sliced_names(node: cst.Subscript) -> set[str]:
    name = dotted_name(node.value)
    return {name} if name else set()


def strided_slice(node: cst.Subscript) -> bool:
    """`x[rank::world]` or `x[rank:n:world]`: every world-th item starting at the rank."""
    for element in node.slice:
        part = element.slice
        strided = isinstance(part, cst.Slice) and part.step is not None and part.lower is not None
        if strided and mentions_rank(part.lower):
            return True
    return False


def ragged_block(facts: ModuleFacts, scope: Scope, node: cst.Subscript) -> bool:
    """`x[rank * n:(rank + 1) * n]` with `n` rounded up: the last rank's block is short."""
    for element in node.slice:
        part = element.slice
        if not isinstance(part, cst.Slice) or part.step is not None:
            continue
        if part.lower is None or part.upper is None:
            continue
        if not (mentions_rank(part.lower) and mentions_rank(part.upper)):
            continue
        for bound in (part.lower, part.upper):
            for name in _names(bound):
                if any(_rounds_up(facts, value) for value in facts.values_of(scope, name)):
                    return True
    return False


def _names(node: cst.CSTNode) -> list[str]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.append(current.value)
        stack.extend(child_nodes(current))
    return found


def _rounds_up(facts: ModuleFacts, value: cst.CSTNode) -> bool:
    """`math.ceil(n / w)`, `(n + w - 1) // w`, `-(-n // w)`."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call) and (facts.qualname(current.func) or "").endswith("ceil"):
            return True
        if isinstance(current, cst.BinaryOperation) and isinstance(current.operator, cst.FloorDivide):
            left = current.left
            if isinstance(left, cst.BinaryOperation) and isinstance(left.operator, (cst.Add, cst.Subtract)):
                return True
            if isinstance(left, cst.UnaryOperation) and isinstance(left.operator, cst.Minus):
                return True
        stack.extend(child_nodes(current))
    return False


def split_then_index(facts: ModuleFacts, scope: Scope, node: cst.Subscript) -> bool:
    """`np.array_split(x, world)[rank]`, directly or through a name bound to the split."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return False
    if not mentions_rank(node.slice[0].slice.value):
        return False
    base = node.value
    candidates = [base]
    name = dotted_name(base)
    if name is not None:
        candidates.extend(facts.values_of(scope, name))
    for value in candidates:
        if isinstance(value, cst.Call) and facts.qualname(value.func) in SPLIT_CALLS:
            return True
    return False


def shard_site(facts: ModuleFacts, scope: Scope) -> cst.CSTNode | None:
    """The split inside a generator or `__iter__` that yields only this rank's items."""
    stack = [scope.node.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        split = isinstance(node, cst.Subscript) and (
            strided_slice(node) or split_then_index(facts, scope, node)
        )
        if split and not padded(facts, scope, sliced_names(node)):
            return node
        if is_rank_islice(facts, node):
            return node
        if isinstance(node, cst.If) and _skips_other_ranks(node) and not padded(facts, scope, set()):
            return node.test
        stack.extend(child_nodes(node))
    return None


def is_rank_islice(facts: ModuleFacts, node: cst.CSTNode) -> bool:
    """`itertools.islice(it, rank, None, world_size)`."""
    return (
        isinstance(node, cst.Call)
        and facts.qualname(node.func) in ISLICE
        and len(node.args) >= 2
        and mentions_rank(node.args[1].value)
    )


def _skips_other_ranks(node: cst.If) -> bool:
    """`if i % world_size != rank: continue`."""
    test = node.test
    has_modulo = False
    stack = [test]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.BinaryOperation) and isinstance(current.operator, cst.Modulo):
            has_modulo = True
        stack.extend(child_nodes(current))
    if not (has_modulo and mentions_rank(test)):
        return False
    body = node.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for stmt in statements:
        if isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(s, cst.Continue) for s in stmt.body):
            return True
        if isinstance(stmt, cst.SimpleStatementSuite) and any(isinstance(s, cst.Continue) for s in stmt.body):
            return True
    return False


def class_shard_site(project, facts: ModuleFacts, class_name: str) -> tuple | None:
    """A dataset or sampler class whose iteration yields only this rank's share, unpadded."""
    found = project.method(facts, class_name, "__iter__")
    if found is None:
        return None
    owner_facts, scope = found
    site = shard_site(owner_facts, scope)
    return (owner_facts, site) if site is not None else None
