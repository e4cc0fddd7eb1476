"""The MCP shape of a tool: one definition shared by ``toolctl export mcp`` and ``toolctl serve``.

Pure functions of a :class:`~toolctl.spec.ToolSpec`; no I/O and no import of the MCP SDK. The
result is a ``Tool`` object of protocol revision 2025-11-25 (the newest with the ``initialize``
handshake, read by every current client).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolctl.spec import ToolSpec

PROTOCOL_VERSION = "2025-11-25"


def tool_to_mcp(spec: ToolSpec) -> dict[str, Any]:
    """The MCP ``Tool`` dict for ``spec``: name, title (``title``, else ``annotations.title``),
    description, schemas, annotations, icons and ``_meta`` as declared (schemas bundled, so only
    ``#/...`` references remain).

    ``outputSchema`` is included only when its root is ``type: object`` (2025-11-25 requires
    it); a tool with another output schema still validates its output at run time.
    """
    tool: dict[str, Any] = {"name": spec.name}
    if spec.title:
        tool["title"] = spec.title
    tool["description"] = spec.description
    tool["inputSchema"] = copy.deepcopy(spec.input_schema)
    output = spec.output_schema
    if isinstance(output, dict) and output.get("type") == "object":
        tool["outputSchema"] = copy.deepcopy(output)
    if spec.annotations:
        tool["annotations"] = copy.deepcopy(spec.annotations)
    if spec.icons:
        tool["icons"] = [copy.deepcopy(icon) for icon in spec.icons]
    if spec.meta:
        tool["_meta"] = copy.deepcopy(spec.meta)
    return tool


def tools_list(specs: Iterable[ToolSpec]) -> dict[str, Any]:
    """A ``tools/list`` result for ``specs``, in the order given (callers pass name order)."""
    return {"tools": [tool_to_mcp(spec) for spec in specs]}
