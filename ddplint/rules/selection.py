"""Which rules run: `select`/`extend-select`/`ignore` by code prefix, and per-file ignores."""

from __future__ import annotations

import fnmatch
import os
from functools import lru_cache
from pathlib import PurePath
from typing import TYPE_CHECKING

from ddplint.rules import ALL_RULES
from ddplint.settings import ConfigError, Settings

if TYPE_CHECKING:
    import pathspec


def _matches(code: str, selector: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def validate_selectors(selectors: list[str], option: str) -> None:
    for selector in selectors:
        if selector != "ALL" and not any(_matches(r.code, selector) for r in ALL_RULES):
            raise ConfigError(f"invalid value `{selector}` for `{option}`: no rule code starts with it")


def enabled_codes(settings: Settings) -> frozenset[str]:
    validate_selectors(settings.select, "select")
    validate_selectors(settings.extend_select, "extend-select")
    validate_selectors(settings.ignore, "ignore")
    for codes in settings.per_file_ignores.values():
        validate_selectors(codes, "per-file-ignores")
    chosen = set()
    for rule in ALL_RULES:
        selected = any(_matches(rule.code, s) for s in settings.select + settings.extend_select)
        if selected and not any(_matches(rule.code, s) for s in settings.ignore):
            chosen.add(rule.code)
    return frozenset(chosen)


def ignored_for_file(settings: Settings, filename: str) -> list[str]:
    """Codes ignored for one file by `per-file-ignores` globs, matched relative to the config.

    A pattern matches as an fnmatch glob (`*` crosses folders: `tests/*`), as a gitignore-style
    pattern (`**/test_*.py`, `scripts/`), or against the file name alone (`__init__.py`).
    """
    if not settings.per_file_ignores:
        return []
    path = PurePath(os.path.abspath(filename))
    try:
        relative = path.relative_to(os.path.abspath(settings.root))
    except ValueError:
        relative = PurePath(filename)
    text = relative.as_posix()
    codes: list[str] = []
    for pattern, ignored in settings.per_file_ignores.items():
        if _glob_matches(pattern, text, path.name):
            codes.extend(ignored)
    return codes


def _glob_matches(pattern: str, relative: str, name: str) -> bool:
    if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern):
        return True
    return _gitignore_pattern(pattern).match_file(relative)


@lru_cache(maxsize=256)
def _gitignore_pattern(pattern: str) -> pathspec.GitIgnoreSpec:
    import pathspec  # only for per-file ignores (see ddplint.settings.compile_patterns)

    return pathspec.GitIgnoreSpec.from_lines([pattern])
