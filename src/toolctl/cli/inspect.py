"""``toolctl list`` and ``toolctl show``: what the registry holds, without running anything."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolctl.cli import exitcodes
from toolctl.cli.complete import complete_tools
from toolctl.cli.options import (
    FormatOpt,
    OutputFormat,
    PacksOpt,
    PathAliasOpt,
    RegistryOpt,
    TagsOpt,
    ToolsArg,
    format_option,
    registry_path,
    split_targets,
)

if TYPE_CHECKING:
    from toolctl.catalog import Toolsets
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


def _row(spec: ToolSpec, toolsets: Toolsets) -> dict[str, Any]:
    from toolctl.catalog import loading_of
    from toolctl.contract.model import approval_of

    return {
        "name": spec.name,
        "title": spec.title,
        "annotations": spec.annotations,
        # true, false, or {"when": schema} (bundled)
        "requireApproval": approval_of(spec),
        "background": spec.background,
        "handler": spec.handler,
        "tags": list(spec.tags),
        "toolset": spec.toolset,
        "loading": loading_of(spec, toolsets),
        "enabled": spec.enabled,
        "origin": {"kind": spec.origin.kind, "name": spec.origin.name, "file": spec.origin.file},
        "location": str(spec.location),
    }


def list_tools(
    targets: ToolsArg = None,
    registry: RegistryOpt = None,
    fmt: FormatOpt = OutputFormat.text,
    all_: Annotated[bool, typer.Option("--all", "-a", help="Include disabled tools.")] = False,
    tag: TagsOpt = None,
    packs: PacksOpt = True,
) -> None:
    """List the tools: name, title, annotations, approval, handler, tags and origin.

    With toolsets or deferred tools in the registry, also each tool's toolset and loading.

    Disabled tools are left out (a note says how many) unless --all or named.

    Exit 0, or 1 when the registry has errors (the tools that loaded are still listed).
    """
    from toolctl.cli.registries import load, require_tool
    from toolctl.cli.render import console, note, print_diagnostics, print_json

    names, paths = split_targets(targets)
    loaded = load(registry, paths, packs=packs)
    print_diagnostics(loaded.diagnostics)
    for name in names:
        require_tool(loaded, name, "list", enabled=False)
    specs = loaded.select(names=names or None, tags=tag, include_disabled=all_ or bool(names))
    code = exitcodes.OK if loaded.ok else exitcodes.FINDINGS
    hidden = len(loaded.select(names=names or None, tags=tag, include_disabled=True)) - len(specs)
    if hidden and fmt is not OutputFormat.json:
        note(f"{hidden} disabled tool(s) not shown; toolctl list --all lists them too")
    if fmt is OutputFormat.json:
        print_json([_row(s, loaded.toolsets) for s in specs])
        raise typer.Exit(code)
    from rich.markup import escape

    from toolctl.catalog import loading_of
    from toolctl.cli.render import table as make_table
    from toolctl.cli.runview import escape_controls

    # Toolset and loading columns only for a registry that uses them: the usual table stays narrow.
    catalog = any(s.toolset is not None or s.loading is not None for s in specs)
    extra = ("toolset", "loading") if catalog else ()
    table = make_table(
        "name", "title", "annotations", "approval", "handler", "tags", *extra, "origin"
    )
    for s in specs:
        name = s.name if s.enabled else f"{s.name} (disabled)"
        shown = (s.toolset or "-", loading_of(s, loaded.toolsets)) if catalog else ()
        cells = (
            name,
            s.title or "",
            _annotations(s),
            ("conditional" if s.approval_when is not None else "required")
            if s.require_approval
            else "-",
            s.handler or "(none)",
            ", ".join(s.tags),
            *shown,
            str(s.origin),
        )
        # YAML text is data: never rich markup ("[/]"), never terminal control sequences
        table.add_row(*(escape(escape_controls(c, keep_newlines=False)) for c in cells))
    console().print(table)
    raise typer.Exit(code)


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
    name: Annotated[
        str,
        typer.Argument(metavar="TOOL", help="The tool to show.", autocompletion=complete_tools),
    ],
    registry: RegistryOpt = None,
    fmt: Annotated[
        OutputFormat,
        format_option("json (the default, for machines) or text: YAML, as tools are written."),
    ] = OutputFormat.json,
    packs: PacksOpt = True,
    path: PathAliasOpt = None,
) -> None:
    """Show one tool's full resolved declaration (bundled schemas, origin, digest)."""
    from toolctl.cli.registries import load, require_tool
    from toolctl.cli.render import print_json

    loaded = load(registry_path(registry, path), packs=packs)
    require_tool(loaded, name, "show", enabled=False)
    data = _resolved(loaded.get(name))
    if fmt is OutputFormat.text:
        import sys

        from toolctl.yamlsrc import dumps

        sys.stdout.write(dumps(data))
    else:
        print_json(data)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("list")(list_tools)
    app.command("show")(show)
