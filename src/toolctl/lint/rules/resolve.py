"""Resolve (only with ``--resolve``, because it imports user code): handlers that really load.

``validate`` finds handler modules without importing them. These rules import each handler and
hook, and check that it is callable with the runtime's calling convention.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from toolctl.diagnostics import Severity
from toolctl.lint.context import LintContext
from toolctl.lint.model import Hit, RuleSet
from toolctl.spec import ToolSpec

RULES = RuleSet("resolve")


def _refs(tool: ToolSpec) -> Iterator[tuple[tuple[str, ...], str]]:
    if tool.handler:
        yield ("handler",), tool.handler
    for hook, ref in tool.hooks.items():
        yield ("hooks", hook), ref


def _load(ref: str, ctx: LintContext) -> tuple[Any, str | None]:
    from toolctl.errors import HandlerReferenceError
    from toolctl.references import load_object

    try:
        return load_object(ref, ctx.python_path), None
    except HandlerReferenceError as exc:  # load_object names the reference and the cause
        return None, exc.message
    except Exception as exc:  # getattr on user objects may still raise anything
        return None, f"{type(exc).__name__}: {exc}"


@RULES.tool(
    "TL801", "handler-import", Severity.ERROR, "handler or hook that fails to import (--resolve)"
)
def handler_import(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """Importing the handler (or a hook) fails, or the attribute does not exist.

    ``validate`` only finds the module file; importing it can still fail (a missing dependency,
    an error at import time). The tool would fail on every call. Runs only with ``--resolve``.
    """
    for path, ref in _refs(tool):
        _obj, problem = _load(ref, ctx)
        if problem:
            yield Hit(
                tool,
                path,
                f"{ref!r} does not import: {problem}",
                hint="fix the module, or the pythonPath setting",
            )


@RULES.tool(
    "TL802",
    "handler-not-callable",
    Severity.ERROR,
    "handler or hook that is not callable (--resolve)",
)
def handler_not_callable(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """The handler (or a hook) imports but is not a function or other callable.

    Usually the reference names a module attribute that is a value, not the function.
    Runs only with ``--resolve``.
    """
    for path, ref in _refs(tool):
        obj, problem = _load(ref, ctx)
        if problem is None and not callable(obj):
            yield Hit(
                tool,
                path,
                f"{ref!r} is a {type(obj).__name__}, not a callable",
                hint="point the reference at a function",
            )


def _accepts(sig: inspect.Signature, count: int) -> bool:
    try:
        sig.bind(*([None] * count))
    except TypeError:
        return False
    return True


@RULES.tool(
    "TL803",
    "handler-signature",
    Severity.ERROR,
    "handler that cannot be called as fn(input) or fn(input, ctx) (--resolve)",
)
def handler_signature(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """The handler cannot be called as ``fn(input)`` or ``fn(input, ctx)``.

    The runtime passes the validated input, and the :class:`ToolContext` when the handler takes a
    second parameter. Any other required parameter makes every call fail.
    Runs only with ``--resolve``.
    """
    if not tool.handler:
        return
    obj, problem = _load(tool.handler, ctx)
    if problem or not callable(obj):
        return
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return  # builtins without a signature: cannot tell
    if not (_accepts(sig, 1) or _accepts(sig, 2)):
        yield Hit(
            tool,
            ("handler",),
            f"{tool.handler!r} has signature {sig}; the runtime calls fn(input) or fn(input, ctx)",
            hint="def handler(input, ctx): ...",
        )
