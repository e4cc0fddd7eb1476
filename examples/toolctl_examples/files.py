"""``write_file``: write a text file, but only inside a sandbox directory.

The sandbox comes from the request context (``sandbox``) or the ``TOOLCTL_SANDBOX`` environment
variable; without one the tool refuses to write. Paths are relative to the sandbox; absolute paths,
``..`` escapes and symlinks that lead outside are all refused after full resolution.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from toolctl_examples._context import Context, context_value

SANDBOX_ENV = "TOOLCTL_SANDBOX"
_FLAGS = {"create": os.O_EXCL, "overwrite": os.O_TRUNC, "append": os.O_APPEND}
# The path was checked after resolving symlinks; O_NOFOLLOW stops a symlink swapped in since.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class SandboxError(PermissionError):
    """The write would leave the sandbox, or no sandbox is configured."""


def write_file(data: dict[str, Any], ctx: Context | None = None) -> dict[str, Any]:
    """Write ``data["content"]`` to ``data["path"]`` inside the sandbox.

    ``mode`` is ``create`` (default: fail if the file exists), ``overwrite`` or ``append``.
    Returns the sandbox-relative path, the bytes written and the file's SHA-256 afterwards.
    """
    root = sandbox_root(ctx)
    target = resolve_inside(root, data["path"])
    mode = data.get("mode", "create")
    content: str = data["content"]
    existed = target.exists()
    if existed and target.is_dir():
        raise IsADirectoryError(f"{data['path']!r} is a directory in the sandbox")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(target, _FLAGS[mode] | os.O_WRONLY | os.O_CREAT | _NOFOLLOW, 0o644)
    except FileExistsError:
        raise FileExistsError(
            f"{data['path']!r} already exists; use mode 'overwrite' or 'append'"
        ) from None
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(content)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    return {
        "path": target.relative_to(root).as_posix(),
        "bytes": len(content.encode("utf-8")),
        "created": not existed,
        "sha256": digest,
    }


def sandbox_root(ctx: Context | None) -> Path:
    """The resolved sandbox directory (created if missing)."""
    configured = context_value(ctx, "sandbox") or os.environ.get(SANDBOX_ENV)
    if not configured:
        raise SandboxError(
            f'no sandbox directory: pass request context {{"sandbox": DIR}} or set {SANDBOX_ENV}'
        )
    root = Path(configured).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    return root.resolve()


def resolve_inside(root: Path, relative: str) -> Path:
    """``root / relative`` fully resolved; :class:`SandboxError` if it is not inside ``root``."""
    candidate = Path(relative)
    if candidate.is_absolute() or candidate.drive:
        raise SandboxError(f"{relative!r} is absolute; give a path relative to the sandbox")
    target = (root / candidate).resolve()
    if target == root or root not in target.parents:
        raise SandboxError(f"{relative!r} points outside the sandbox")
    return target
