"""ddplint: finds the code patterns that make PyTorch distributed training jobs hang.

The Python API::

    import ddplint

    for d in ddplint.lint_source(text, filename="train.py"):
        print(d.code, d.range.start.row, d.range.start.column, d.message, d.fix)

    diagnostics = ddplint.lint_paths(["src/"])  # like `ddplint check src/`
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Union

from ddplint._meta import __url__, __version__

if TYPE_CHECKING:
    from ddplint.config import Settings
    from ddplint.diagnostics import Diagnostic

    Config = Union[Settings, str, os.PathLike, None]

__all__ = ["__url__", "__version__", "lint_paths", "lint_source"]


def _settings(config: Config, start: Path | None) -> Settings:
    """A Settings object as given; a TOML file's settings; or, for None, the nearest config."""
    from ddplint.config import Settings, load_settings

    if isinstance(config, Settings):
        return config
    if config is not None:
        return load_settings(Path(config))
    return load_settings(None, start) if start is not None else Settings()


def lint_source(text: str, filename: str = "<stdin>.py", config: Config = None) -> list[Diagnostic]:
    """Check one module given as text, as if it were `filename`; the text is never read from disk.

    `config` is a `ddplint.config.Settings`, or the path of a `pyproject.toml` / `ddplint.toml`;
    by default the built-in defaults are used. Returns the findings sorted by position.
    Raises `ddplint.config.ConfigError` for an invalid configuration.
    """
    from ddplint.engine.checker import Linter
    from ddplint.run.buffer import buffer_source
    from ddplint.syntax.reading import LoadError

    linter = Linter(_settings(config, None))
    try:
        facts = linter.facts_for(buffer_source(filename, text))
    except LoadError as exc:
        return [exc.diagnostic]
    linter.project.add(facts)
    return linter.check(facts)


def lint_paths(paths: list[str | os.PathLike], config: Config = None) -> list[Diagnostic]:
    """Check files and folders as one project, like `ddplint check PATHS`; nothing is written.

    With `config` None, settings come from the nearest `pyproject.toml` with a `[tool.ddplint]`
    table above the first path, as the command line finds them.
    """
    from ddplint.run.runner import run

    targets = [str(p) for p in paths] or ["."]
    return run(targets, _settings(config, Path(targets[0]))).diagnostics
