"""Settings: what a run is asked to do, with the defaults. Loading and checking them: ddplint.config."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec


class ConfigError(Exception):
    """A configuration problem; the message names the file and key."""


DEFAULT_EXCLUDES = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".hg",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
    ".ddplint_cache",
)

# What a project may launch with (accelerate's distributed types): collectives that exist only
# under some of them (accelerate's save_state under DeepSpeed or FSDP) are reported for those.
DISTRIBUTED_TYPES = ("DDP", "FSDP", "DEEPSPEED", "MEGATRON_LM", "XLA")

# Bigger files are reported (E902) instead of parsed: generated data, not training code.
DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024


@dataclass
class Settings:
    select: list[str] = field(default_factory=lambda: ["ALL"])
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    collectives: list[str] = field(default_factory=list)
    rank_predicates: list[str] = field(default_factory=list)
    distributed_types: list[str] = field(default_factory=lambda: list(DISTRIBUTED_TYPES))
    # In bytes; 0 for no limit.
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    # The folder the config came from; globs and relative paths are anchored there.
    root: Path = field(default_factory=Path.cwd)
    config_file: Path | None = None


def compile_patterns(lines: list[str]) -> tuple[pathspec.GitIgnoreSpec, list[str]]:
    """A spec of the valid patterns, and the invalid ones (git ignores those too)."""
    # Imported here: pathspec's own imports take a tenth of a second, and a run on the files
    # it is given needs no pattern (see ddplint.run.discovery).
    import pathspec

    good, bad = [], []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line]).match_file("x")
        except Exception:  # pathspec's own errors and re.error, by pattern
            bad.append(line)
        else:
            good.append(line)
    return pathspec.GitIgnoreSpec.from_lines(good), bad
