"""``toolctl serve``: the registry as an MCP server (the only package that imports ``mcp``).

Importing this package is cheap; the SDK loads when a server is built. Use :func:`require_sdk`
to fail with an install hint when the optional extra is missing.
"""

from __future__ import annotations

import importlib.util

from toolctl.errors import ToolctlError
from toolctl.install import install_hint

INSTALL_HINT = install_hint("mcp")


class SdkMissingError(ToolctlError):
    """The MCP SDK (the ``mcp`` extra of toolctl-registry) is not installed."""


def require_sdk() -> None:
    """Raise :class:`SdkMissingError` (with the install command) unless ``mcp`` is importable."""
    if importlib.util.find_spec("mcp") is None:
        raise SdkMissingError(
            "toolctl serve needs the MCP Python SDK, which is not installed",
            hint=f"install it with: {INSTALL_HINT}",
        )
