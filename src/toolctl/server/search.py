"""``serve --search``: answering ``search_tools`` and unwrapping ``call_tool``.

``call_tool`` is not a way around anything: it is turned into the ``tools/call`` of the tool it
names before the call handler looks the tool up, so approval, validation, scopes, tasks and the
run history see exactly the call a client would have made directly.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio

from toolctl.export.mcpsearch import CALL_TOOL, MAX_LIMIT, MAX_QUERY, META_NAMES, SEARCH_TOOLS
from toolctl.server.results import error_result
from toolctl.server.strictwire import RAW_ARGUMENTS_KEY

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext

    from toolctl.server.toolset import ToolSet

DEFAULT_LIMIT = 5


def _query(arguments: Any) -> tuple[str, int] | str:
    """(query, limit) from ``search_tools`` arguments, or what is wrong with them."""
    if not isinstance(arguments, dict) or set(arguments) - {"query", "limit"}:
        return 'search_tools takes {"query": "...", "limit": N} (limit optional)'
    query, limit = arguments.get("query"), arguments.get("limit", DEFAULT_LIMIT)
    if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY:
        return f"search_tools needs a non-empty query of at most {MAX_QUERY} characters"
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        return f"search_tools: limit must be a whole number from 1 to {MAX_LIMIT}"
    return query, limit


async def search_result(
    ctx: ServerRequestContext[Any, Any], toolset: ToolSet, params: types.CallToolRequestParams
) -> dict[str, Any]:
    """The ``search_tools`` result: the full MCP Tool objects of the best matching served
    tools in ``structuredContent.tools`` (empty when none fits), and the same as JSON text."""
    from toolctl.search import search

    asked = _query(params.arguments or {})
    if isinstance(asked, str):
        return error_result(asked)
    query, limit = asked
    registry = toolset.registry
    # Tools the registry has but this server does not serve (--tool/--tag) must not take the
    # places of served ones: ask for that many more, then keep the served.
    unserved = max(0, len(registry.tools) - len(toolset.specs))
    hits = await anyio.to_thread.run_sync(search, registry, query, limit + unserved)
    names = [h.name for h in hits if h.name in toolset.specs][:limit]
    tools = toolset.tool_entries(names, ctx.protocol_version or "2025-11-25")
    found = {"tools": tools}
    text = json.dumps(found, ensure_ascii=False, separators=(",", ":"))
    return {"content": [{"type": "text", "text": text}], "structuredContent": found}


def unwrap_call(
    ctx: ServerRequestContext[Any, Any], toolset: ToolSet, params: types.CallToolRequestParams
) -> types.CallToolRequestParams | dict[str, Any]:
    """The ``tools/call`` of the tool a ``call_tool`` call names, or an error result the model
    can read (bad arguments, an unknown tool, a meta-tool)."""
    if RAW_ARGUMENTS_KEY in (ctx.meta or {}):
        # the transport found a duplicate key: refused as a direct call's would be
        return error_result("call_tool: the arguments hold a duplicate key; send every key once")
    arguments = params.arguments or {}
    name, inner = arguments.get("name"), arguments.get("arguments")
    if set(arguments) - {"name", "arguments"} or not isinstance(name, str):
        return error_result('call_tool takes {"name": "TOOL", "arguments": {...}}')
    if not isinstance(inner, dict):
        return error_result(f"call_tool: arguments for {name} must be an object")
    if name in META_NAMES:
        return error_result(f"call_tool cannot call {name}; call it directly")
    if name not in toolset.specs:
        return error_result(
            f"call_tool: no tool named {name!r} is served here; find one with {SEARCH_TOOLS}"
        )
    return params.model_copy(update={"name": name, "arguments": inner})


__all__ = ["CALL_TOOL", "SEARCH_TOOLS", "search_result", "unwrap_call"]
