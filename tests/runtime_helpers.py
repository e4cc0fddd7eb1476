"""A runtime of a test's own (:class:`toolctl.runtime.Runtime`), instead of patching the
process-wide resources of the default one."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from toolctl.runtime.resources import Runtime, use


@contextlib.contextmanager
def own_runtime(
    *, handler_threads: int | None = None, lease: float | None = None
) -> Iterator[Runtime]:
    """Inside the block, calls use a new :class:`Runtime` built with these options; it is
    closed (threads stopped, stores it opened closed) at the end."""
    rt = Runtime(handler_threads=handler_threads, lease=lease)
    try:
        with use(rt):
            yield rt
    finally:
        rt.close()
