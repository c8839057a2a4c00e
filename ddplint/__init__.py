"""ddplint: finds the code patterns that make PyTorch distributed training jobs hang."""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"
__url__ = "https://github.com/ddplint/ddplint"

if TYPE_CHECKING:
    from ddplint.config import Settings
    from ddplint.diagnostics import Diagnostic

__all__ = ["__version__", "lint_paths", "lint_source"]


def lint_source(
    text: str, filename: str = "<stdin>.py", settings: Settings | None = None
) -> list[Diagnostic]:
    """Check one module given as text; nothing is read from or written to disk."""
    from ddplint.linter import Linter, LoadError, read_source

    linter = Linter(settings)
    try:
        facts = linter.facts_for(read_source(filename, text.encode("utf-8")))
    except LoadError as exc:
        return [exc.diagnostic]
    linter.project.add(facts)
    return linter.check(facts)


def lint_paths(paths: list[str], settings: Settings | None = None) -> list[Diagnostic]:
    """Check files and folders as one project, like `ddplint check PATHS`."""
    from ddplint.config import Settings
    from ddplint.runner import run

    return run([str(p) for p in paths], settings or Settings()).diagnostics
