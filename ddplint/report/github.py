"""GitHub Actions workflow commands: one `::error ...::` annotation a finding."""

from __future__ import annotations

from ddplint.diagnostics import Diagnostic


def escape_data(text: str) -> str:
    """The toolkit's escaping of a command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """The toolkit's escaping of a property value: `:` and `,` separate properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic) -> str:
    level = "warning" if d.severity == "warning" else "error"
    properties: dict[str, object] = {"file": d.filename, "line": d.file_row}
    if d.cell is None:
        end = d.end_location
        properties |= {"col": d.location.column, "endLine": end.row, "endColumn": end.column}
    # In a notebook the annotation marks the row of its JSON that holds the line (columns there
    # are not the code's); the message says where in which cell.
    properties["title"] = f"ddplint ({d.code})"
    spelled = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    text = f"{d.filename}:{d.place}: {d.code} {d.message}"
    return f"::{level} {spelled}::{escape_data(text)}\n"


def render_github(diagnostics: list[Diagnostic]) -> str:
    return "".join(annotation(d) for d in diagnostics)
