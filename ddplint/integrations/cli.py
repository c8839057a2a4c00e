"""The `ddplint` command."""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from ddplint._meta import __version__
from ddplint.config import ConfigError, Settings, check_distributed_types, load_settings
from ddplint.diagnostics import INTERNAL_ERROR, IO_ERROR, input_error
from ddplint.report import FORMAT_NAMES, render
from ddplint.report.statistics import render_fixes, render_statistics
from ddplint.rules import ALL_RULES, RULES_BY_CODE
from ddplint.rules.pages import rule_page
from ddplint.rules.selection import enabled_codes
from ddplint.run.add_noqa import add_noqa_to_files
from ddplint.run.buffer import check_buffer
from ddplint.run.cache.findings import caches_of
from ddplint.run.discovery import is_excluded
from ddplint.run.group import fixes_diff
from ddplint.run.runner import RunOptions, run

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
    _tolerant_output()


def entry() -> None:
    """The `ddplint` command, ended without tearing the heap down.

    A run over a large project holds millions of syntax-tree objects; freeing them one by one
    at interpreter exit takes seconds and serves nothing. Output is flushed, then the process
    ends at once (files are written and closed before the run returns).

    For the same reason the cycle collector stays off: the run pauses it while trees are built
    (see group.collector_paused), and the first collection after that walks every object built
    meanwhile, 0.7 s on 420 modules, to free nothing the exit would not. The language server,
    which lives on, turns it back on.
    """
    gc.disable()
    try:
        main()
        code = EXIT_CLEAN
    except SystemExit as exc:
        code = _exit_status(exc.code)
    if sys.gettrace() is not None or sys.getprofile() is not None:
        sys.exit(code)  # a profiler or coverage tool writes its data at exit
    for stream in (sys.stdout, sys.stderr):
        # A closed pipe (`| head`): nothing more to show.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _exit_status(code: object) -> int:
    """What `sys.exit(code)` would make the exit status."""
    if code is None:
        return EXIT_CLEAN
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _tolerant_output() -> None:
    """File names and source lines may hold what the terminal cannot show (a non-UTF-8 name,
    CJK on a cp1252 console): print it escaped rather than fail."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            # A stream that cannot change is left as it is.
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--output-format",
    type=click.Choice(FORMAT_NAMES),
    default="full",
    show_default=True,
    help="How findings are printed.",
)
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may change behaviour.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option("--add-noqa", is_flag=True, help="Add a `# noqa: CODE` comment for every finding, in place.")
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (ALL for every rule).")
@click.option("--extend-select", multiple=True, help="Codes or prefixes to enable on top of `select`.")
@click.option("--ignore", multiple=True, help="Codes or prefixes to disable.")
@click.option(
    "--distributed-types",
    help="What the project launches with, comma-separated (DDP, FSDP, DEEPSPEED, MEGATRON_LM, XLA; "
    "default: all): collectives that exist only under other types are not reported.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to paths given explicitly too.")
@click.option("--config", "config_path", type=click.Path(), help="Read settings from this TOML file.")
@click.option(
    "--stdin-filename",
    help="Read the source from stdin (path `-` or none) and report it under this file name.",
)
@click.option("--statistics", is_flag=True, help="Print how many findings each code has, not each finding.")
@click.option("--show-fixes", is_flag=True, help="List what `--fix` fixed, per file and code.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks of internal errors.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    help="Worker processes, each checking whole groups of modules that import each other "
    "(default: the CPU count).",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write `.ddplint_cache/`.")
@click.option(
    "--no-prefilter", is_flag=True, hidden=True, help="Parse every file, even those no rule can fire in."
)
def check(
    paths: tuple[str, ...],
    output_format: str,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    add_noqa: bool,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    distributed_types: str | None,
    exit_zero: bool,
    force_exclude: bool,
    config_path: str | None,
    stdin_filename: str | None,
    statistics: bool,
    show_fixes: bool,
    quiet: bool,
    verbose: bool,
    no_prefilter: bool,
    no_cache: bool,
    jobs: int | None,
) -> None:
    """Check PATHS (files or folders; default: the current folder; `-`: stdin)."""
    reading_stdin = list(paths) == ["-"] or (stdin_filename is not None and not paths)
    if "-" in paths and not reading_stdin:
        _fail("`-` (stdin) cannot be combined with other paths")
    targets = [stdin_filename or "-"] if reading_stdin else (list(paths) or ["."])
    if add_noqa and (fix or diff or reading_stdin):
        other = "--fix" if fix else "--diff" if diff else "stdin"
        _fail(f"--add-noqa cannot be combined with {other}")
    try:
        start = Path(targets[0]) if targets[0] != "-" else Path.cwd()
        settings = load_settings(Path(config_path) if config_path else None, start)
        _apply_cli_selection(settings, select, extend_select, ignore)
        if distributed_types is not None:
            types = [t.strip() for t in distributed_types.split(",") if t.strip()]
            check_distributed_types(types, "--distributed-types")
            settings.distributed_types = types
        enabled_codes(settings)
    except ConfigError as exc:
        _fail(str(exc))
        return
    if reading_stdin:
        report = Report(output_format, statistics, show_fixes, quiet, exit_zero, settings.root)
        check_stdin(
            targets[0],
            settings,
            report,
            fix=fix,
            unsafe_fixes=unsafe_fixes,
            diff=diff,
            force_exclude=force_exclude,
        )
        return
    missing = [p for p in targets if not Path(p).exists() and not Path(p).is_symlink()]
    if missing and len(missing) == len(targets):
        _fail(f"no such file or directory: {', '.join(missing)}")
    options = RunOptions(
        fix=fix and not diff,
        unsafe_fixes=unsafe_fixes,
        diff=diff,
        force_exclude=force_exclude,
        prefilter=not no_prefilter,
        cache=not no_cache,
        jobs=jobs,
    )
    result = run(targets, settings, options)
    diagnostics = result.diagnostics
    if verbose:
        for d in diagnostics:
            if d.detail:
                click.echo(d.detail, err=True)
    if add_noqa:
        _add_noqa(diagnostics, quiet)
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
    report = Report(output_format, statistics, show_fixes, quiet, exit_zero, settings.root)
    report.emit(diagnostics, result.fixed, fix, result.fixed_codes)


def _add_noqa(diagnostics, quiet: bool) -> None:
    """Write the comments, say what could not be done and how many were added; then exit."""
    outcome = add_noqa_to_files(diagnostics)
    for problem in outcome.problems:
        click.echo(f"ddplint: warning: {problem}", err=True)
    if not quiet:
        count = outcome.added
        click.echo(f"Added {count} noqa directive{'s' if count != 1 else ''}.", err=True)
    if _has_internal_error(diagnostics):
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if outcome.problems else EXIT_CLEAN)


@dataclass
class Report:
    """How findings are shown, and the exit code they give."""

    output_format: str
    statistics: bool = False
    show_fixes: bool = False
    quiet: bool = False
    exit_zero: bool = False
    # Where project-relative paths start: the configuration's folder, else the current one.
    root: Path | None = None

    @property
    def is_text(self) -> bool:
        return self.output_format in ("full", "concise", "grouped")

    def emit(self, diagnostics, fixed: int, fixing: bool, fixed_codes, *, to_stderr: bool = False) -> None:
        """Print the findings (or their statistics), the fixes and the summary; then exit."""
        out = sys.stderr if to_stderr else sys.stdout
        if self.statistics:
            out.write(render_statistics(diagnostics, as_json=self.output_format == "json"))
        else:
            out.write(render(self.output_format, diagnostics, self.root or Path.cwd()))
        if self.show_fixes and fixing:
            # Machine-readable formats keep stdout to themselves.
            (out if self.is_text else sys.stderr).write(render_fixes(fixed_codes))
        if self.is_text and not self.quiet and not self.statistics:
            click.echo(_summary(diagnostics, fixed, fixing), err=to_stderr)
        if _has_internal_error(diagnostics):
            sys.exit(EXIT_ERROR)
        sys.exit(EXIT_FINDINGS if diagnostics and not self.exit_zero else EXIT_CLEAN)


def check_stdin(
    filename: str,
    settings: Settings,
    report: Report,
    *,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    force_exclude: bool,
) -> None:
    """Check the source on stdin as `filename`; with --fix, print the fixed source to stdout."""
    data = sys.stdin.buffer.read()
    if force_exclude and filename != "-" and is_excluded(Path(filename), settings):
        if fix:
            sys.stdout.buffer.write(data)
        sys.exit(EXIT_CLEAN)
    result = check_buffer(filename, data, settings, fix=fix or diff, unsafe_fixes=unsafe_fixes)
    diagnostics = result.diagnostics
    if result.fix_error:
        diagnostics.append(input_error(IO_ERROR, filename, result.fix_error))
    fixed = sum(result.fixed_codes.values())
    if diff:
        if result.facts is not None and result.fixed_text != result.facts.source.text:
            after = result.fixed_source or result.facts.source
            sys.stdout.write(fixes_diff(result.facts.source, after, result.fixed_text or ""))
            sys.exit(EXIT_FINDINGS)
        sys.exit(EXIT_ERROR if _has_internal_error(diagnostics) else EXIT_CLEAN)
    if fix:
        # stdout carries the fixed source, byte for byte as it came (encoding, BOM, newlines).
        if result.facts is not None and result.fixed_text is not None:
            written = result.fixed_source or result.facts.source
            sys.stdout.buffer.write(written.to_bytes(result.fixed_text))
        else:
            sys.stdout.buffer.write(data)
        sys.stdout.flush()
    report.emit(diagnostics, fixed, fix, {filename: result.fixed_codes}, to_stderr=fix)


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
@click.argument("paths", nargs=-1, type=click.Path())
def clean(paths: tuple[str, ...]) -> None:
    """Remove ddplint's caches (`.ddplint_cache/`) from PATHS (default: the current folder), the
    folders below them, and the project each belongs to."""
    missing = False
    found: set[Path] = set()
    for start in [Path(p) for p in paths] or [Path(".")]:
        if not start.exists():
            click.echo(f"ddplint: {start}: no such file or folder", err=True)
            missing = True
            continue
        found.update(caches_of(start))
    failed = False
    for folder in sorted(found):
        shutil.rmtree(folder, ignore_errors=True)
        if folder.exists():  # a file we may not remove (permissions, a busy mount)
            click.echo(f"ddplint: {folder}: could not be removed entirely", err=True)
            failed = True
        else:
            click.echo(f"Removed {folder}")
    if not found and not missing:
        click.echo("No cache found.")
    if missing or failed:
        raise SystemExit(EXIT_ERROR)


@main.command()
def server() -> None:
    """Run the language server over stdio (needs `pip install 'ddplint[lsp]'`)."""
    try:
        from ddplint.integrations.server import serve
    except ImportError as exc:
        _fail(f"`ddplint server` needs pygls 2 ({exc}); install it with: pip install 'ddplint[lsp]'")
        return
    gc.enable()  # long-lived: see `entry`
    serve()


@main.command()
@click.option("--stop", is_flag=True, help="Ask the running daemon to exit.")
@click.option(
    "--idle",
    type=click.FloatRange(min=1.0),
    help="Exit after this many seconds without a request (default: 30 minutes).",
)
@click.option("--warm", "warm_file", hidden=True)  # given by the flake8 plugin that starts it
@click.option("--warm-budget", type=float, default=1.0, hidden=True)
def daemon(stop: bool, idle: float | None, warm_file: str | None, warm_budget: float) -> None:
    """Answer the flake8 plugin from a warm process (`ddplint-daemon = true` starts it)."""
    from ddplint.integrations import daemon as served

    if stop:
        click.echo("stopped" if served.stop() else "no daemon was running")
        return
    gc.enable()  # long-lived: see `entry`
    first = None if warm_file is None else served.first_request(warm_file, warm_budget)
    problem = served.serve(served.IDLE if idle is None else idle, first)
    if problem:
        _fail(f"cannot serve: {problem}")


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
