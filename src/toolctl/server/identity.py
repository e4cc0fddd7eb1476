"""Who sent an MCP request: the :class:`~toolctl.principal.Principal` that
:class:`toolctl.server.resource.ProtectedResource` verified, carried in the request's ASGI
scope to every handler."""

from __future__ import annotations

from typing import Any

from toolctl.principal import Principal

PRINCIPAL_KEY = "toolctl.principal"


def principal_of(request: Any) -> Principal | None:
    """The verified caller of an HTTP request (None over stdio, or without OAuth)."""
    scope = getattr(request, "scope", None)
    found = scope.get(PRINCIPAL_KEY) if isinstance(scope, dict) else None
    return found if isinstance(found, Principal) else None


def caller(ctx: Any) -> Principal | None:
    """The verified caller of the MCP request ``ctx`` (a ``ServerRequestContext``)."""
    return principal_of(getattr(ctx, "request", None))
