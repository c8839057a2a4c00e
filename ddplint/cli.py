"""The `ddplint` command."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ddplint import __version__
from ddplint.config import ConfigError, Settings, load_settings
from ddplint.diagnostics import INTERNAL_ERROR
from ddplint.pages import rule_page
from ddplint.report import FORMATS
from ddplint.rules import ALL_RULES, RULES_BY_CODE
from ddplint.runner import RunOptions, run
from ddplint.selection import enabled_codes

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _split_codes(values: tuple[str, ...]) -> list[str]:
    return [code.strip().upper() for value in values for code in value.split(",") if code.strip()]


def _fail(message: str) -> None:
    click.echo(f"ddplint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="ddplint")
def main() -> None:
    """Find the code patterns that make PyTorch distributed training hang."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--output-format",
    type=click.Choice(sorted(FORMATS)),
    default="full",
    show_default=True,
    help="How findings are printed.",
)
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may change behaviour.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (ALL for every rule).")
@click.option("--extend-select", multiple=True, help="Codes or prefixes to enable on top of `select`.")
@click.option("--ignore", multiple=True, help="Codes or prefixes to disable.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to paths given explicitly too.")
@click.option("--config", "config_path", type=click.Path(), help="Read settings from this TOML file.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks of internal errors.")
def check(
    paths: tuple[str, ...],
    output_format: str,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    exit_zero: bool,
    force_exclude: bool,
    config_path: str | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """Check PATHS (files or folders; default: the current folder)."""
    targets = list(paths) or ["."]
    try:
        settings = load_settings(Path(config_path) if config_path else None, Path(targets[0]))
        _apply_cli_selection(settings, select, extend_select, ignore)
        enabled_codes(settings)
    except ConfigError as exc:
        _fail(str(exc))
        return
    missing = [p for p in targets if not Path(p).exists() and not Path(p).is_symlink()]
    if missing and len(missing) == len(targets):
        _fail(f"no such file or directory: {', '.join(missing)}")
    options = RunOptions(
        fix=fix and not diff, unsafe_fixes=unsafe_fixes, diff=diff, force_exclude=force_exclude
    )
    result = run(targets, settings, options)
    diagnostics = result.diagnostics
    if verbose:
        for d in diagnostics:
            if d.detail:
                click.echo(d.detail, err=True)
    if diff:
        sys.stdout.write("".join(result.diffs))
        if not quiet:
            count = len(result.diffs)
            click.echo(
                f"Would fix {count} file{'s' if count != 1 else ''}." if count else "No fixes available.",
                err=True,
            )
        if _has_internal_error(diagnostics):
            sys.exit(EXIT_ERROR)
        sys.exit(EXIT_FINDINGS if result.diffs else EXIT_CLEAN)
    sys.stdout.write(FORMATS[output_format](diagnostics))
    if output_format in ("full", "concise") and not quiet:
        click.echo(_summary(diagnostics, result.fixed, fix))
    if _has_internal_error(diagnostics):
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if diagnostics and not exit_zero else EXIT_CLEAN)


def _apply_cli_selection(settings: Settings, select, extend_select, ignore) -> None:
    if select:
        settings.select = _split_codes(select)
    if extend_select:
        settings.extend_select += _split_codes(extend_select)
    if ignore:
        settings.ignore += _split_codes(ignore)


def _summary(diagnostics, fixed: int, fixing: bool) -> str:
    remaining = len(diagnostics)
    if fixing and fixed:
        return f"Found {fixed + remaining} errors ({fixed} fixed, {remaining} remaining)."
    if not remaining:
        return "All checks passed!"
    fixable = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability.value == "safe")
    unsafe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability.value == "unsafe")
    lines = [f"Found {remaining} error{'s' if remaining != 1 else ''}."]
    if fixable:
        lines.append(f"[*] {fixable} fixable with the `--fix` option.")
    if unsafe:
        lines.append(f"{unsafe} more fixable with the `--unsafe-fixes` option.")
    return "\n".join(lines)


def _has_internal_error(diagnostics) -> bool:
    return any(d.code == INTERNAL_ERROR for d in diagnostics)


@main.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
def rule(code: str | None, show_all: bool) -> None:
    """Print the page of rule CODE (e.g. DDP005), or list all rules."""
    if show_all or not code:
        for r in ALL_RULES:
            click.echo(f"{r.code}  {r.name:<36} {r.summary}")
        return
    key = code.upper()
    if key not in RULES_BY_CODE:
        _fail(f"unknown rule code `{code}` (see `ddplint rule --all`)")
    page = rule_page(key)
    if page is None:
        _fail(f"no page found for {key}")
    click.echo(page, nl=not page.endswith("\n"))
