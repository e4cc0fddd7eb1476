"""The tools of a running MCP server as tool declarations with an ``upstream:`` block.

:func:`declaration_of` is the one mapping from an upstream's tool definition to a declaration:
the import writes it, and the drift check (:mod:`toolctl.upstream.drift`) rebuilds it from the
live definition to compare with the lock. An upstream is untrusted input: a definition that
is not a usable tool (no name, a schema that is not one, oversized) is skipped with the reason;
its description is written as sent, and `toolctl lint` runs the poisoning rules on it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from toolctl.imports.naming import Names, snake
from toolctl.imports.openapi import as_dict

MAX_DESCRIPTION = 16_384
MAX_DEFINITION_BYTES = 512 * 1024
_MCP_NAME = re.compile(r"[A-Za-z0-9._-]{1,128}")
_ANNOTATIONS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def tool_name(upstream_name: str) -> str:
    """The local name of an upstream tool: snake_case, provider-valid."""
    from toolctl.imports.naming import operation_name

    return operation_name(upstream_name, "tool", upstream_name) if snake(upstream_name) else "tool"


def problem(tool: dict[str, Any]) -> str | None:
    """Why an upstream definition cannot be imported, or None."""
    name = tool.get("name")
    if not isinstance(name, str) or not _MCP_NAME.fullmatch(name):
        return f"tool name {str(name)[:80]!r} is not a valid MCP tool name"
    if len(json.dumps(tool)) > MAX_DEFINITION_BYTES:
        return f"definition is over {MAX_DEFINITION_BYTES // 1024} KiB"
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return "inputSchema is not an object schema"
    from toolctl.schema import check_schema

    for key in ("inputSchema", "outputSchema"):
        if key in tool and check_schema(tool[key]):
            return f"{key} is not a valid JSON Schema"
    return None


def declaration_of(
    tool: dict[str, Any], upstream: dict[str, Any], name: str, tag: str
) -> dict[str, Any]:
    """The declaration for the upstream definition ``tool`` (checked by :func:`problem`)."""
    text = tool.get("description")
    text = text.strip()[:MAX_DESCRIPTION] if isinstance(text, str) and text.strip() else ""
    out: dict[str, Any] = {"toolctl": 1, "name": name}
    title = tool.get("title")
    annotations = as_dict(tool.get("annotations"))
    if not isinstance(title, str):
        title = annotations.get("title")
    if isinstance(title, str) and title.strip():
        out["title"] = title.strip()[:200]
    out["description"] = text or f"The {tool['name']} tool of the {tag} MCP server."
    out["inputSchema"] = tool["inputSchema"]
    if isinstance(tool.get("outputSchema"), dict):
        out["outputSchema"] = tool["outputSchema"]
    out["upstream"] = {**upstream, "tool": tool["name"]}
    hints = {k: annotations[k] for k in _ANNOTATIONS[1:] if isinstance(annotations.get(k), bool)}
    if hints:
        out["mcp"] = {"annotations": hints}
    out["tags"] = [tag]
    out["x-import"] = {"kind": "mcp", "operation": tool["name"]}
    return out


def declarations(
    tools: list[Any], upstream: dict[str, Any], tag: str
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Declarations for every importable tool, and (name, reason) for the others."""
    names = Names()
    out: list[dict[str, Any]] = []
    skipped: list[tuple[str, str]] = []
    for tool in tools:
        if not isinstance(tool, dict):
            skipped.append((repr(tool)[:80].strip("'"), "not a tool definition"))
            continue
        why = problem(tool)
        if why is not None:
            skipped.append((str(tool.get("name"))[:80], why))
            continue
        out.append(declaration_of(tool, upstream, names.claim(tool_name(tool["name"])), tag))
    return out, skipped
