"""Which runs of the shared history an MCP client may see and act on.

The run history is shared by every front end: ``toolctl run``, the Python API, ``toolctl test``
and the MCP server write to the same database. A client of the server must never list
(``tasks/list``), read (``tasks/get``, ``tasks/result``), answer (``tasks/update``, approval and
resume round trips) or cancel (``tasks/cancel``) a run it did not start through this server
kind: a run started from the command line awaiting the operator's approval is not an MCP
client's to approve. Such runs are treated exactly as runs that do not exist.

This module is the one place that decides it. Per-principal identity (which client, which
user) extends :func:`visible_over_mcp` with a ``principal`` check; every caller already goes
through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolctl.runtime.records import Origin

if TYPE_CHECKING:
    from toolctl.runtime.records import RunRecord


def visible_over_mcp(record: RunRecord) -> bool:
    """Whether an MCP client may see and act on the run ``record``: only runs started over
    MCP (rows from before origins were recorded have none, and are not)."""
    return record.origin == Origin.MCP
