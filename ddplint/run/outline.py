"""A module's outline: its top-level definitions, the names each one spells, and its imports.

Read with CPython's own parser (`ast`, about ten times faster than libcst) and dropped at once:
the prefilter links definitions across modules with it, so that only the modules holding a
definition that can matter to a finding are parsed with libcst (see ddplint.run.prefilter).
Names are taken from each definition's text, strings and comments included: spelling too much
costs a parse, never a finding.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

from ddplint.model.names import ImportMap
from ddplint.syntax.pieces import first_line

MODULE = ""  # the module's own statements, as one definition

# A dotted name as written, `a.b .c` across lines inside brackets included.
_DOTTED = re.compile(r"[^\W\d]\w*(?:\s*\.\s*[^\W\d]\w*)*")
_SPACE = re.compile(r"\s+")
_COMPOUND_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
# Clauses holding their statements one level down: `except` handlers and `match` cases.
_CLAUSES = tuple(c for c in (ast.excepthandler, getattr(ast, "match_case", None)) if c is not None)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_MATCH_MAPPING = getattr(ast, "MatchMapping", ())


@dataclass(frozen=True)
class Outline:
    # Definition (a top-level function or class, or MODULE) → the dotted names its text spells.
    names: dict[str, frozenset[str]]
    # Definitions whose text, read with the module's imports, spells a trigger.
    triggered: frozenset[str]
    # Every binding each imported local name may have (a name imported in two branches has two).
    bindings: dict[str, frozenset[str]]
    stars: tuple[str, ...]  # modules imported with `*`
    # What the module's import statements bind, exactly as the facts walker records them.
    imports: tuple[str, ...]
    # Every name the module's own statements (or a `global` declaration) may bind.
    variables: frozenset[str]

    def to_json(self) -> dict:
        return {
            "names": {k: sorted(v) for k, v in self.names.items()},
            "triggered": sorted(self.triggered),
            "bindings": {k: sorted(v) for k, v in self.bindings.items()},
            "stars": list(self.stars),
            "imports": list(self.imports),
            "variables": sorted(self.variables),
        }

    @classmethod
    def from_json(cls, data: dict) -> Outline:
        return cls(
            names={k: frozenset(v) for k, v in data["names"].items()},
            triggered=frozenset(data["triggered"]),
            bindings={k: frozenset(v) for k, v in data["bindings"].items()},
            stars=tuple(data["stars"]),
            imports=tuple(data["imports"]),
            variables=frozenset(data["variables"]),
        )


def outline(
    text: str,
    filename: str,
    module_name: str,
    is_package: bool,
    mentions,
    seed_methods: frozenset[str] = frozenset(),
) -> Outline:
    """The outline of a module's source; `mentions(bytes)` says whether text spells a trigger,
    and a call of a method named in `seed_methods` (`loss.backward()`) makes a definition one too.

    Raises SyntaxError (or ValueError, RecursionError, MemoryError) when CPython cannot parse it.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes etc.: not ours to report
        tree = ast.parse(text, filename)
    imports = ImportMap(module_name, is_package)
    stars: list[str] = []
    import_lines: list[str] = []
    declared: set[str] = set()  # names a `global` statement anywhere declares
    lines = text.splitlines(keepends=True)

    def segment(node: ast.AST) -> str:
        return "".join(lines[first_line(node) - 1 : node.end_lineno])

    def visit(statements: list[ast.stmt], top_scope: bool) -> None:
        # In source order, as the facts walker binds them: a function's own imports never
        # override the module's.
        for stmt in statements:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    imports.add_import(alias.name, alias.asname, top_scope)
                import_lines.append(segment(stmt))
            elif isinstance(stmt, ast.ImportFrom):
                pairs = [(alias.name, alias.asname) for alias in stmt.names]
                if pairs[0][0] == "*":  # binds nothing by name (as in the facts walker)
                    stars.append(imports.from_base(stmt.module or "", stmt.level))
                else:
                    imports.add_from(stmt.module or "", stmt.level, pairs, top_scope)
                import_lines.append(segment(stmt))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(stmt.body, False)
            elif isinstance(stmt, ast.ClassDef):
                visit(stmt.body, top_scope)
            elif isinstance(stmt, ast.Global):
                declared.update(stmt.names)
            else:
                for field in _COMPOUND_BODIES:
                    for child in getattr(stmt, field, ()):
                        visit(child.body if isinstance(child, _CLAUSES) else [child], top_scope)

    visit(tree.body, True)
    import_text = "\n".join(import_lines).encode("utf-8", "surrogatepass")
    texts: dict[str, list[str]] = {}
    statements: dict[str, list[ast.stmt]] = {}
    for stmt in tree.body:
        if isinstance(stmt, _DEFINITIONS):
            name = stmt.name
        elif not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            # An import runs the imported module's statements, which are checked where they are.
            name = MODULE
        else:
            continue
        texts.setdefault(name, []).append(segment(stmt))
        statements.setdefault(name, []).append(stmt)
    texts.setdefault(MODULE, [])
    names: dict[str, frozenset[str]] = {}
    triggered = set()
    for name, parts in texts.items():
        body = "".join(parts)
        names[name] = frozenset(_SPACE.sub("", m) if "." in m else m for m in _DOTTED.findall(body))
        spells = bool(body) and mentions(body.encode("utf-8", "surrogatepass") + b"\n" + import_text)
        if spells or (any(m in body for m in seed_methods) and _calls_method(statements[name], seed_methods)):
            triggered.add(name)
    return Outline(
        names=names,
        triggered=frozenset(triggered),
        bindings={k: frozenset(v) for k, v in imports.bindings.items()},
        stars=tuple(stars),
        imports=tuple(sorted(set(imports.aliases.values()))),
        variables=_module_variables(statements.get(MODULE, [])) | declared,
    )


def _module_variables(own: list[ast.stmt]) -> frozenset[str]:
    """The names the module's own statements bind (a loop variable, an `except ... as`, a walrus
    included); more than that is harmless."""
    found: set[str] = set()
    for node in (n for stmt in own for n in ast.walk(stmt)):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(getattr(node, "name", None), str):  # except ... as, match captures
            found.add(node.name)
        elif isinstance(node, _MATCH_MAPPING) and node.rest:
            found.add(node.rest)
    return frozenset(found)


def _calls_method(statements: list[ast.stmt], methods: frozenset[str]) -> bool:
    """Does any of `statements` call `<something>.<method>(...)` for one of `methods`?"""
    for stmt in statements:
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in methods
            ):
                return True
    return False
