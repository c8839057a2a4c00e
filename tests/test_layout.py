"""The package's layers: imports point one way, and no module imports itself back through others.

Counted from the import statements themselves, those inside functions included (a cycle held
apart by a late import is still a cycle to read); imports under `if TYPE_CHECKING:` run never.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ddplint"

# Lower layers never import higher ones. The leaves are imported by every layer.
LAYERS = [
    ("ddplint._meta", "ddplint.settings", "ddplint.diagnostics"),
    ("ddplint.syntax",),
    ("ddplint.model",),
    ("ddplint.analysis",),
    ("ddplint.rules", "ddplint.config"),
    ("ddplint.engine",),
    ("ddplint.run",),
    ("ddplint.report",),
    ("ddplint.integrations",),
    ("ddplint", "ddplint.__main__"),
]


def module_names() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return hidden


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports, anywhere in its code: for `from a import b`,
    the module `a.b` when there is one, else `a` itself."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hidden = _type_checking_only(tree)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            spelled = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            spelled = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
            ]
        else:
            continue
        for dotted in spelled:
            while dotted and dotted not in modules:
                dotted = dotted.rpartition(".")[0]
            if dotted and dotted != name:
                targets.add(dotted)
    return targets


def graph() -> dict[str, set[str]]:
    modules = module_names()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def layer_of(module: str) -> int:
    best, rank = -1, -1
    for position, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), position
    return rank


def test_no_module_imports_itself_back():
    assert cycles(graph()) == []


def test_imports_point_down_the_layers():
    upward = [
        f"{module} -> {target}"
        for module, targets in graph().items()
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def test_every_module_has_a_layer():
    assert [name for name in module_names() if layer_of(name) < 0] == []


def test_few_modules_stay_at_the_package_root():
    assert len(list(PACKAGE.glob("*.py"))) <= 10
