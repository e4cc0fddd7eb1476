"""Tools you did not write: OpenAPI operations and MCP servers as linted, locked YAML.

>>> from toolctl.imports import import_openapi
>>> report = import_openapi("petstore.yaml", "tools.d/petstore")  # doctest: +SKIP
>>> [p.name for p in report.files.written]  # doctest: +SKIP

The importers are core: they read the spec (or the upstream's ``tools/list``), write tool files
with :mod:`toolctl.imports.files` and return a report; they never print or exit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolctl.imports.files import Written, write_all
from toolctl.imports.openapi import Imported, Selection, default_dir, operations, read_spec

__all__ = ["ImportReport", "Imported", "Selection", "import_mcp", "import_openapi"]


@dataclass
class ImportReport:
    """What an import did: the files (and the change list), and each operation's outcome."""

    files: Written
    imported: list[Imported] = field(default_factory=list)

    @property
    def skipped(self) -> list[Imported]:
        """The operations not imported, each with its reason."""
        return [i for i in self.imported if i.skipped]


def import_openapi(
    spec: str | Path,
    directory: str | Path | None = None,
    *,
    selection: Selection | None = None,
) -> ImportReport:
    """Import the operations of the OpenAPI file ``spec`` into ``directory`` (default
    ``tools.d/<slug of info.title>``), merging with a previous import there."""
    from toolctl.imports.openapi import walk

    document = read_spec(Path(spec))
    chosen = selection or Selection()
    found = operations(document, chosen)
    target = Path(directory) if directory is not None else default_dir(document)
    every = {f"{m.upper()} {p}" for p, m, _, _ in walk(document)}
    files = write_all(target, "openapi", [i.declaration for i in found if not i.skipped], every)
    return ImportReport(files, found)


def import_mcp(
    target: list[str],
    directory: str | Path | None = None,
    *,
    name: str | None = None,
) -> ImportReport:
    """Import every tool of the MCP server ``target`` (a URL, or a command and its arguments)
    into ``directory`` (default ``tools.d/<name or the server's name>``), merging with a
    previous import there."""
    from toolctl.errors import UsageError
    from toolctl.imports.mcp import declarations
    from toolctl.imports.naming import slug
    from toolctl.upstream.session import connect

    if not target:
        raise UsageError("name the server: a URL, or `-- COMMAND [ARGS...]`")
    upstream: dict[str, object]
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        upstream = {"url": target[0]}
    else:
        upstream = {"command": target[0], "args": list(target[1:])}
    session = connect(upstream)
    try:
        tools = session.list_tools()
        server = str(session.server_info.get("name") or "")
    finally:
        session.close()
    tag = slug(name or server or "upstream")
    found, skipped = declarations(tools, upstream, tag)
    target_dir = Path(directory) if directory is not None else Path("tools.d") / tag
    every = {str(t.get("name")) for t in tools if isinstance(t, dict)}
    files = write_all(target_dir, "mcp", found, every)
    report = ImportReport(files)
    for declaration in found:
        report.imported.append(
            Imported("mcp", declaration["upstream"]["tool"], declaration["name"])
        )
    for label, why in skipped:
        report.imported.append(Imported("mcp", label, skipped=why))
    return report
