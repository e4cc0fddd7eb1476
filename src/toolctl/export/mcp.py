"""MCP ``tools/list`` results: the tool list an MCP client sees, for a chosen protocol revision.

``mcp_protocol="2025-11-25"`` (default, the newest revision with the ``initialize`` handshake) or
``"2026-07-28"`` (stateless; ``outputSchema`` may be any schema, and the result carries
``resultType``, ``ttlMs`` and ``cacheScope``, set by the ``mcp_ttl_ms`` and ``mcp_cache_scope``
options). ``providerOptions.mcp`` is merged into each tool (e.g. ``execution`` in 2025-11-25).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolctl.diagnostics import Diagnostic
from toolctl.export.base import ExportOptions, Findings, ToolListExporter, check_choice
from toolctl.export.common import description
from toolctl.export.loading import allowed_problems
from toolctl.export.names import MCP_NAME, META_KEY, check_mcp_name_edges
from toolctl.export.viewschema import view_schema
from toolctl.sensitive import shown_schema
from toolctl.spec import ToolSpec

PROTOCOLS = ("2025-11-25", "2026-07-28")
_FIELDS = frozenset(
    {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons", "_meta"}
)


def _output_schema(spec: ToolSpec, protocol: str, out: Findings) -> Any:
    schema = delivered_output_schema(spec)
    if schema is None:
        if spec.output_schema is not None:
            out.warning(
                "TX224",
                "outputSchema left out: a background tool's MCP result is read from the run "
                "history, which keeps the transcript form of its output, and "
                "transform.transcript.output is not a pick/omit/redact a schema can follow",
                ("transform", "transcript", "output"),
                hint="use pick/omit for the transcript output, or drop background",
            )
        return None
    if protocol == "2025-11-25" and not (
        isinstance(schema, dict) and schema.get("type") == "object"
    ):
        out.warning(
            "TX223",
            "outputSchema left out: MCP 2025-11-25 requires its root to be type: object",
            ("outputSchema",),
            hint="wrap the output in an object, or export with protocol 2026-07-28",
        )
        return None
    return schema


_EDITS = frozenset({"pick", "omit"})


def delivered_output_schema(spec: ToolSpec) -> Any:
    """The schema of the output an MCP client receives from ``spec``, never with its sensitive
    fields (the client's ``structuredContent`` has none): its ``outputSchema``, or for a
    background tool (whose result comes from the run history) the schema of what the history
    keeps: its json model view when ``toModelOutput`` picks or omits fields, else the transcript
    form (None when no schema describes it)."""
    return shown_schema(_kept_output_schema(spec))


def _kept_output_schema(spec: ToolSpec) -> Any:
    if not spec.background or spec.output_schema is None:
        return spec.output_schema
    shaped = spec.to_model_output
    if isinstance(shaped, dict) and shaped.get("type") == "json" and shaped.keys() & _EDITS:
        # The history keeps a json model view that picks or omits fields: clients get it.
        edits = {k: v for k, v in shaped.items() if k in _EDITS}
        return view_schema(edits, spec.output_schema)
    transcript = spec.transform.get("transcript") or {}
    return view_schema(transcript.get("output"), spec.output_schema)


class McpExporter(ToolListExporter):
    """A ``tools/list`` result (``{"tools": [...]}``) for one MCP protocol revision."""

    name = "mcp"
    description = "MCP tools/list result (protocol 2025-11-25; 2026-07-28 on request)"
    label = "MCP"
    provider_keys = ("mcp",)
    generated_keys = _FIELDS

    def entry(self, spec: ToolSpec, options: ExportOptions, out: Findings) -> list[Any]:
        MCP_NAME.check(spec.name, out)
        check_mcp_name_edges(spec.name, out)
        protocol = options.mcp_protocol
        tool: dict[str, Any] = {"name": spec.name}
        if spec.title:
            tool["title"] = spec.title
        tool["description"] = description(spec, options, out)
        tool["inputSchema"] = spec.input_schema
        output = _output_schema(spec, protocol, out)
        if output is not None:
            tool["outputSchema"] = output
        if spec.annotations:
            tool["annotations"] = spec.annotations
        if spec.icons:
            tool["icons"] = list(spec.icons)
        # The contract digest lets a client pin what it reviewed (see toolctl.contract). A check
        # leaves it out unless providerOptions.mcp._meta is compared with it (see merge).
        overridden = spec.provider_options.get("mcp")
        digest = (
            ""
            if out.checking and not (isinstance(overridden, dict) and "_meta" in overridden)
            else _digest(spec)
        )
        tool["_meta"] = {**(spec.meta or {}), META_KEY: digest}
        self.merge_provider_options(spec, tool, out, _FIELDS | {"execution"})
        if protocol == "2025-11-25" and spec.background and "execution" not in tool:
            # A background tool may run as a task (toolctl serve answers task-augmented calls).
            tool["execution"] = {"taskSupport": "optional"}
        if protocol != "2025-11-25" and tool.pop("execution", None) is not None:
            out.warning(
                "TX211",
                f"providerOptions.mcp.execution left out: MCP {protocol} "
                "has no execution field (tasks moved to an extension)",
                ("providerOptions", "mcp", "execution"),
            )
        return [tool]

    def wrap(self, entries: list[Any], options: ExportOptions) -> Any:
        data: dict[str, Any] = {"tools": entries}
        if options.mcp_protocol == "2026-07-28":
            data["resultType"] = "complete"
            data["ttlMs"] = int(options.extra.get("mcp_ttl_ms", 0))
            data["cacheScope"] = str(options.extra.get("mcp_cache_scope", "public"))
        return data

    def finish(self, specs: Sequence[ToolSpec], options: ExportOptions) -> list[Diagnostic]:
        # tools/list has no deferred loading: `toolctl serve --search` is the MCP form of it
        out = check_choice("MCP protocol", options.mcp_protocol, PROTOCOLS)
        return out + allowed_problems("MCP", specs, options, supported=False)


EXPORTER = McpExporter()
export = EXPORTER.export
check = EXPORTER.check


def _digest(spec: ToolSpec) -> str:
    from toolctl.contract import contract_digest  # imported by an export, not by a check

    return contract_digest(spec)
