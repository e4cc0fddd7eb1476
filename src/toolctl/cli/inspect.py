"""``toolctl list`` and ``toolctl show``: what the registry holds, without running anything."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolctl.cli.options import OutputFormat

if TYPE_CHECKING:
    from toolctl.spec import ToolSpec

_HINTS = (
    ("readOnlyHint", "read-only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
    ("openWorldHint", "open-world"),
)


def _annotations(spec: ToolSpec) -> str:
    words = [label for key, label in _HINTS if spec.annotations.get(key)]
    return ", ".join(words) or "-"


def _row(spec: ToolSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "title": spec.title,
        "annotations": spec.annotations,
        "requireApproval": spec.require_approval,
        "background": spec.background,
        "handler": spec.handler,
        "tags": list(spec.tags),
        "enabled": spec.enabled,
        "origin": {"kind": spec.origin.kind, "name": spec.origin.name, "file": spec.origin.file},
        "location": str(spec.location),
    }


def list_tools(
    path: Annotated[Path | None, typer.Argument(help="Tool file or directory.")] = None,
    fmt: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="Output format.")
    ] = OutputFormat.text,
    all_: Annotated[bool, typer.Option("--all", "-a", help="Include disabled tools.")] = False,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", help="Only tools with this tag.")
    ] = None,
) -> None:
    """List the tools: name, title, annotations, approval, handler, tags and origin."""
    from toolctl.cli.render import console, print_diagnostics, print_json
    from toolctl.loader import load_registry

    registry = load_registry(path)
    print_diagnostics(registry.diagnostics)
    specs = registry.select(tags=tag, include_disabled=all_)
    if fmt is OutputFormat.json:
        print_json([_row(s) for s in specs])
        return
    from toolctl.cli.render import table as make_table

    table = make_table("name", "title", "annotations", "approval", "handler", "tags", "origin")
    for s in specs:
        name = s.name if s.enabled else f"{s.name} (disabled)"
        table.add_row(
            name,
            s.title or "",
            _annotations(s),
            "required" if s.require_approval else "-",
            s.handler or "(none)",
            ", ".join(s.tags),
            str(s.origin),
        )
    console().print(table)


def _resolved(spec: ToolSpec) -> dict[str, Any]:
    from toolctl.spec import SCHEMA_KEYS

    data = dict(spec.raw)
    data.pop("toolctl", None)
    for key in SCHEMA_KEYS:
        if key in data:
            data[key] = spec.schema(key)
    data["x-toolctl"] = {
        "origin": str(spec.origin),
        "location": str(spec.location),
        "digest": spec.digest,
    }
    return data


def show(
    name: Annotated[str, typer.Argument(help="Tool name.")],
    path: Annotated[
        Path | None, typer.Option("--path", "-p", help="Tool file or directory.")
    ] = None,
) -> None:
    """Show one tool's full resolved declaration (bundled schemas, origin, digest) as JSON."""
    from toolctl.cli.render import print_json
    from toolctl.loader import load_registry

    registry = load_registry(path)
    print_json(_resolved(registry.get(name)))


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("list")(list_tools)
    app.command("show")(show)
