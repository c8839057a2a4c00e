"""Finding the files to check (Python, notebooks): paths given, folders walked, excludes honoured."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ddplint.settings import Settings, compile_patterns
from ddplint.syntax.reading import NOTEBOOK_SUFFIX

if TYPE_CHECKING:
    import pathspec

# Python files, and Jupyter notebooks (their code cells read as one module).
CHECKED_SUFFIXES = (".py", NOTEBOOK_SUFFIX)


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    # (path as given, reason) for paths that do not exist or cannot be walked.
    errors: list[tuple[str, str]] = field(default_factory=list)


def _exclude_spec(settings: Settings) -> pathspec.GitIgnoreSpec:
    return compile_patterns(settings.exclude + settings.extend_exclude)[0]


def _gitignore(folder: Path) -> pathspec.GitIgnoreSpec | None:
    path = folder / ".gitignore"
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except (OSError, ValueError):
        return None
    return compile_patterns(lines)[0]


def is_excluded(path: Path, settings: Settings, spec: pathspec.GitIgnoreSpec | None = None) -> bool:
    """Whether a path (file or folder) matches the configured excludes.

    Patterns are matched against the path relative to the configuration's folder, so that the
    folders above the project (a checkout under `~/build/`) never exclude it; a path outside that
    folder is matched by its own components as given.
    """
    spec = spec or _exclude_spec(settings)
    relative = _relative_to_root(path, settings.root)
    if relative is not None:
        if relative.as_posix() == ".":
            return False
        candidates = [relative.as_posix(), *relative.parts]
    elif path.is_absolute():
        candidates = [path.name]
    else:
        candidates = [path.as_posix(), *path.parts]
    return any(spec.match_file(c) for c in candidates if c not in ("", ".", ".."))


def _relative_to_root(path: Path, root: Path) -> Path | None:
    for resolve in (os.path.abspath, os.path.realpath):
        try:
            return Path(resolve(path)).relative_to(resolve(root))
        except ValueError:
            continue
    return None


def discover(paths: list[str], settings: Settings, *, force_exclude: bool = False) -> Discovery:
    """Expand `paths` into files. Files named explicitly are kept unless `force_exclude`."""
    result = Discovery()
    specs: list[pathspec.GitIgnoreSpec] = []  # compiled once a path is matched: none for named files
    seen: set[Path] = set()

    def spec() -> pathspec.GitIgnoreSpec:
        if not specs:
            specs.append(_exclude_spec(settings))
        return specs[0]

    def add(path: Path) -> None:
        key = Path(os.path.realpath(path))
        if key not in seen:
            seen.add(key)
            result.files.append(path)

    for given in paths:
        path = Path(given)
        problem = _unusable(path)
        if problem:
            result.errors.append((given, problem))
            continue
        if path.is_dir():
            if force_exclude and is_excluded(path, settings, spec()):
                continue
            _walk(path, settings, spec(), add, result)
        elif not (force_exclude and is_excluded(path, settings, spec())):
            add(path)
    return result


def _unusable(path: Path) -> str | None:
    """Why a path given on the command line cannot be checked, or None."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
        if os.path.islink(path):
            return f"broken symbolic link (to {os.readlink(path)})"
        if exc.errno == errno.ENOENT:
            return "no such file or directory"
        return exc.strerror or str(exc)
    except ValueError as exc:  # e.g. a NUL character in the name
        return str(exc)
    return None


def _inside(path: Path, root: str) -> bool:
    """Whether `path`, with every symbolic link followed, is within `root` (also resolved)."""
    target = os.path.realpath(path)
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def _walk(top: Path, settings: Settings, spec, add, result: Discovery) -> None:
    ignores: list[tuple[Path, pathspec.GitIgnoreSpec]] = []

    def onerror(exc: OSError) -> None:
        result.errors.append((exc.filename or str(top), exc.strerror or str(exc)))

    root = os.path.realpath(top)
    for folder, dirs, files in os.walk(top, onerror=onerror, followlinks=False):
        here = Path(folder)
        ignore = _gitignore(here)
        if ignore is not None:
            ignores.append((here, ignore))

        def ignored(path: Path, is_dir: bool) -> bool:
            if spec.match_file(path.name) or spec.match_file(path.name + "/" if is_dir else path.name):
                return True
            for base, patterns in ignores:
                try:
                    rel = path.relative_to(base).as_posix()
                except ValueError:
                    continue
                if patterns.match_file(rel + "/" if is_dir else rel):
                    return True
            return False

        # os.walk does not descend into symbolic links to folders (followlinks=False).
        kept = [name for name in sorted(dirs) if not ignored(here / name, True)]
        dirs[:] = kept
        for name in sorted(files):
            if not name.endswith(CHECKED_SUFFIXES):
                continue
            path = here / name
            # Symbolic links that dangle, loop or lead out of the folder given are skipped.
            if path.is_symlink() and (_unusable(path) or not _inside(path, root)):
                continue
            if not ignored(path, False):
                add(path)


def file_size(path: Path) -> int:
    """Bytes in `path`, 0 when it cannot be read: a stand-in for the work a file will cost."""
    try:
        return path.stat().st_size
    except OSError:
        return 0
