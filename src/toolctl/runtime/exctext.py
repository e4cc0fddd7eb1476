"""The text of an exception raised by user code (handlers, hooks, transforms, approvers).

User code decides what ``str(exc)`` does: it may raise, or return 20 MB. Every place that puts
such an exception into a message, a note or a traceback goes through here, so the text is
bounded *before* anything expensive (secret scrubbing, storing, sending) sees it, and reading
it never turns a failed tool into a crashed toolctl.
"""

from __future__ import annotations

MAX_MESSAGE_CHARS = 2_000  # what an error message keeps of an exception's text


def bounded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text``, cut to ``limit`` characters with a note of how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def message_of(exc: BaseException, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``str(exc)`` bounded to ``limit`` characters; a placeholder when ``__str__`` fails."""
    try:
        text = str(exc)
    except Exception:  # any failure of user code's __str__; BaseException (exit) propagates
        return "<str() failed>"
    return bounded(text, limit)


def describe(exc: BaseException, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``"TypeName: message"`` of ``exc``, bounded and never raising."""
    return f"{type(exc).__name__}: {message_of(exc, limit)}"
