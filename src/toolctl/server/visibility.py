"""Which runs of the shared history an MCP client may see and act on.

The run history is shared by every front end: ``toolctl run``, the Python API, ``toolctl test``
and the MCP server write to the same database. A client of the server must never list
(``tasks/list``), read (``tasks/get``, ``tasks/result``), answer (``tasks/update``, approval and
resume round trips) or cancel (``tasks/cancel``) a run it did not start through this server
kind: a run started from the command line awaiting the operator's approval is not an MCP
client's to approve. Such runs are treated exactly as runs that do not exist.

With OAuth (``auth:``), runs belong to the principal whose token started them (its issuer and
subject): one user never sees another's, nor the runs of a server without OAuth (recorded
without a principal), and those are the only runs a client of such a server sees.

This module is the one place that decides it; every handler goes through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolctl.runtime.history.records import Origin

if TYPE_CHECKING:
    from toolctl.principal import Principal
    from toolctl.runtime.history.records import RunRecord


def visible_over_mcp(record: RunRecord, principal: Principal | None = None) -> bool:
    """Whether the MCP client ``principal`` (None: a server without OAuth) may see and act on
    the run ``record``: only runs started over MCP (rows from before origins were recorded
    have none, and are not), by the same principal."""
    return record.origin == Origin.MCP and same_principal(record.principal, principal)


def same_principal(recorded: object, principal: Principal | None) -> bool:
    """Whether a run's recorded principal (:meth:`Principal.public`) is ``principal``: the
    same issuer and subject (the client it used may differ: it is the same user)."""
    if principal is None:
        return recorded is None
    return (
        isinstance(recorded, dict)
        and recorded.get("iss") == principal.issuer
        and recorded.get("sub") == principal.subject
    )
