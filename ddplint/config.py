"""Loading settings: `[tool.ddplint]` in pyproject.toml (or ddplint.toml), checked key by key."""

from __future__ import annotations

import os
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ddplint.rules.selection import enabled_codes
from ddplint.settings import DEFAULT_EXCLUDES, DISTRIBUTED_TYPES, ConfigError, Settings, compile_patterns

__all__ = ["DEFAULT_EXCLUDES", "ConfigError", "Settings", "load_settings"]

_LIST_KEYS = (
    "select",
    "ignore",
    "extend-select",
    "exclude",
    "extend-exclude",
    "collectives",
    "rank-predicates",
    "distributed-types",
)
_KNOWN_KEYS = frozenset((*_LIST_KEYS, "per-file-ignores", "max-file-size"))


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` with a `[tool.ddplint]` table."""
    # realpath, unlike Path.resolve, does not raise on a symbolic link loop.
    start = Path(os.path.realpath(start))
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
                raise ConfigError(f"{path}: not valid TOML: {exc}") from None
            if "ddplint" in data.get("tool", {}):
                return path
    return None


def load_settings(config_path: Path | None = None, start: Path | None = None) -> Settings:
    path = config_path if config_path is not None else find_pyproject(start or Path.cwd())
    if path is None:
        return Settings()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("tool", {}).get("ddplint", {})
    if path.name != "pyproject.toml" and not table:
        table = data  # a ddplint.toml / .ddplint.toml holds the keys at top level
    return settings_from_table(table, Path(path))


def settings_from_table(table: dict, path: Path) -> Settings:
    settings = Settings(root=path.resolve().parent, config_file=path)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.ddplint] must be a table")
    for key, value in table.items():
        if key not in _KNOWN_KEYS:
            known = ", ".join(sorted(_KNOWN_KEYS))
            raise ConfigError(f"{path}: unknown key `{key}` in [tool.ddplint] (known keys: {known})")
        attr = key.replace("-", "_")
        if key == "per-file-ignores":
            if not isinstance(value, dict) or not all(
                isinstance(v, list) and all(isinstance(c, str) for c in v) for v in value.values()
            ):
                raise ConfigError(
                    f"{path}: `per-file-ignores` must be a table of glob = [codes], got {value!r}"
                )
            settings.per_file_ignores = {k: list(v) for k, v in value.items()}
            continue
        if key == "max-file-size":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(
                    f"{path}: `max-file-size` must be a number of bytes (0: no limit), got {value!r}"
                )
            settings.max_file_size = value
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: `{key}` must be a list of strings, got {value!r}")
        if key in ("exclude", "extend-exclude"):
            bad = compile_patterns(list(value))[1]
            if bad:
                raise ConfigError(f"{path}: `{key}` has an invalid pattern: {bad[0]!r}")
        if key == "distributed-types":
            check_distributed_types(value, f"{path}: `distributed-types`")
        if key == "exclude":
            settings.exclude = list(value)
        else:
            setattr(settings, attr, list(value))
    _check_codes(settings, path)
    return settings


def _check_codes(settings: Settings, path: Path) -> None:
    """Name the file when a configured code matches no rule."""
    try:
        enabled_codes(settings)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def check_distributed_types(values: list[str], where: str) -> None:
    """Every name one of DISTRIBUTED_TYPES, and at least one."""
    unknown = [v for v in values if v not in DISTRIBUTED_TYPES]
    if unknown or not values:
        known = ", ".join(DISTRIBUTED_TYPES)
        got = f"unknown type {unknown[0]!r}" if unknown else "an empty list"
        raise ConfigError(f"{where} takes some of {known}; got {got}")
