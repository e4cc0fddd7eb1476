"""The built-in handler of a tool with an ``upstream:`` block: one ``tools/call`` on the
process's session with that server (:func:`toolctl.upstream.session.session_for`).

Under ``--locked`` the upstream's live definition is compared with the lock before every call
(:mod:`toolctl.upstream.drift`); a changed tool is refused with the change classes named. The
upstream's answer becomes the run's output: its ``structuredContent`` when the tool declares an
``outputSchema``, else its text (or its content blocks when they are not all text).
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from toolctl.upstream.connection import INHERITED_ENV, UpstreamError
from toolctl.upstream.session import CALL_TIMEOUT_S, session_for

if TYPE_CHECKING:
    from toolctl.contract import LockEntry
    from toolctl.spec import ToolSpec

MAX_ERROR_CHARS = 2000


class DriftRefused(UpstreamError):
    """The upstream's live definition differs from the lock (``--locked``)."""


def process_env(spec: ToolSpec) -> dict[str, str]:
    """The environment a stdio upstream gets beyond :data:`INHERITED_ENV`: its ``env`` and the
    tool's ``secrets`` (read from toolctl's environment at call time)."""
    block = spec.upstream or {}
    env = {str(k): str(v) for k, v in block.get("env", {}).items()}
    for name in spec.secrets:
        if name in os.environ and name not in INHERITED_ENV:
            env[name] = os.environ[name]
    return env


class UpstreamHandler:
    """Calls one upstream tool (an async callable taking the input)."""

    __slots__ = ("locked", "spec")

    def __init__(self, spec: ToolSpec, locked: LockEntry | None) -> None:
        self.spec = spec
        self.locked = locked

    async def __call__(self, arguments: dict[str, Any]) -> Any:
        """Check drift when locked, call the tool, and return its output."""
        block = self.spec.upstream or {}
        session = await asyncio.to_thread(session_for, block, process_env(self.spec))
        if self.locked is not None:
            tools = await asyncio.to_thread(session.list_tools)
            self.refuse_drift(tools)
        timeout = float(block.get("timeout", CALL_TIMEOUT_S))
        result = await session.arequest(
            "tools/call", {"name": block["tool"], "arguments": arguments}, timeout
        )
        return self.output_of(result)

    @property
    def tool(self) -> str:
        """The tool's name on the upstream."""
        return str((self.spec.upstream or {}).get("tool"))

    def refuse_drift(self, tools: list[Any]) -> None:
        """Raise :class:`DriftRefused` when the live definition left the lock."""
        from toolctl.upstream.drift import live_changes

        assert self.locked is not None
        changes = live_changes(self.spec, tools, self.locked)
        if changes:
            classes = sorted({c.kind.value for c in changes})
            listed = "; ".join(f"{c.kind.value} {c.code} {c.message}" for c in changes[:5])
            raise DriftRefused(
                f"the upstream tool {self.tool!r} changed since toolctl.lock "
                f"({', '.join(classes)}): {listed}; refusing under --locked",
                hint="review it: `toolctl import mcp` into the same directory, then `toolctl lock`",
            )

    def output_of(self, result: dict[str, Any]) -> Any:
        """The run's output for a ``tools/call`` result (an error result raises)."""
        content: list[Any] = result.get("content") or []
        if not isinstance(content, list):
            content = []
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        if result.get("isError") is True:
            text = " ".join(str(t) for t in texts)[:MAX_ERROR_CHARS] or "(no message)"
            raise UpstreamError(f"the upstream tool {self.tool!r} failed: {text}")
        if self.spec.output_schema is not None and isinstance(
            result.get("structuredContent"), dict
        ):
            return result["structuredContent"]
        if content and len(texts) == len(content):
            return "\n".join(str(t) for t in texts)
        return content
