"""Azure Pipelines logging commands: one `##vso[task.logissue ...]` issue a finding."""

from __future__ import annotations

from ddplint.diagnostics import Diagnostic


def escape_data(text: str) -> str:
    """The task library's escaping of a command's message."""
    return text.replace("%", "%AZP25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """The task library's escaping of a property value: `;` ends it and `]` ends the command."""
    return escape_data(text).replace("]", "%5D").replace(";", "%3B")


def log_issue(d: Diagnostic) -> str:
    properties: dict[str, object] = {
        "type": "warning" if d.severity == "warning" else "error",
        "sourcepath": d.filename,
        "linenumber": d.file_row,
    }
    message = d.message
    if d.cell is None:
        properties["columnnumber"] = d.location.column
    else:  # the row of the notebook's JSON; the message says where in which cell
        message = f"{d.place}: {message}"
    properties["code"] = d.code
    spelled = "".join(f"{key}={escape_property(str(value))};" for key, value in properties.items())
    return f"##vso[task.logissue {spelled}]{escape_data(message)}\n"


def render_azure(diagnostics: list[Diagnostic]) -> str:
    return "".join(log_issue(d) for d in diagnostics)
