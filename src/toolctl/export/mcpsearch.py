"""The MCP form of deferred loading: ``tools/list`` with the eager tools plus two meta-tools.

``toolctl serve --search`` lists the eager tools, ``search_tools`` (a query in, the full MCP Tool
objects of the best matches out, in ``structuredContent.tools``) and ``call_tool`` (a tool's name
and arguments; the call goes through the same pipeline as a direct call). Deferred tools stay
callable by name. The definitions live here, in the core, so that ``toolctl export --budget``
measures exactly what the server lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolctl.catalog import Toolset, is_deferred
from toolctl.spec import ToolSpec

SEARCH_TOOLS = "search_tools"
CALL_TOOL = "call_tool"
MAX_LIMIT = 50
MAX_QUERY = 1000

SEARCH_TOOLS_DEF: dict[str, Any] = {
    "name": SEARCH_TOOLS,
    "title": "Search tools",
    "description": (
        "Find the tools for a task among the many this server offers (only a few are listed "
        "up front). Describe what you want to do; the result lists the best matching tools "
        "with their full definitions, or none when no tool fits. Call one with call_tool, or "
        "directly by its name."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_QUERY,
                "description": "What you want to do, in a few words.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": "How many tools to return at most (default 5).",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    "outputSchema": {
        "type": "object",
        "properties": {"tools": {"type": "array", "items": {"type": "object"}}},
        "required": ["tools"],
    },
    "annotations": {
        "title": "Search tools",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
}

CALL_TOOL_DEF: dict[str, Any] = {
    "name": CALL_TOOL,
    "title": "Call a tool",
    "description": (
        "Call a tool found with search_tools: give its name and its arguments (an object "
        "matching the tool's inputSchema). The call is checked and approved exactly as a "
        "direct call of that tool."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "description": "The tool's name."},
            "arguments": {"type": "object", "description": "The tool's arguments."},
        },
        "required": ["name", "arguments"],
        "additionalProperties": False,
    },
}

META_TOOLS = (SEARCH_TOOLS_DEF, CALL_TOOL_DEF)
META_NAMES = frozenset({SEARCH_TOOLS, CALL_TOOL})


def search_listing(
    listing: Mapping[str, Any], specs: Mapping[str, ToolSpec], catalog: Mapping[str, Toolset]
) -> dict[str, Any]:
    """``listing`` (a ``tools/list`` result of ``specs``) with only the eager tools, followed by
    ``search_tools`` and ``call_tool``; every other key of the result kept."""
    eager = [
        t
        for t in listing["tools"]
        if not (t["name"] in specs and is_deferred(specs[t["name"]], catalog))
    ]
    return {**listing, "tools": [*eager, *(dict(t) for t in META_TOOLS)]}
