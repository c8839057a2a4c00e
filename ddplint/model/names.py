"""Resolving names to qualified names through the module's own import statements.

A light pass of our own: libcst's QualifiedNameProvider costs several times a parse.
"""

from __future__ import annotations

from pathlib import Path

from ddplint.model.catalogue import DATA_ITERABLE_WORDS, NAMING_WORDS
from ddplint.syntax.lazycst import cst

# Private module paths that re-export under a public name; a qualified name is rewritten to the
# public one so rules match either spelling.
_CANONICAL_PREFIXES = {
    "torch.utils.data.dataloader.": "torch.utils.data.",
    "torch.utils.data.distributed.": "torch.utils.data.",
    "torch.utils.data.sampler.": "torch.utils.data.",
    "torch.utils.data.dataset.": "torch.utils.data.",
    "torch.distributed.distributed_c10d.": "torch.distributed.",
    "torch.nn.parallel.distributed.": "torch.nn.parallel.",
    "torch.distributed.fsdp.fully_sharded_data_parallel.": "torch.distributed.fsdp.",
    "torch.nn.modules.batchnorm.": "torch.nn.",
}


def canonical(name: str) -> str:
    for prefix, public in _CANONICAL_PREFIXES.items():
        if name.startswith(prefix):
            return public + name[len(prefix) :]
    return name


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    # Asked tens of thousands of times per analysis: exact types (neither class has subclasses)
    # spare the abstract base classes' isinstance, and a plain name needs no list.
    kind = type(node)
    if kind is cst.Name:
        return node.value
    if kind is not cst.Attribute:
        return None
    parts: list[str] = []
    while kind is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
        kind = type(node)
    if kind is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _module_dotted(node: cst.BaseExpression | None) -> str:
    return (dotted_name(node) or "") if node is not None else ""


def module_stem(path: Path) -> str:
    """The last part of a file's module name. A notebook's cannot be spelled in an import
    (nothing imports a notebook), so that `train.ipynb` beside `train.py` is not taken for it."""
    return f"{path.stem}-ipynb" if path.suffix == ".ipynb" else path.stem


def module_name_for(path: Path) -> str:
    """The dotted module name of a file, walking up through package directories."""
    path = path.resolve() if not path.is_absolute() else path
    parts = [] if path.name == "__init__.py" else [module_stem(path)]
    parent = path.parent
    while (parent / "__init__.py").is_file():
        parts.append(parent.name)
        if parent.parent == parent:
            break
        parent = parent.parent
    return ".".join(reversed(parts)) or path.stem


def relative_base(module_name: str, is_package: bool, level: int) -> str:
    """The package a relative import with `level` dots starts from, inside `module_name`."""
    parts = module_name.split(".") if module_name else []
    drop = level - 1 if is_package else level
    if drop > len(parts):
        return ""
    return ".".join(parts[: len(parts) - drop]) if drop else ".".join(parts)


class ImportMap:
    """Local name → qualified name, from every import statement in a module."""

    def __init__(self, module_name: str, is_package: bool = False) -> None:
        self.module_name = module_name
        self.is_package = is_package
        self.aliases: dict[str, str] = {}
        # Every binding each name was given, overridden or not (what a module may mean by it).
        self.bindings: dict[str, set[str]] = {}

    def _package(self, level: int) -> str:
        return relative_base(self.module_name, self.is_package, level)

    def add(self, stmt: cst.Import | cst.ImportFrom, *, override: bool = True) -> None:
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                asname = alias.asname.name if alias.asname is not None else None
                local = asname.value if isinstance(asname, cst.Name) else None
                self.add_import(_module_dotted(alias.name), local, override)
            return
        if isinstance(stmt.names, cst.ImportStar):
            return
        names = []
        for alias in stmt.names:
            asname = alias.asname.name if alias.asname is not None else None
            names.append((_module_dotted(alias.name), asname.value if isinstance(asname, cst.Name) else None))
        self.add_from(_module_dotted(stmt.module), len(stmt.relative), names, override)

    # The two kinds of import statement as plain data: the syntax tree of either parser feeds them.

    def add_import(self, full: str, asname: str | None, override: bool) -> None:
        """`import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`."""
        if asname is not None:
            self._bind(asname, full, override)
        else:
            head = full.split(".")[0]
            self._bind(head, head, override)

    def add_from(self, module: str, level: int, names: list[tuple[str, str | None]], override: bool) -> None:
        """`from <level dots><module> import name [as asname], ...`."""
        base = self.from_base(module, level)
        for name, asname in names:
            self._bind(asname or name, f"{base}.{name}" if base else name, override)

    def from_base(self, module: str, level: int) -> str:
        if not level:
            return module
        pkg = self._package(level)
        return f"{pkg}.{module}" if pkg and module else (pkg or module)

    def _bind(self, local: str, full: str, override: bool) -> None:
        if override or local not in self.aliases:
            self.aliases[local] = full
        self.bindings.setdefault(local, set()).add(full)

    def resolve_dotted(self, dotted: str) -> str:
        head, _, rest = dotted.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return dotted
        return canonical(f"{target}.{rest}" if rest else target)

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """Qualified name of a Name/Attribute chain, or None for anything else."""
        dotted = dotted_name(node)
        return self.resolve_dotted(dotted) if dotted is not None else None

    def imports_of(self, prefix: str) -> bool:
        return any(v == prefix or v.startswith(prefix + ".") for v in self.aliases.values())


def looks_like_data(node: cst.BaseExpression) -> bool:
    """A name that reads as a source of per-rank data: `loader`, `val_dataset`, `batches`."""
    name = dotted_name(node)
    if name is None:
        return False
    last = name.rsplit(".", 1)[-1].lower()
    if last.rsplit("_", 1)[-1] in NAMING_WORDS:
        return False  # `data_paths`, `dataset_names`: what the configuration names, not samples
    return any(word in last for word in DATA_ITERABLE_WORDS)
