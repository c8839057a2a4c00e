"""Which rules run: `select`/`extend-select`/`ignore` by code prefix, and per-file ignores."""

from __future__ import annotations

import fnmatch
from pathlib import PurePath

from ddplint.config import ConfigError, Settings
from ddplint.rules import ALL_RULES


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
    """Codes ignored for one file by `per-file-ignores` globs (matched relative to the config)."""
    if not settings.per_file_ignores:
        return []
    path = PurePath(filename)
    try:
        relative = path.relative_to(settings.root) if path.is_absolute() else path
    except ValueError:
        relative = path
    text = relative.as_posix()
    codes: list[str] = []
    for pattern, ignored in settings.per_file_ignores.items():
        if fnmatch.fnmatch(text, pattern) or fnmatch.fnmatch(path.name, pattern):
            codes.extend(ignored)
    return codes
