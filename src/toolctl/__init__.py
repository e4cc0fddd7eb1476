"""toolctl: a declarative registry of LLM tools.

The public API: :func:`load` a registry from ``tools.d`` files, then list, call, export or lint its
tools. Importing this package is cheap: heavy modules load when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
DISTRIBUTION = "toolctl-registry"
"""The name on the package index (``pip install toolctl-registry``); the command and the import
package are ``toolctl`` (an unrelated project owns that distribution name)."""

__all__ = [
    "DeclarationError",
    "Diagnostic",
    "Registry",
    "Severity",
    "ToolSpec",
    "ToolctlError",
    "__version__",
    "load",
    "load_project",
]

if TYPE_CHECKING:
    from toolctl.diagnostics import Diagnostic, Severity
    from toolctl.errors import DeclarationError, ToolctlError
    from toolctl.registry import Registry
    from toolctl.spec import ToolSpec

_LAZY = {
    "DeclarationError": "toolctl.errors",
    "Diagnostic": "toolctl.diagnostics",
    "Severity": "toolctl.diagnostics",
    "ToolctlError": "toolctl.errors",
    "Registry": "toolctl.registry",
    "ToolSpec": "toolctl.spec",
    "load": "toolctl.loader",
    "load_project": "toolctl.loader",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolctl' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
