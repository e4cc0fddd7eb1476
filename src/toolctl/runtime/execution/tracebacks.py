"""A failed handler's own traceback: its frames, not the runtime's, asyncio's or the thread
machinery's, chained exceptions included, bounded. For the developer (``toolctl runs show``,
``run --traceback``, the server's log), never for the model."""

from __future__ import annotations

import traceback
from pathlib import Path

from toolctl.runtime.exctext import MAX_MESSAGE_CHARS, bounded
from toolctl.runtime.execution.invoke import HandlerExit

MAX_TRACEBACK_CHARS = 16_000
# Frames of these files are the machinery around a handler, not the developer's code.
_STDLIB = Path(traceback.__file__).resolve().parent
_MACHINERY = (
    str(Path(__file__).resolve().parents[1]),  # toolctl/runtime/, every sub-package
    str(_STDLIB / "asyncio"),
    str(_STDLIB / "concurrent"),
    str(_STDLIB / "threading.py"),
)


def _bound_message(node: traceback.TracebackException) -> None:
    """Cut the exception text of one traceback node before it is formatted: a handler may
    raise with 20 MB of message, which every later step (scrubbing first) would pay for.
    ``_str`` is where TracebackException keeps that text (already computed safely, a
    ``__str__`` that raises gives a placeholder); left alone if a Python lacks it."""
    text = getattr(node, "_str", None)
    if isinstance(text, str) and len(text) > MAX_MESSAGE_CHARS:
        node._str = bounded(text)  # type: ignore[attr-defined]


def user_traceback(exc: BaseException) -> str | None:
    """The traceback of ``exc`` with the frames of the developer's code only (file:line, the
    source line), chained exceptions included; None when no frame is the developer's."""
    if isinstance(exc, HandlerExit):
        exc = exc.original
    tb = traceback.TracebackException.from_exception(exc)
    found = False
    seen: set[int] = set()
    pending = [tb]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        kept = [f for f in node.stack if not str(Path(f.filename).resolve()).startswith(_MACHINERY)]
        _bound_message(node)
        found = found or bool(kept)
        node.stack = traceback.StackSummary.from_list(kept)
        pending.extend(n for n in (node.__cause__, node.__context__) if n is not None)
    if not found:
        return None
    text = "".join(tb.format())
    if len(text) > MAX_TRACEBACK_CHARS:
        text = "...\n" + text[-MAX_TRACEBACK_CHARS:]
    return text
